/**
 * Linux `perf` sampling a running node for the length of a workload, each thread's samples split by
 * what the stack shows it doing: V8 compiling (TurboFan and its kin), collecting garbage, in the
 * kernel, or running (JavaScript, builtins, native code). /proc gives each thread's CPU, but V8's own
 * threads all share one name (`node`) and do both compiling and garbage collection for every isolate
 * of the process; only their stacks tell the two apart.
 *
 * Needs the `perf` command (Debian: linux-perf) and the right to sample the process
 * (`/proc/sys/kernel/perf_event_paranoid` ≤ 2 for one's own processes); without them `start` says why
 * and the workload runs unsampled.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Samples per second: enough for a workload of a second or two, few enough to cost the node little. */
const FREQUENCY = 499;

export type SampleKind = 'compile' | 'gc' | 'kernel' | 'run';
const KINDS: readonly SampleKind[] = ['run', 'compile', 'gc', 'kernel'];

/** Frames of V8's compilers (their symbols in the node binary). */
const COMPILE_FRAME = /v8::internal::(compiler::|maglev::|baseline::|Compiler::|OptimizingCompileDispatcher|Zone::)|OptimizedCompilationJob|TurbofanCompilationJob/;
/** Frames of V8's garbage collector. */
const GC_FRAME = /v8::internal::(Scavenger|ScavengeJob|MarkCompactCollector|MinorMarkCompact|ConcurrentMarking|IncrementalMarking|MarkingVisitor|Sweeper|Evacuat|Heap::|ArrayBufferSweeper|MemoryAllocator::Unmapper|RememberedSet|PointersUpdating)/;

/** A thread's samples by kind, threads of one name (V8's `node` threads, the HTTP transports) summed. */
export interface ThreadSamples {
  name: string;
  samples: number;
  byKind: Record<SampleKind, number>;
}

/** What one stack (leaf first, one frame per line as `perf script` prints them) was doing. */
export function classifyStack(frames: readonly string[]): SampleKind {
  if (frames.some((frame) => COMPILE_FRAME.test(frame))) return 'compile';
  if (frames.some((frame) => GC_FRAME.test(frame))) return 'gc';
  if (frames[0]?.includes('[kernel.kallsyms]')) return 'kernel';
  return 'run';
}

/**
 * `perf script` output (a header line per sample, `comm tid ...`, then its frames, a blank line
 * between samples) as samples per thread name, largest first.
 */
export function samplesByThread(script: string): ThreadSamples[] {
  const threads = new Map<string, ThreadSamples>();
  for (const block of script.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    const header = lines[0];
    if (header === undefined || /^\s/.test(header)) continue;
    // The thread's name comes first; it may contain spaces, the tid that follows it does not.
    const name = /^(.*?)\s+\d+(?:[\s/]|$)/.exec(header)?.[1]?.trim();
    if (name === undefined) continue;
    let thread = threads.get(name);
    if (thread === undefined) {
      thread = { name, samples: 0, byKind: { run: 0, compile: 0, gc: 0, kernel: 0 } };
      threads.set(name, thread);
    }
    thread.samples++;
    thread.byKind[classifyStack(lines.slice(1))]++;
  }
  return [...threads.values()].sort((a, b) => b.samples - a.samples);
}

/** One line per thread: its share of all samples and how its own samples split. */
export function describeThreadSamples(threads: readonly ThreadSamples[]): string[] {
  const total = threads.reduce((sum, thread) => sum + thread.samples, 0);
  const percent = (part: number, whole: number) => `${whole > 0 ? Math.round((part * 100) / whole) : 0} %`;
  return threads.map(
    (thread) =>
      `${thread.name.padEnd(12)} ${percent(thread.samples, total).padStart(5)} of the node's samples; of its own: ` +
      KINDS.map((kind) => `${kind} ${percent(thread.byKind[kind], thread.samples)}`).join(', '),
  );
}

export class PerfRecording {
  private constructor(
    private readonly recorder: ChildProcess,
    private readonly dir: string,
    private readonly exited: Promise<void>,
  ) {}

  /** Starts sampling `pid` (all its threads, with call stacks); undefined, with the reason logged, where perf cannot. */
  static async start(pid: number, log: (line: string) => void): Promise<PerfRecording | undefined> {
    const dir = mkdtempSync(join(tmpdir(), 'basalt-perf-'));
    const recorder = spawn('perf', ['record', '-g', '-F', String(FREQUENCY), '-p', String(pid), '-o', join(dir, 'perf.data')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    recorder.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => recorder.once('close', () => resolve()));
    const failed = await Promise.race([
      new Promise<string>((resolve) => recorder.once('error', (err) => resolve(err.message))),
      exited.then(() => stderr.trim().split('\n').at(-1) || 'perf exited at once'),
      // perf that is still running after a moment is sampling.
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 300)),
    ]);
    if (failed !== undefined) {
      log(`perf: not sampling (${failed})`);
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    return new PerfRecording(recorder, dir, exited);
  }

  /** Stops sampling and reads what was sampled. */
  async stop(): Promise<ThreadSamples[]> {
    this.recorder.kill('SIGINT');
    await this.exited;
    try {
      const { stdout } = await run('perf', ['script', '-i', join(this.dir, 'perf.data'), '-F', 'comm,tid,ip,sym,dso'], { maxBuffer: 1 << 30 });
      return samplesByThread(stdout);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
