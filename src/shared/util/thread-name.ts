/**
 * Names the calling thread, so that `top -H`, `ps -L` and /proc/<pid>/task/<tid>/comm tell the chain
 * from a transport or a decoding thread (Node leaves every thread named `node`): what an operator
 * looks at when the node is busy, and what `bench/tx-throughput.ts` groups CPU time by.
 * Linux only (15 characters at most); elsewhere, or on a kernel without /proc/thread-self, nothing.
 */
import { writeFileSync } from 'node:fs';

export function nameThisThread(name: string): void {
  if (process.platform !== 'linux') return;
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // No /proc/thread-self (Linux before 3.17) or no /proc: the thread keeps the process's name.
  }
}
