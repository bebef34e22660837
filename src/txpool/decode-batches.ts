import type { DecodedTx, TxRules } from '../shared/ethereum/decoded-tx.js';
import type { RpcErrorObject } from '../shared/rpc/types.js';

type DecodeOutcome = { ok: DecodedTx } | { error: RpcErrorObject };

interface Waiting {
  raw: Uint8Array;
  rules: TxRules;
  resolve: (outcome: DecodeOutcome) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the transactions submitted in one tick into batches for the decode threads. A message to a
 * worker and its answer cost about as much as recovering one sender, so sending each transaction on
 * its own doubled the pool thread's work under load; the tick's transactions are split into at most
 * `threads` batches so that every decode thread still gets a share.
 */
export class DecodeBatches {
  private waiting: Waiting[] = [];

  constructor(
    private readonly decodeBatch: (raws: Uint8Array[], rules: TxRules) => Promise<DecodeOutcome[]>,
    private readonly threads: number,
  ) {}

  decode(raw: Uint8Array, rules: TxRules): Promise<DecodeOutcome> {
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => this.flush());
      this.waiting.push({ raw, rules, resolve, reject });
    });
  }

  private flush(): void {
    const waiting = this.waiting;
    this.waiting = [];
    // The rules change with the head: a batch holds transactions checked against the same rules.
    const byRules = new Map<TxRules, Waiting[]>();
    for (const entry of waiting) {
      const group = byRules.get(entry.rules);
      if (group === undefined) byRules.set(entry.rules, [entry]);
      else group.push(entry);
    }
    for (const [rules, group] of byRules) {
      const size = Math.ceil(group.length / this.threads);
      for (let start = 0; start < group.length; start += size) this.send(rules, group.slice(start, start + size));
    }
  }

  private send(rules: TxRules, batch: Waiting[]): void {
    this.decodeBatch(
      batch.map((entry) => entry.raw),
      rules,
    ).then(
      (outcomes) => batch.forEach((entry, i) => entry.resolve(outcomes[i]!)),
      (err: unknown) => batch.forEach((entry) => entry.reject(err)),
    );
  }
}
