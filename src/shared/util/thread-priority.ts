import { setPriority } from 'node:os';

/**
 * Raises the calling thread's Linux niceness (0 normal, 19 lowest), so that the kernel gives the CPU to
 * other threads first when the machine is busy and to this one whenever it is idle. Linux keeps
 * niceness per thread, and `os.setPriority` without a pid sets the calling thread only there; elsewhere
 * it would set the whole process, so off Linux nothing is done.
 */
export function setThreadNiceness(niceness: number): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(niceness);
  } catch {
    // Refused (a sandbox without the syscall): the thread keeps its priority.
  }
}
