import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * One full garbage collection of this thread's heap, without running the process with `--expose-gc`:
 * V8 hands `gc` to contexts created while the flag is set, so one is made for it and the flag is
 * cleared again. The flag is the process'; the supervisor asks one thread after the other.
 *
 * Why: a thread grows its young generation while it loads its modules (everything it allocates then
 * survives), and V8 shrinks it only in a collection that finds the thread allocating slowly — which an
 * idle thread never runs. One collection once the node has started gives back 5–8 MB per thread.
 */
export function collectGarbage(): void {
  gc ??= (globalThis as { gc?: () => void }).gc ?? exposedGc();
  gc();
}

function exposedGc(): () => void {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    // Left set, every context made from now on (a vm script's, a worker's) would see `gc`.
    setFlagsFromString('--no-expose-gc');
  }
}
