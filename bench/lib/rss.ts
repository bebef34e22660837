/** Samples a process' resident set size from /proc and keeps the peak. */
import { readFileSync } from 'node:fs';

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
    private readonly pid: number,
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
