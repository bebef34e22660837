/**
 * A piscina pool typed by its task: `TaskPool<typeof task>` takes what the task's default export takes
 * and resolves with what it returns, so a task's input and result are declared once, by the task.
 * Only the task's type is imported where the pool is made; its code loads in the pool's threads.
 */
import { Piscina } from 'piscina';
import { WORKER_RESOURCE_LIMITS } from './memory-limits.js';

export type Task = (input: never) => unknown;

/**
 * How many threads a CPU-bound pool that works while blocks are executed runs on a machine of `cores`
 * CPUs: one per core but the one the chain keeps busy executing blocks, and at least one. The pool's
 * decoders (workers/txpool.worker.ts says what a thread more cost) and `blocks import`'s sender recovery.
 */
export function threadsBesideChain(cores: number): number {
  return Math.max(1, cores - 1);
}

type PiscinaOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;

export class TaskPool<F extends Task> {
  private readonly pool: Piscina;

  constructor(entry: URL, options: Omit<PiscinaOptions, 'filename'> = {}) {
    this.pool = new Piscina({ resourceLimits: WORKER_RESOURCE_LIMITS, ...options, filename: entry.href });
  }

  run(input: Parameters<F>[0]): Promise<Awaited<ReturnType<F>>> {
    return this.pool.run(input);
  }

  /** Threads started, those still loading their modules included. */
  get threadCount(): number {
    return this.pool.threads.length;
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}

/**
 * A pool with no thread until its first task, whose threads then all start together, and all retire
 * together after `idleMs` without a task (or stay until `destroy` when no `idleMs` is given). Piscina
 * alone starts a thread when tasks queue, one at a time as the load grows, and a task handed to a
 * thread still loading its modules waits for them: the transaction decoders' second batch of a first
 * burst waited 550-650 ms on a busy 2-core machine. Once destroyed it refuses tasks ("the <name> is
 * closed") rather than start threads again while its owner shuts down.
 */
export interface OnDemandTaskPoolOptions {
  threads: number;
  idleMs?: number;
  /** What the pool is, for the error a task gets once it is closed. */
  name: string;
}

export class OnDemandTaskPool<F extends Task> {
  private pool: TaskPool<F> | undefined;
  private running = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly entry: URL,
    private readonly options: OnDemandTaskPoolOptions,
  ) {}

  async run(input: Parameters<F>[0]): Promise<Awaited<ReturnType<F>>> {
    if (this.closed) throw new Error(`the ${this.options.name} is closed`);
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const { threads, idleMs } = this.options;
    this.pool ??= new TaskPool<F>(this.entry, { minThreads: threads, maxThreads: threads });
    this.running++;
    try {
      return await this.pool.run(input);
    } finally {
      if (--this.running === 0 && idleMs !== undefined) this.idleTimer = setTimeout(() => this.retire(), idleMs).unref();
    }
  }

  /** Threads started (0 before the first task and once retired). */
  get threadCount(): number {
    return this.pool?.threadCount ?? 0;
  }

  private retire(): void {
    const pool = this.pool;
    this.pool = undefined;
    this.idleTimer = undefined;
    void pool?.destroy();
  }

  async destroy(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idleTimer);
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }
}
