import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';
import type { ActorName } from '../actors/channel.js';

/**
 * How large each worker thread's V8 young generation may grow. Every actor thread and every piscina
 * thread is its own isolate, and V8 sizes the young generation per isolate for a process that is one
 * big heap: up to 48 MB (two 16 MB semi-spaces and the new large-object space), which a busy thread
 * reaches within a minute of load and keeps. Times the node's ten or so threads, that was the largest
 * part of its RSS under load that held no live data.
 *
 * 12 MB is two 4 MB semi-spaces: a scavenge costs what survives it, not the space's size, so smaller
 * semi-spaces mean more scavenges of the same cost each. `bench/soak.ts` (300 transfers/s) kept its
 * rate; at saturation (`bench/tx-throughput.ts`) paired runs on a loaded 2-core VM included 1,180–1,250
 * transfers/s against 1,250–1,670 with V8's default: not settled, see README "Memory".
 */
export const WORKER_YOUNG_GENERATION_MB = 12;

/**
 * The old generation a worker that runs no EVM may grow to: just under 2 GB, where V8 (Node 20–24 on
 * x64) stops giving an isolate its own copy of the embedded builtins next to its code ("short builtin
 * calls": calls from compiled code to builtins become direct). The copy is ~0.75 MB of RSS per
 * isolate; without it, calls to builtins go through a table, which costs the EVM threads a few percent
 * (bench/block-building.ts: 3–4 % more CPU per ERC-20 transfer with V8's `--no-short-builtin-calls`),
 * so the chain and the state readers keep V8's limit, and so do the piscina threads (decoding under
 * load; absent at idle). The transports served eth_blockNumber as fast either way (three alternated
 * runs, c=64: 45,283–48,000 req/s against 44,703–45,756). No thread of the node comes near 2 GB of
 * old generation; V8's own limit on a 24 GB machine is 4 GB.
 */
export const NO_EVM_OLD_GENERATION_MB = 2047;

/** The `resourceLimits` of the worker threads the node starts: actors but the chain and the state readers, and piscina pools (TaskPool). */
export const WORKER_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } as const;

/**
 * The chain's young generation is 24 MB (two 8 MB semi-spaces), half of V8's default: it builds and
 * executes blocks of thousands of transactions, whose objects outlived 4 MB semi-spaces and were
 * promoted to be marked and compacted (with 12 MB it included fewer transfers per second under
 * `bench/tx-throughput.ts`, 830–1,000 against 1,540–1,670 in paired runs), while with 24 MB it used
 * the same CPU per transaction as with the default (transfers 0.410–0.457 ms against 0.380–0.463,
 * storeAndLog 0.552–0.571 against 0.562–0.589, three alternated runs each of 10,000 on a loaded 2-core
 * VM) and peaked 30–60 MB lower. The young generation a thread grew is kept as long as it allocates
 * more than 1 MB/s, which the chain does even idle (its QBFT blocks every second): at idle that is
 * 16 MB instead of 32.
 * The state readers run the EVM for every eth_call as the chain does for blocks: they keep V8's default.
 */
export const CHAIN_YOUNG_GENERATION_MB = 24;

export function actorResourceLimits(actor: ActorName): ResourceLimits {
  if (actor === 'chain') return { maxYoungGenerationSizeMb: CHAIN_YOUNG_GENERATION_MB };
  if (actor === 'reader') return {};
  return { ...WORKER_RESOURCE_LIMITS, maxOldGenerationSizeMb: NO_EVM_OLD_GENERATION_MB };
}

/**
 * How far, in percent, V8 lets an old generation grow past what survived its last full collection
 * before the next one. V8's own factor goes up to fourfold when the heap limit is as large as a
 * server's (4 GB on a 24 GB machine): under `bench/soak.ts` (300 transfers/s, 3 minutes) the chain
 * kept about 43 MB live in 150–160 MB of heap and the node's RSS passed 530 MB. Twofold (100 %): the
 * chain's heap 80–105 MB, the RSS 466 MB. 50 % gave 435 MB but cost about 13 % more CPU per ERC-20
 * transfer under `bench/tx-throughput.ts` (three alternated runs each: 1.59 ms against 1.41 ms with
 * V8's factor and 1.45 ms with 100 %), more full collections of the chain's heap as it promotes.
 */
export const HEAP_GROWING_PERCENT = 100;

/**
 * Process-wide: every isolate reads the flag at each full collection, the worker threads' included.
 * The node sets it before it starts its threads.
 */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
