import { setPriority } from 'node:os';

/**
 * Sets the calling thread's Linux niceness (0 normal, 19 lowest), so that the kernel gives the CPU to
 * other threads first when the machine is busy and to this one whenever it is idle. Linux keeps
 * niceness per thread, and `os.setPriority` without a pid sets the calling thread only there; elsewhere
 * it would set the whole process, so off Linux nothing is done. Raising niceness is always allowed;
 * lowering it again (back to 0) needs CAP_SYS_NICE or RLIMIT_NICE room, which a service rarely has.
 * Answers whether the thread now has that niceness.
 */
export function setThreadNiceness(niceness: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    setPriority(niceness);
    return true;
  } catch {
    return false;
  }
}
