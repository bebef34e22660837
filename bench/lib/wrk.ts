/** Runs `wrk` (the Debian package) against a JSON-RPC endpoint and parses its report. */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onCleanup } from './cleanup.js';

export function wrkPath(): string | undefined {
  try {
    return execFileSync('which', ['wrk'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface WrkReport {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers with a status outside 2xx/3xx. */
  non2xx: number;
  /** connect + read + write + timeout errors. */
  socketErrors: number;
  raw: string;
}

/** `612.00us` / `1.23ms` / `2.00s` → milliseconds. */
export function parseWrkDuration(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  switch (match[2]) {
    case 'us':
      return value / 1000;
    case 'ms':
      return value;
    case 's':
      return value * 1000;
    default:
      return value * 60_000;
  }
}

export function parseWrkOutput(output: string): WrkReport {
  const percentile = (p: number): number => {
    const match = new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output);
    return match ? parseWrkDuration(match[1]!) : Number.NaN;
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests: Number(/(\d+) requests in/.exec(output)?.[1] ?? Number.NaN),
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN),
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    raw: output,
  };
}

/** The Lua script that makes wrk POST `body` as JSON. */
export function wrkPostScript(body: string): string {
  if (body.includes(']]')) throw new Error('the body cannot sit in a Lua long string');
  return `wrk.method = "POST"\nwrk.body = [[${body}]]\nwrk.headers["Content-Type"] = "application/json"\n`;
}

export interface WrkRun {
  url: string;
  body: string;
  connections: number;
  threads: number;
  seconds: number;
}

/** Runs wrk for `seconds`; killed if it has not finished 15 s later. */
export async function runWrk(run: WrkRun): Promise<WrkReport> {
  const binary = wrkPath();
  if (!binary) throw new Error('wrk is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'basalt-wrk-'));
  const script = join(dir, 'post.lua');
  writeFileSync(script, wrkPostScript(run.body));
  try {
    const child = spawn(
      binary,
      [`-t${run.threads}`, `-c${run.connections}`, `-d${run.seconds}s`, '--latency', '--timeout', '10s', '-s', script, run.url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const kill = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const unregister = onCleanup(`wrk pid ${child.pid}`, async () => {
      kill();
      await exited;
    });
    const killer = setTimeout(kill, (run.seconds + 15) * 1000);
    const code = await exited;
    clearTimeout(killer);
    unregister();
    if (code !== 0) throw new Error(`wrk exited with ${code}:\n${output}`);
    return parseWrkOutput(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
