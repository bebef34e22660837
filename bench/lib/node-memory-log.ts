/**
 * Follows the memory lines a node logs with `BASALT_MEMORY_LOG_INTERVAL` (src/main/supervisor/memory.ts):
 * the latest, and the one with the highest RSS since `resetPeak`, to tell which thread holds what.
 */
import { parseNodeMemory, MEMORY_LOG_INTERVAL_ENV, type NodeMemory } from '../../src/main/supervisor/memory.js';

const MB = 1024 * 1024;

export class NodeMemoryLog {
  /** The environment that makes the node log its memory every `seconds`. */
  static env(seconds: number): Record<string, string> {
    return { [MEMORY_LOG_INTERVAL_ENV]: String(seconds) };
  }

  latest: NodeMemory | undefined;
  peak: NodeMemory | undefined;
  private waiters: Array<(memory: NodeMemory) => void> = [];

  readonly onLine = (line: string): void => {
    const memory = parseNodeMemory(line);
    if (memory === undefined) return;
    this.latest = memory;
    if (this.peak === undefined || memory.rssBytes > this.peak.rssBytes) this.peak = memory;
    for (const waiter of this.waiters.splice(0)) waiter(memory);
  };

  resetPeak(): void {
    this.peak = undefined;
  }

  /** The next line the node logs. */
  next(): Promise<NodeMemory> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** `RSS 412 MB; heap used/total (external) MB: main 10/12 (2), chain 80/120 (9), ...`. */
export function describeNodeMemory(memory: NodeMemory | undefined): string {
  if (memory === undefined) return 'n/a (no memory line yet)';
  const mb = (bytes: number): string => (bytes / MB).toFixed(0);
  const threads = memory.threads.map(({ thread, memory: m }) => `${thread} ${mb(m.heapUsedBytes)}/${mb(m.heapTotalBytes)} (${mb(m.externalBytes)})`);
  return `RSS ${mb(memory.rssBytes)} MB; heap used/total (external) MB: ${threads.join(', ')}`;
}
