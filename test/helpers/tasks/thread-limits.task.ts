/** Piscina task for tests: the resource limits the thread it runs in was started with. */
import { resourceLimits } from 'node:worker_threads';

export default function threadLimits(_input: null): typeof resourceLimits {
  return resourceLimits;
}
