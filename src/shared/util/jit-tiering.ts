import { setFlagsFromString } from 'node:v8';

/**
 * How much bytecode a function runs before V8 (Node 20–24) sends it to TurboFan, the optimizing
 * compiler: about three times V8's default of 66 KB (`--interrupt-budget=67584`).
 *
 * A fresh node's first burst of transactions used more CPU compiling than executing. Every thread of
 * the node is its own isolate and compiles its own copy of the code it runs; TurboFan compiled ~350
 * functions during the first 2,000 ERC-20 transfers (~2 s of compile time, on V8's background
 * threads), and many of them again after deoptimizing on type feedback gathered too early
 * ("insufficient type feedback", "wrong map"). On a 2-core machine that CPU is taken from the chain
 * and the transports. With a budget three times as large, functions are optimized later, on better
 * feedback, and lukewarm ones not at all. Alternated runs against V8's default, fresh nodes:
 * - peer bench `tx-throughput.mjs`, ERC-20, 2,000: V8's background threads 750–800 ms against
 *   1,070–1,150, accepted 2,665–2,852/s against 2,328–2,621;
 * - transfers, 5,000: the node's CPU 3.42–3.60 s against 3.72–3.89, accepted 3,138–3,258/s against
 *   3,020–3,086;
 * - `bench/qbft-network.ts` (four validators on one box, 6,000 transfers): 857 included/s twice
 *   against 600 and 667.
 * What it costs: code that is hot from the first second runs unoptimized a little longer. `eth_call`
 * over a fresh node's first 10 s served 14,641–15,275 req/s against 15,454–15,977; `eth_getBalance`
 * and `eth_blockNumber` within noise; warm, `bench/block-building.ts` builds at the same CPU per
 * transfer. Six times V8's default (400,000) halved the compile threads' CPU again but slowed the
 * chain's first burst more than it gave back.
 */
export const TURBOFAN_INTERRUPT_BUDGET = 200_000;

/**
 * The V8 versions that have the flag and where it was measured: V8 11 (Node 20). From V8 12 (Node 22,
 * 24) tiering goes through Maglev and counts invocations instead (`--invocation-count-for-turbofan`);
 * `--interrupt-budget` is gone, and V8 prints "unrecognized flag" for it. There the node leaves V8's
 * tiering as it is.
 */
export function hasInterruptBudgetFlag(v8Version = process.versions.v8): boolean {
  return Number.parseInt(v8Version, 10) === 11;
}

/**
 * Process-wide: V8 reads the budget whenever it resets a function's counter, in every isolate. The
 * node sets it before it starts its threads. Returns whether it was set.
 */
export function delayTurbofanTierUp(): boolean {
  if (!hasInterruptBudgetFlag()) return false;
  setFlagsFromString(`--interrupt-budget=${TURBOFAN_INTERRUPT_BUDGET}`);
  return true;
}
