/**
 * A piscina pool typed by its task: `TaskPool<typeof task>` takes what the task's default export takes
 * and resolves with what it returns, so a task's input and result are declared once, by the task.
 * Only the task's type is imported where the pool is made; its code loads in the pool's threads.
 */
import { Piscina } from 'piscina';
import { WORKER_RESOURCE_LIMITS } from './memory-limits.js';

export type Task = (input: never) => unknown;

type PiscinaOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;

export class TaskPool<F extends Task> {
  private readonly pool: Piscina;

  constructor(entry: URL, options: Omit<PiscinaOptions, 'filename'> = {}) {
    this.pool = new Piscina({ resourceLimits: WORKER_RESOURCE_LIMITS, ...options, filename: entry.href });
  }

  run(input: Parameters<F>[0]): Promise<Awaited<ReturnType<F>>> {
    return this.pool.run(input);
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
