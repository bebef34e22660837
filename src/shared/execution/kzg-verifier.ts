/**
 * The point-evaluation verifier of a chain: one worker thread running kzg-point-evaluation.task.ts, started on the
 * first 0x0a call that reaches the pairing check, so a node whose transactions never call 0x0a never
 * loads KZG. The thread then keeps kzg-wasm loaded until the chain closes.
 */
import type verifyPointEvaluation from '../../../workers/tasks/kzg-point-evaluation.task.js';
import { OnDemandTaskPool } from '../util/task-pool.js';
import type { PointEvaluationInput } from './kzg-point-evaluation.js';

export class KzgVerifierPool {
  private readonly pool = new OnDemandTaskPool<typeof verifyPointEvaluation>(new URL('../../../workers/tasks/kzg-point-evaluation.task.js', import.meta.url), {
    threads: 1,
    name: 'KZG verifier',
  });

  /** Bound, so that it can be handed to the precompile as a plain function. */
  readonly verify = (input: PointEvaluationInput): Promise<boolean> => this.pool.run(input);

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
