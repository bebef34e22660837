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
 * Gathers submitted transactions into batches for the decode threads. A message to a worker and its
 * answer cost the pool thread about as much as recovering one sender costs a decode thread, so one
 * message each way per transaction doubled the pool's work under load. Batches are as large as the
 * load makes them: while every decode thread has a batch, new transactions wait and leave together
 * when one finishes; with a thread free they leave at the end of the tick, split among the free
 * threads. An idle pool adds no delay.
 */
export class DecodeBatches {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private flushScheduled = false;

  constructor(
    private readonly decodeBatch: (raws: Uint8Array[], rules: TxRules) => Promise<DecodeOutcome[]>,
    private readonly threads: number,
  ) {}

  decode(raw: Uint8Array, rules: TxRules): Promise<DecodeOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ raw, rules, resolve, reject });
      if (this.inFlight < this.threads) this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    const free = Math.max(1, this.threads - this.inFlight);
    // The rules change with the head: a batch holds transactions checked against the same rules.
    const byRules = new Map<TxRules, Waiting[]>();
    for (const entry of waiting) {
      const group = byRules.get(entry.rules);
      if (group === undefined) byRules.set(entry.rules, [entry]);
      else group.push(entry);
    }
    for (const [rules, group] of byRules) {
      const size = Math.ceil(group.length / free);
      for (let start = 0; start < group.length; start += size) this.send(rules, group.slice(start, start + size));
    }
  }

  private send(rules: TxRules, batch: Waiting[]): void {
    this.inFlight++;
    const done = () => {
      this.inFlight--;
      if (this.waiting.length > 0) this.scheduleFlush();
    };
    this.decodeBatch(
      batch.map((entry) => entry.raw),
      rules,
    ).then(
      (outcomes) => {
        done();
        batch.forEach((entry, i) => entry.resolve(outcomes[i]!));
      },
      (err: unknown) => {
        done();
        batch.forEach((entry) => entry.reject(err));
      },
    );
  }
}
