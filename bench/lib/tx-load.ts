/**
 * Pieces the transaction benchmarks share: sending a batch of pre-signed transactions, waiting for
 * accounts' nonces, reading JSON-RPC errors out of answer bodies, and following new blocks to see
 * when submitted transactions are included.
 */
import { toBeHex } from 'ethers';
import { onCleanup } from './cleanup.js';
import { jsonPostRequest, rpcBody, RpcClient, runClosedLoop } from './http-client.js';
import type { Account, SignedTx } from './signing.js';
import { MessageTally } from './stats.js';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Records the JSON-RPC error message of an answer body, if any; returns whether it was a success. */
export function tallyError(body: Buffer, errors: MessageTally): boolean {
  let parsed: { result?: unknown; error?: { message?: string } };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    errors.add(`unparseable answer: ${body.toString('utf8').slice(0, 80)}`);
    return false;
  }
  if (parsed.error !== undefined) {
    errors.add(parsed.error.message ?? JSON.stringify(parsed.error));
    return false;
  }
  return true;
}

/** Sends every transaction of `signed` (setup, not measured); throws when any is refused. */
export async function sendAllOrThrow(host: string, port: number, signed: SignedTx[], connections: number, what: string): Promise<void> {
  const errors = new MessageTally();
  let index = 0;
  const result = await runClosedLoop({ host, port, connections, maxRunMs: 60_000 }, () => {
    const tx = signed[index++];
    if (!tx) return undefined;
    return { bytes: jsonPostRequest(host, port, rpcBody('eth_sendRawTransaction', [tx.raw])), onAnswer: (answer) => tallyError(answer.body, errors) };
  });
  if (errors.total > 0 || result.transportErrors > 0) {
    throw new Error(`${what} failed: ${JSON.stringify(errors.entries())} ${result.transportErrorMessages.join('; ')}`);
  }
}

/** Waits until every account's mined nonce reached the one given beside it. */
export async function waitForNonces(rpc: RpcClient, accounts: Account[], nonces: bigint[], timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mined = await Promise.all(accounts.map(async (a) => BigInt(await rpc.call<string>('eth_getTransactionCount', [a.address, 'latest']))));
    if (mined.every((n, i) => n >= nonces[i]!)) return;
    if (Date.now() > deadline) throw new Error(`${what} were not mined within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

export interface ObservedBlock {
  number: number;
  timestamp: number;
  txCount: number;
  ours: number;
  /** ms since submission start when the bench first saw the block. */
  seenAtMs: number;
  /** Date.now() when the bench first saw the block: against `timestamp`, when its proposer's timer fired. */
  seenAtWallMs: number;
}

export interface InclusionFigures {
  included: number;
  notIncluded: number;
  blocks: ObservedBlock[];
  /** Transactions (all, ours or not) in the blocks from the first with one of ours to the last one. */
  txsInSpan: number;
  /** Timestamp of the last such block minus that of the block before the first, seconds. */
  spanSeconds: number;
  /** From submission start until the block with the last of ours was seen. */
  allIncludedAfterMs: number | undefined;
}

export interface InclusionWatch {
  fromBlock: number;
  /** Hashes of our transactions not yet seen in a block; emptied as they appear. */
  pending: Set<string>;
  /** Resolves when submission has ended. */
  submitted: Promise<void>;
  /** performance.now() at submission start. */
  submissionStarted: number;
  /** Seconds to keep looking once submission ended. */
  includeTimeoutSeconds: number;
  /** Ceiling on the whole watch, seconds. */
  maxSeconds: number;
  pollMs: number;
  /** Polling once submission ended, when nothing else loads the node (default `pollMs`). */
  pollMsAfterSubmission?: number;
}

/**
 * Follows new blocks from `fromBlock`, removing our transactions from `pending` as they appear, until
 * submission has ended and nothing is pending, or `includeTimeoutSeconds` after submission ended.
 */
export async function watchInclusion(rpc: RpcClient, watch: InclusionWatch): Promise<InclusionFigures> {
  const { pending, submissionStarted } = watch;
  const total = pending.size;
  const blocks: ObservedBlock[] = [];
  let deadline = Number.POSITIVE_INFINITY;
  let submissionEnded = false;
  void watch.submitted.then(() => {
    submissionEnded = true;
    deadline = performance.now() + watch.includeTimeoutSeconds * 1000;
  });
  const hardDeadline = performance.now() + watch.maxSeconds * 1000;
  let nextBlock = watch.fromBlock;
  let included = 0;
  let allIncludedAfterMs: number | undefined;
  while (performance.now() < hardDeadline) {
    if (submissionEnded && pending.size === 0) break;
    if (performance.now() > deadline) break;
    const headNumber = Number(await rpc.call<string>('eth_blockNumber'));
    for (; nextBlock <= headNumber; nextBlock++) {
      const block = await rpc.call<{ timestamp: string; transactions: string[] }>('eth_getBlockByNumber', [toBeHex(nextBlock), false]);
      let ours = 0;
      for (const hash of block.transactions) if (pending.delete(hash.toLowerCase())) ours++;
      included += ours;
      const seenAtMs = performance.now() - submissionStarted;
      const seenAtWallMs = Date.now();
      blocks.push({ number: nextBlock, timestamp: Number(block.timestamp), txCount: block.transactions.length, ours, seenAtMs, seenAtWallMs });
      if (ours > 0 && pending.size === 0) allIncludedAfterMs = seenAtMs;
    }
    await sleep(submissionEnded ? (watch.pollMsAfterSubmission ?? watch.pollMs) : watch.pollMs);
  }
  // "All included after" only means something when every transaction was found.
  if (pending.size > 0) allIncludedAfterMs = undefined;

  const ourBlocks = blocks.filter((b) => b.ours > 0);
  let txsInSpan = 0;
  let spanSeconds = 0;
  if (ourBlocks.length > 0) {
    const first = ourBlocks[0]!.number;
    const last = ourBlocks[ourBlocks.length - 1]!.number;
    for (const b of blocks) if (b.number >= first && b.number <= last) txsInSpan += b.txCount;
    const before =
      blocks.find((b) => b.number === first - 1)?.timestamp ??
      Number((await rpc.call<{ timestamp: string }>('eth_getBlockByNumber', [toBeHex(first - 1), false])).timestamp);
    spanSeconds = ourBlocks[ourBlocks.length - 1]!.timestamp - before;
  }
  return { included, notIncluded: total - included, blocks, txsInSpan, spanSeconds, allIncludedAfterMs };
}

/** Included tx/s: transactions in the span of our blocks ÷ their block-time span. */
export function includedRate(inclusion: InclusionFigures): number {
  return inclusion.spanSeconds > 0 ? inclusion.txsInSpan / inclusion.spanSeconds : Number.NaN;
}

/** "n (+Δs)" for each block holding one of ours: its fill and the timestamp gap to its parent. */
export function blockFill(inclusion: InclusionFigures): string[] {
  const timestampOf = new Map(inclusion.blocks.map((b) => [b.number, b.timestamp]));
  return inclusion.blocks
    .filter((b) => b.ours > 0)
    .map((b) => {
      const previous = timestampOf.get(b.number - 1);
      return previous === undefined ? `${b.txCount}` : `${b.txCount} (+${b.timestamp - previous}s)`;
    });
}

/**
 * Starts an inclusion watch at submission start, on its own connection to `host:port`:
 * `submissionEnded()` tells it submission is over; `result` resolves with the figures (the connection
 * closed).
 */
export function startInclusionWatch(
  host: string,
  port: number,
  options: Omit<InclusionWatch, 'submitted' | 'submissionStarted'>,
): { submissionStarted: number; submissionEnded: () => void; result: Promise<InclusionFigures> } {
  const submissionStarted = performance.now();
  let submissionEnded: () => void = () => undefined;
  const submitted = new Promise<void>((resolve) => (submissionEnded = resolve));
  const rpc = new RpcClient(host, port);
  const unregister = onCleanup('inclusion watcher connection', () => rpc.close());
  const result = watchInclusion(rpc, { ...options, submitted, submissionStarted }).finally(() => {
    unregister();
    rpc.close();
  });
  // Awaited after submission; until then a failure must not surface as an unhandled rejection.
  result.catch(() => undefined);
  return { submissionStarted, submissionEnded, result };
}
