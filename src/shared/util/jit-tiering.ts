import { setFlagsFromString } from 'node:v8';

/**
 * When V8 sends a function to TurboFan, its optimizing compiler: about three times later than V8's
 * default, on the V8 versions where that was measured to pay.
 *
 * A fresh node's first burst of transactions used more CPU compiling than executing. Every thread of
 * the node is its own isolate and compiles its own copy of the code it runs; on Node 20 TurboFan
 * compiled ~350 functions during the first 2,000 ERC-20 transfers (~2 s of compile time, on V8's
 * background threads), and many of them again after deoptimizing on type feedback gathered too early
 * ("insufficient type feedback", "wrong map"). On a 2-core machine that CPU is taken from the chain
 * and the transports. Optimized later, functions are compiled on better feedback, and lukewarm ones
 * not at all. What it costs: code that is hot from the first second runs unoptimized a little
 * longer; warm, nothing is lost.
 *
 * Per V8 major version, the flag and what it gave (fresh nodes, alternated runs against V8's default;
 * peer bench `tx-throughput.mjs`, ERC-20, 2,000 pre-signed, unless said otherwise):
 * - 11 (Node 20): `--interrupt-budget=200000` (bytecode run before tier-up; default 67,584). V8's
 *   background threads 750–800 ms against 1,070–1,150, accepted 2,665–2,852/s against 2,328–2,621;
 *   5,000 transfers: the node's CPU 3.42–3.60 s against 3.72–3.89; `bench/qbft-network.ts` (four
 *   validators on one box, 6,000 transfers) 545–857 included/s against 500–667. `eth_call` over a
 *   fresh node's first 10 s 14,641–15,275 req/s against 15,454–15,977; `bench/block-building.ts`
 *   warm 215–228 µs of CPU per transfer against 230–245, cold 265–280 against 232–262. 130,000
 *   saved less compile time; 400,000 slowed the chain's first burst more than it gave back.
 * - 12 (Node 22): V8 tiers through Maglev and counts invocations:
 *   `--invocation-count-for-turbofan=9000` (default 3,000). Five runs each: V8's background
 *   threads 630–690 ms against 1,120–1,210, the node's CPU 3.39–3.89 s against 3.77–4.04, accepted
 *   1,638–1,817/s against 1,441–1,778, send p99 63–94 ms against 68–89 (the chain's own CPU higher,
 *   1,110–1,270 ms against 1,050–1,130). `eth_call` over the first 10 s 7,940–8,479 req/s against
 *   8,461–10,248; `bench/block-building.ts` warm the same (262–278 µs against 265–277), cold 340–358
 *   against 292–313.
 * - 13 (Node 24): the same flag changed nothing (the node's CPU 3.00–3.28 s against 3.03–3.21,
 *   accepted 1,720–1,861/s against 1,688–1,820): V8's tiering is left as it is, as on any other.
 */
export function turbofanTieringFlag(v8Version = process.versions.v8): string | undefined {
  switch (Number.parseInt(v8Version, 10)) {
    case 11:
      return '--interrupt-budget=200000';
    case 12:
      return '--invocation-count-for-turbofan=9000';
    default:
      return undefined;
  }
}

/**
 * Process-wide: V8 reads these thresholds whenever it resets a function's counter, in every isolate.
 * The node sets it before it starts its threads. Answers the flag set, if any.
 */
export function delayTurbofanTierUp(): string | undefined {
  const flag = turbofanTieringFlag();
  if (flag !== undefined) setFlagsFromString(flag);
  return flag;
}
