/**
 * The node's memory, thread by thread: the process' RSS (all threads, native allocations such as
 * RocksDB's block cache included) and each thread's V8 heap. Collected on request from every actor
 * over its control plane; logged periodically when `BASALT_MEMORY_LOG_INTERVAL` (seconds) is set,
 * which the soak benchmark (bench/soak.ts) reads to tell a growing heap from a growing native part.
 * With `BASALT_HEAP_SNAPSHOT_DIR` set, SIGUSR2 writes a heap snapshot of every thread there (Node's
 * own `--heapsnapshot-signal` covers the main thread only), to find what holds the memory.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { writeHeapSnapshot } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import { threadMemory } from '../../shared/util/thread-memory.js';
import type { ThreadMemory } from '../../shared/util/thread-memory.js';
import { answerWithin } from './answer-within.js';
import { collectGarbage } from '../../shared/util/collect-garbage.js';

export const MEMORY_LOG_INTERVAL_ENV = 'BASALT_MEMORY_LOG_INTERVAL';
export const HEAP_SNAPSHOT_DIR_ENV = 'BASALT_HEAP_SNAPSHOT_DIR';

export interface NodeMemory {
  /** Resident set size of the whole process. */
  rssBytes: number;
  /** `main` first, then each actor in start order; an actor that did not answer in time is left out. */
  threads: Array<{ thread: string; memory: ThreadMemory }>;
}

export interface MemorySource {
  name: string;
  memory(): Promise<ThreadMemory>;
  collectGarbage(): Promise<void>;
}

/**
 * How long after the start every thread collects its garbage once (collect-garbage.ts): V8 shrinks a
 * young generation in a collection only when the thread allocated slowly over the last 5 seconds,
 * which the start-up's loading is not.
 */
export const COLLECT_AFTER_START_MS = 10_000;

/**
 * `threads` one after the other (the `--expose-gc` flag each sets for a moment is the process'), the
 * main thread first when it is named `main`.
 */
export async function collectGarbageOf(threads: ReadonlyArray<MemorySource | 'main'>): Promise<void> {
  for (const thread of threads) {
    if (thread === 'main') collectGarbage();
    else await answerWithin(thread.collectGarbage(), ANSWER_TIMEOUT_MS);
  }
}

/** How long a busy actor may take to answer before it is left out of one report. */
const ANSWER_TIMEOUT_MS = 5_000;

export async function collectNodeMemory(actors: readonly MemorySource[]): Promise<NodeMemory> {
  const answers = await Promise.all(
    actors.map(async (actor) => {
      const memory = await answerWithin(actor.memory(), ANSWER_TIMEOUT_MS);
      return memory === undefined ? undefined : { thread: actor.name, memory };
    }),
  );
  return {
    rssBytes: process.memoryUsage.rss(),
    threads: [{ thread: 'main', memory: threadMemory() }, ...answers.filter((a) => a !== undefined)],
  };
}

const LINE_PREFIX = 'Memory: RSS ';
const THREADS_LABEL = '; heap used/total (external) MB: ';

/** One log line: `Memory: RSS 512.0 MB; heap used/total (external) MB: main 10.1/12.0 (1.5), chain ...`. */
export function formatNodeMemory(memory: NodeMemory): string {
  const threads = memory.threads.map(
    ({ thread, memory: m }) => `${thread} ${mb(m.heapUsedBytes)}/${mb(m.heapTotalBytes)} (${mb(m.externalBytes)})`,
  );
  return `${LINE_PREFIX}${mb(memory.rssBytes)} MB${THREADS_LABEL}${threads.join(', ')}`;
}

/**
 * The figures of a line `formatNodeMemory` made, found anywhere in `line` (after the logger's
 * prefix), to 0.1 MB; undefined for any other line. Array buffers are not in the line (0).
 */
export function parseNodeMemory(line: string): NodeMemory | undefined {
  const at = line.indexOf(LINE_PREFIX);
  const label = line.indexOf(THREADS_LABEL, at);
  if (at < 0 || label < 0) return undefined;
  const rss = Number.parseFloat(line.slice(at + LINE_PREFIX.length, label));
  const threads: NodeMemory['threads'] = [];
  for (const match of line.slice(label + THREADS_LABEL.length).matchAll(/([\w-]+) ([\d.]+)\/([\d.]+) \(([\d.]+)\)/g)) {
    const [, thread, used, total, external] = match;
    const memory = { heapUsedBytes: bytes(Number(used)), heapTotalBytes: bytes(Number(total)), externalBytes: bytes(Number(external)), arrayBuffersBytes: 0 };
    threads.push({ thread: thread!, memory });
  }
  return Number.isFinite(rss) ? { rssBytes: bytes(rss), threads } : undefined;
}

/** The logging interval in ms from the environment; undefined when unset, empty or not a positive number. */
export function memoryLogIntervalMs(env: NodeJS.ProcessEnv): number | undefined {
  const seconds = Number(env[MEMORY_LOG_INTERVAL_ENV]);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

const MB = 1024 * 1024;

function mb(bytes: number): string {
  return (bytes / MB).toFixed(1);
}

function bytes(megabytes: number): number {
  return Math.round(megabytes * MB);
}

/** The directory for heap snapshots from the environment; undefined when unset or empty. */
export function heapSnapshotDir(env: NodeJS.ProcessEnv): string | undefined {
  return env[HEAP_SNAPSHOT_DIR_ENV] || undefined;
}

/**
 * Writes `<thread>-<time>.heapsnapshot` for the main thread and every actor into `dir`, one thread
 * after the other (each pauses while its heap is walked); resolves with the files written.
 */
export async function writeHeapSnapshots(actors: ReadonlyArray<{ name: string; worker: Worker }>, dir: string): Promise<string[]> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const files = [writeHeapSnapshot(join(dir, `main-${stamp}.heapsnapshot`))];
  for (const actor of actors) {
    const file = join(dir, `${actor.name}-${stamp}.heapsnapshot`);
    await pipeline(await actor.worker.getHeapSnapshot(), createWriteStream(file));
    files.push(file);
  }
  return files;
}
