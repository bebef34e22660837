/** Piscina task for tests: the id of the thread it runs in, after `delayMs`. */
import { threadId } from 'node:worker_threads';

export default async function threadIdAfter(delayMs: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  return threadId;
}
