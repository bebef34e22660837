/** Samples a process' resident set size from /proc and keeps the peak. */
import { readdirSync, readFileSync } from 'node:fs';

/** VmRSS of `pid` in kB, or undefined when the process is gone or /proc is unavailable. */
export function readRssKb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export class RssSampler {
  private peakKb: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly pid: number,
    intervalMs = 200,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  /** Peak since construction or the last `resetPeak`, including a sample taken now. */
  peak(): number | undefined {
    this.sample();
    return this.peakKb;
  }

  /** Starts a new peak window from the current value. */
  resetPeak(): void {
    this.peakKb = undefined;
    this.sample();
  }

  current(): number | undefined {
    return readRssKb(this.pid);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private sample(): void {
    const kb = readRssKb(this.pid);
    if (kb !== undefined && (this.peakKb === undefined || kb > this.peakKb)) this.peakKb = kb;
  }
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on Linux for every mainstream architecture). */
const USER_HZ = 100;

/** The fields of a /proc stat line (a process's or a thread's) from field 3 (state) on. */
function statFields(stat: string): string[] {
  // The command name (field 2) may contain spaces; the fields after its closing parenthesis are fixed.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU ms from a /proc stat line's fields (statFields). */
function cpuMsOf(fields: string[]): number {
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/**
 * CPU (user + system, all threads) this process used since `start`, a `process.cpuUsage()`, in ms: what
 * a benchmark's own load generator took from the cores it shares with the node.
 */
export function ownCpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** CPU time (user + system, all threads) the process has used so far, in ms; undefined when gone. */
export function readCpuMs(pid: number): number | undefined {
  try {
    return cpuMsOf(statFields(readFileSync(`/proc/${pid}/stat`, 'latin1')));
  } catch {
    return undefined;
  }
}

/**
 * Each thread of `pid`: its name (the node names its threads: chain, txpool, transport-0, tx-decode… —
 * src/shared/util/thread-name.ts; V8's and libuv's own threads are all `node`), its CPU time so far
 * (user + system, ms) and its niceness. Empty when /proc is unavailable or the process is gone.
 */
export function readThreads(pid: number): { name: string; cpuMs: number; nice: number }[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const fields = statFields(stat);
      return [{ name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpuMs: cpuMsOf(fields), nice: Number(fields[16]) }];
    } catch {
      // The thread ended between the listing and the read.
      return [];
    }
  });
}

/** CPU time (ms) of the threads of `pid` so far, summed by thread name (readThreads). */
export function readThreadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const { name, cpuMs } of readThreads(pid)) byName.set(name, (byName.get(name) ?? 0) + cpuMs);
  return byName;
}

/** Per thread name, the CPU ms used between two `readThreadCpuMs` readings, largest first (threads started meanwhile count from 0). */
export function threadCpuSince(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after].map(([name, ms]): [string, number] => [name, ms - (before.get(name) ?? 0)]).sort((a, b) => b[1] - a[1]);
}

/** Measures a process' CPU use over an interval, as a percentage of one core. */
export class CpuMeter {
  private readonly startCpuMs: number | undefined;
  private readonly startedAt = performance.now();

  constructor(private readonly pid: number) {
    this.startCpuMs = readCpuMs(pid);
  }

  /** Average share of one core since construction (200 = two cores busy). */
  percentOfOneCore(): number {
    const now = readCpuMs(this.pid);
    if (now === undefined || this.startCpuMs === undefined) return Number.NaN;
    return ((now - this.startCpuMs) / (performance.now() - this.startedAt)) * 100;
  }
}

/** CPU time the whole machine has spent busy (user + nice + system, all cores), in ms. */
export function readMachineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return ((fields[0]! + fields[1]! + fields[2]!) * 1000) / USER_HZ;
}

/**
 * Measures how busy the machine was over an interval, in cores: the figure to read beside a
 * benchmark's own CPU use (the machine is shared: what others used is the difference).
 */
export class MachineMeter {
  private readonly startMs = readMachineBusyMs();
  private readonly startedAt = performance.now();

  /** Average busy cores since construction. */
  busyCores(): number {
    return (readMachineBusyMs() - this.startMs) / (performance.now() - this.startedAt);
  }
}
