/**
 * How the node reports its memory per thread: the memory line it logs and reads back.
 */
import test from 'ava';
import { formatNodeMemory, memoryLogIntervalMs, parseNodeMemory } from '../../src/main/supervisor/memory.js';
import type { NodeMemory } from '../../src/main/supervisor/memory.js';

test('the memory line reads back as the figures it was made from, to 0.1 MB', (t) => {
  const MB = 1024 * 1024;
  const memory: NodeMemory = {
    rssBytes: 612.25 * MB,
    threads: [
      { thread: 'main', memory: { heapUsedBytes: 8.5 * MB, heapTotalBytes: 10 * MB, externalBytes: 2.2 * MB, arrayBuffersBytes: 0 } },
      { thread: 'http-0', memory: { heapUsedBytes: 20 * MB, heapTotalBytes: 47.1 * MB, externalBytes: 3.1 * MB, arrayBuffersBytes: 0 } },
    ],
  };
  const line = `2026-01-01T00:00:00.000Z | main | INFO  | Supervisor | ${formatNodeMemory(memory)}`;
  t.is(formatNodeMemory(memory), 'Memory: RSS 612.3 MB; heap used/total (external) MB: main 8.5/10.0 (2.2), http-0 20.0/47.1 (3.1)');
  const parsed = parseNodeMemory(line)!;
  const tenths = (bytes: number) => Math.round((bytes / MB) * 10) / 10;
  t.is(tenths(parsed.rssBytes), 612.3);
  t.deepEqual(
    parsed.threads.map(({ thread, memory: m }) => [thread, tenths(m.heapUsedBytes), tenths(m.heapTotalBytes), tenths(m.externalBytes)]),
    [['main', 8.5, 10, 2.2], ['http-0', 20, 47.1, 3.1]],
  );
  t.is(parseNodeMemory('2026-01-01T00:00:00.000Z | main | INFO  | Supervisor | Basalt is running'), undefined);
  t.is(memoryLogIntervalMs({ BASALT_MEMORY_LOG_INTERVAL: '60' }), 60_000);
  t.is(memoryLogIntervalMs({ BASALT_MEMORY_LOG_INTERVAL: 'often' }), undefined);
  t.is(memoryLogIntervalMs({}), undefined);
});
