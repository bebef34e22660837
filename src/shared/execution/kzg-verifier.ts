/**
 * The point-evaluation verifier of a chain: one worker thread running kzg-point-evaluation.task.ts, started on the
 * first 0x0a call that reaches the pairing check, so a node whose transactions never call 0x0a never
 * loads KZG. The thread then keeps kzg-wasm loaded until the chain closes.
 */
import type verifyPointEvaluation from '../../../workers/tasks/kzg-point-evaluation.task.js';
import { TaskPool } from '../util/task-pool.js';
import type { PointEvaluationInput } from './kzg-point-evaluation.js';

/** Longest setTimeout delay: the loaded thread is never retired for idleness. */
const NEVER = 2 ** 31 - 1;

export class KzgVerifierPool {
  private pool: TaskPool<typeof verifyPointEvaluation> | undefined;
  private closed = false;

  /** Bound, so that it can be handed to the precompile as a plain function. */
  readonly verify = (input: PointEvaluationInput): Promise<boolean> => {
    if (this.closed) return Promise.reject(new Error('the KZG verifier is closed'));
    this.pool ??= new TaskPool(new URL('../../../workers/tasks/kzg-point-evaluation.task.js', import.meta.url), {
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: NEVER,
    });
    return this.pool.run(input);
  };

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }
}
