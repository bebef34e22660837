/**
 * The log index core over its real RocksDB store and a chain of made-up blocks: every eth_getLogs
 * answer equals a scan of every block's logs, blocks that leave the canonical chain stop matching and
 * blocks that come back match again, a reopened index resumes (and follows a chain that re-organised or
 * went lower meanwhile), and a query waits until the index holds the head the node has published.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { BlockLog, IndexedBlock } from '../../src/shared/actors/messages.js';
import { formatFilterLog } from '../../src/shared/rpc/format.js';
import { logMatches } from '../../src/shared/rpc/log-match.js';
import { parseLogFilter } from '../../src/shared/rpc/params.js';
import type { ChainLogSource } from '../../src/logindex/log-index.js';
import type { IndexHead } from '../../src/logindex/index-store.js';
import { logRpcHandlers } from '../../src/logindex/log-rpc.js';
import { LogIndexActor, openIndexStore } from '../../src/logindex/logindex-actor.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

const ADDRESSES = Array.from({ length: 5 }, () => new Uint8Array(randomBytes(20)));
const TOPICS = Array.from({ length: 6 }, () => new Uint8Array(randomBytes(32)));
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`;
const quantity = (n: bigint | number) => `0x${n.toString(16)}`;

/** A deterministic pseudo-random source, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

function block(parent: IndexedBlock | undefined, next: () => number, logCount?: number): IndexedBlock {
  const count = logCount ?? Math.floor(next() * 4);
  const txCount = count === 0 ? 0 : 1 + Math.floor(next() * 3);
  const logs: BlockLog[] = Array.from({ length: count }, () => ({
    log: [pick(next, ADDRESSES), Array.from({ length: Math.floor(next() * 4) }, () => pick(next, TOPICS)), new Uint8Array(randomBytes(4))],
    txIndex: Math.floor(next() * txCount),
  }));
  logs.sort((a, b) => a.txIndex - b.txIndex);
  return {
    number: parent === undefined ? 0n : parent.number + 1n,
    hash: new Uint8Array(randomBytes(32)),
    parentHash: parent?.hash ?? new Uint8Array(32),
    timestamp: BigInt(1000 + Math.floor(next() * 1000)),
    txHashes: Array.from({ length: txCount }, () => new Uint8Array(randomBytes(32))),
    logs,
  };
}

/** A chain of made-up blocks: its canonical blocks are `blocks`; `extend` and `fork` move its head. */
class FakeChain {
  blocks: IndexedBlock[] = [];
  readonly known = new Map<string, IndexedBlock>();

  constructor(private readonly next: () => number) {}

  extend(count: number): IndexedBlock[] {
    const added: IndexedBlock[] = [];
    for (let i = 0; i < count; i++) {
      const made = block(this.blocks.at(-1), this.next);
      this.blocks.push(made);
      this.known.set(hex(made.hash), made);
      added.push(made);
    }
    return added;
  }

  /** Replaces the blocks above `ancestor` with `count` new ones. */
  fork(ancestor: number, count: number): IndexedBlock[] {
    this.blocks = this.blocks.slice(0, ancestor + 1);
    return this.extend(count);
  }

  get head(): IndexHead {
    const top = this.blocks.at(-1)!;
    return { number: top.number, hash: top.hash };
  }

  readonly source: ChainLogSource = {
    head: async () => this.head,
    canonicalLogs: async (from, to) => this.blocks.slice(Number(from), Number(to) + 1),
    canonicalHashes: async (from, to) => this.blocks.slice(Number(from), Number(to) + 1).map((b) => b.hash),
    blockLogs: async (hash) => this.known.get(hex(hash)) ?? null,
  };

  /** What eth_getLogs must answer: every canonical block's matching logs, read one by one. */
  scan(filter: ReturnType<typeof parseLogFilter>, from: number, to: number): unknown[] {
    const found: unknown[] = [];
    for (const b of this.blocks.slice(from, to + 1)) {
      b.logs.forEach(({ log, txIndex }, logIndex) => {
        if (!logMatches(log, filter.addresses, filter.topics)) return;
        found.push(formatFilterLog(log, { blockHash: b.hash, blockNumber: b.number, blockTimestamp: b.timestamp, txHash: b.txHashes[txIndex]!, txIndex, logIndex }));
      });
    }
    return found;
  }
}

async function openIndex(location: string, chain: FakeChain, publishedHead: () => IndexHead | null = () => chain.head) {
  const store = await openIndexStore(location, () => undefined);
  const actor = new LogIndexActor(store, {
    source: chain.source,
    publishedHead,
    log: { info: () => undefined, warn: (message) => console.warn(message) },
    rpcMaxLogsRange: 0n,
    rpcMaxLogsCount: 0,
  });
  const rpc = logRpcHandlers(actor.index, { rpcMaxLogsRange: 0n, rpcMaxLogsCount: 0 });
  const getLogs = async (raw: Record<string, unknown>) => JSON.parse(jsonTextToString(await rpc.eth_getLogs({ filter: parseLogFilter(raw) }))) as unknown[];
  return { actor, getLogs };
}

/** A random filter: some addresses or none, and up to three topic positions of null, [] or topics. */
function randomFilter(next: () => number, from: number, to: number): Record<string, unknown> {
  const addresses = ADDRESSES.filter(() => next() < 0.3).map(hex);
  const topics = Array.from({ length: Math.floor(next() * 4) }, () => {
    const roll = next();
    if (roll < 0.3) return null;
    if (roll < 0.4) return [];
    return TOPICS.filter(() => next() < 0.35).map(hex);
  });
  return { fromBlock: quantity(from), toBlock: quantity(to), ...(addresses.length > 0 ? { address: addresses } : {}), topics };
}

let dir: string;
test.before(() => {
  dir = tempDataPath();
});
test.after.always(() => removeDataPath(dir));

test('every answer equals a scan of every block, for random filters and ranges', async (t) => {
  const next = random(7);
  const chain = new FakeChain(next);
  chain.extend(400);
  const { actor, getLogs } = await openIndex(join(dir, 'scan'), chain);
  t.teardown(() => actor.close());
  await actor.index.start();
  t.deepEqual(actor.index.head, chain.head);
  let nonEmpty = 0;
  for (let i = 0; i < 150; i++) {
    const from = Math.floor(next() * 400);
    const to = from + Math.floor(next() * (400 - from));
    const raw = randomFilter(next, from, to);
    const expected = chain.scan(parseLogFilter(raw), from, to);
    t.deepEqual(await getLogs(raw), expected, JSON.stringify(raw));
    if (expected.length > 0) nonEmpty++;
  }
  t.true(nonEmpty > 30, `${nonEmpty} of the filters matched something`);
  // A block hash query reads the one block, canonical here.
  const withLogs = chain.blocks.find((b) => b.logs.length > 0)!;
  t.deepEqual(await getLogs({ blockHash: hex(withLogs.hash) }), chain.scan(parseLogFilter({}), Number(withLogs.number), Number(withLogs.number)));
});

test('blocks that leave the canonical chain stop matching; blocks that come back match again', async (t) => {
  const next = random(11);
  const chain = new FakeChain(next);
  chain.extend(40);
  const { actor, getLogs } = await openIndex(join(dir, 'reorg'), chain);
  t.teardown(() => actor.close());
  await actor.index.start();
  const all = { fromBlock: '0x0', toBlock: 'latest' };
  const branchA = chain.blocks.slice();
  t.deepEqual(await getLogs(all), chain.scan(parseLogFilter(all), 0, 39));

  // Branch B replaces blocks 31..39 and goes to 44: one event, as the chain sends after a re-org.
  const branchB = chain.fork(30, 14);
  await actor.index.onCanonicalLogs({ added: branchB });
  t.deepEqual(actor.index.head, chain.head);
  const afterB = await getLogs(all);
  t.deepEqual(afterB, chain.scan(parseLogFilter(all), 0, 44));
  const hashesIn = (logs: unknown[]) => new Set(logs.map((log) => (log as { blockHash: string }).blockHash));
  for (const gone of branchA.slice(31)) t.false(hashesIn(afterB).has(hex(gone.hash)), `block #${gone.number} of branch A left`);

  // Back to branch A, longer now: its blocks match again, B's no more.
  chain.blocks = branchA;
  const backOnA = chain.extend(10);
  await actor.index.onCanonicalLogs({ added: [...branchA.slice(31, 40), ...backOnA] });
  const afterA = await getLogs(all);
  t.deepEqual(afterA, chain.scan(parseLogFilter(all), 0, 49));
  for (const gone of branchB) t.false(hashesIn(afterA).has(hex(gone.hash)), `block #${gone.number} of branch B left`);
  t.true(afterA.length > afterB.length / 2, 'branch A has logs to match');

  // A blockHash query for a block off the canonical chain is answered from the chain, as before.
  const offChain = branchB.find((b) => b.logs.length > 0)!;
  t.is((await getLogs({ blockHash: hex(offChain.hash) })).length, offChain.logs.length);
});

test('an event the index cannot attach makes it read what it misses from the chain', async (t) => {
  const next = random(5);
  const chain = new FakeChain(next);
  chain.extend(10);
  const { actor, getLogs } = await openIndex(join(dir, 'gap'), chain);
  t.teardown(() => actor.close());
  await actor.index.start();
  chain.extend(20);
  // Only the newest block's event arrives: the 19 before it are read from the chain.
  await actor.index.onCanonicalLogs({ added: chain.blocks.slice(-1) });
  t.deepEqual(actor.index.head, chain.head);
  const all = { fromBlock: '0x0', toBlock: 'latest' };
  t.deepEqual(await getLogs(all), chain.scan(parseLogFilter(all), 0, 29));
});

test('a reopened index resumes from its store and follows a chain that re-organised and went lower meanwhile', async (t) => {
  const next = random(23);
  const chain = new FakeChain(next);
  chain.extend(60);
  const location = join(dir, 'restart');
  const first = await openIndex(location, chain);
  await first.actor.index.start();
  await first.actor.close();

  // While the index is closed the chain moves to a branch from #45 that is lower than the index's head.
  chain.fork(45, 8);
  const asked: bigint[] = [];
  const counting: ChainLogSource = { ...chain.source, canonicalLogs: async (from, to) => (asked.push(from), chain.source.canonicalLogs(from, to)) };
  const store = await openIndexStore(location, () => undefined);
  t.is(store.head?.number, 59n, 'the store kept the index it had');
  const actor = new LogIndexActor(store, { source: counting, publishedHead: () => chain.head, log: { info: () => undefined, warn: () => undefined }, rpcMaxLogsRange: 0n, rpcMaxLogsCount: 0 });
  t.teardown(() => actor.close());
  await actor.index.start();
  t.deepEqual(actor.index.head, chain.head);
  t.deepEqual(asked, [46n], 'only the blocks above the common ancestor were read again');
  const rpc = logRpcHandlers(actor.index, { rpcMaxLogsRange: 0n, rpcMaxLogsCount: 0 });
  for (const address of ADDRESSES) {
    const raw = { fromBlock: '0x0', toBlock: 'latest', address: hex(address) };
    t.deepEqual(JSON.parse(jsonTextToString(await rpc.eth_getLogs({ filter: parseLogFilter(raw) }))), chain.scan(parseLogFilter(raw), 0, 53));
  }
});

test('a query waits until the index holds the head the node has published', async (t) => {
  const next = random(3);
  const chain = new FakeChain(next);
  chain.extend(5);
  let published: IndexHead = chain.head;
  const { actor, getLogs } = await openIndex(join(dir, 'wait'), chain, () => published);
  t.teardown(() => actor.close());
  await actor.index.start();
  // The chain stores block #5 and publishes it (eth_blockNumber says 5) before the index hears of it.
  const [sixth] = chain.extend(1).map((b) => ({ ...b, logs: [{ log: [ADDRESSES[0]!, [TOPICS[0]!], new Uint8Array()], txIndex: 0 }] as BlockLog[], txHashes: [new Uint8Array(randomBytes(32))] }));
  chain.blocks[5] = sixth!;
  published = chain.head;
  const query = getLogs({ fromBlock: '0x5', toBlock: '0x5' });
  await actor.index.onCanonicalLogs({ added: [sixth!] });
  const logs = await query;
  t.is(logs.length, 1, "block #5's log is in the answer");
  t.is((logs[0] as { blockNumber: string }).blockNumber, '0x5');
});
