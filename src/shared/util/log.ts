import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';

/** Besu's log levels, most to least severe; OFF silences everything, ALL shows everything. */
export const LOG_LEVELS = ['OFF', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE', 'ALL'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

let threshold = LOG_LEVELS.indexOf('INFO');

/**
 * Every thread's logger listens here, so a level change made in one thread (admin_changeLogLevel in
 * an HTTP worker) reaches the whole node. Unreferenced: it never keeps a thread alive.
 */
const levelChannel = new BroadcastChannel('basalt-log-level');
levelChannel.unref();
levelChannel.onmessage = (event) => {
  const level = (event as MessageEvent).data as LogLevel;
  if (LOG_LEVELS.includes(level)) threshold = LOG_LEVELS.indexOf(level);
};

export function setLogLevel(level: LogLevel): void {
  threshold = LOG_LEVELS.indexOf(level);
}

/** Sets the level in this thread and announces it to every other thread of the node. */
export function changeLogLevelEverywhere(level: LogLevel): void {
  setLogLevel(level);
  levelChannel.postMessage(level);
}

/**
 * A line-per-event logger in Besu's layout (`time | thread | LEVEL | component | message`) on stdout,
 * which is where operators' log shippers expect a Besu node to write.
 */
export class Logger {
  constructor(private readonly component: string) {}

  error(message: string, err?: unknown): void {
    this.write('ERROR', err === undefined ? message : `${message}: ${describe(err)}`);
  }
  warn(message: string): void {
    this.write('WARN', message);
  }
  info(message: string): void {
    this.write('INFO', message);
  }
  debug(message: string): void {
    this.write('DEBUG', message);
  }

  private write(level: Exclude<LogLevel, 'OFF' | 'ALL'>, message: string): void {
    if (LOG_LEVELS.indexOf(level) > threshold) return;
    const thread = isMainThread ? 'main' : `worker-${threadId}`;
    process.stdout.write(`${new Date().toISOString()} | ${thread} | ${level.padEnd(5)} | ${this.component} | ${message}\n`);
  }
}

export function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? err.message;
  return String(err);
}
