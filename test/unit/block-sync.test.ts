/**
 * Full sync's pure parts in one process: BlockSync against a scripted peer (which blocks it asks
 * for, how it checks the answers, what it does with a refused block), the p2p status view behind
 * eth_syncing and /readiness, and eth_syncing's answer shape.
 */
import test from 'ava';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { BlockSync, EthCode, HEADERS_PER_REQUEST, numberOf } from '../../src/p2p/block-sync.js';
import type { SyncChain } from '../../src/p2p/block-sync.js';
import type { ChainHeadFacts } from '../../src/p2p/p2p-service.js';
import { P2pStatusReader, P2pStatusWriter, SYNC_TOLERANCE, createP2pStatusBuffer } from '../../src/shared/shared-memory/p2p-status-view.js';
import { handleJsonRpcBody, createMethodCaller } from '../../src/transport/jsonrpc.js';
import { createHeadBuffer, HeadReader, HeadWriter } from '../../src/shared/shared-memory/head-view.js';
import { createDispatch, createLocalMethods } from '../../src/transport/local-methods.js';

const hashOf = (header: Uint8Array[]) => keccak_256(RLP.encode(header));

/** A chain of minimal 15-field headers; header i has number i and links to header i-1. */
function makeChain(length: number, salt = 0): Uint8Array[][] {
  const headers: Uint8Array[][] = [];
  for (let i = 0; i < length; i++) {
    const parent = i === 0 ? new Uint8Array(32) : hashOf(headers[i - 1]!);
    const fields: Uint8Array[] = Array.from({ length: 15 }, () => new Uint8Array());
    fields[0] = parent;
    fields[8] = bigIntToUnpaddedBytes(BigInt(i));
    fields[12] = Uint8Array.of(salt);
    headers.push(fields);
  }
  return headers;
}

/** A peer serving `chain` and a local node whose head starts at `localHeight`. */
function harness(chain: Uint8Array[][], localHeight: number, refuseFrom?: number) {
  const requests: { code: number; payload: unknown[] }[] = [];
  const imported: bigint[] = [];
  let head: ChainHeadFacts = { number: BigInt(localHeight), hash: hashOf(chain[localHeight]!), timestamp: 0n, totalDifficulty: 0n };
  const logs: string[] = [];
  const syncChain: SyncChain = {
    headers: async () => [],
    bodies: async () => [],
    async importBlocks(blocks) {
      let count = 0;
      for (const rlp of blocks) {
        const header = (RLP.decode(rlp) as Uint8Array[][])[0]!;
        const number = BigInt(imported.length + localHeight + 1);
        if (refuseFrom !== undefined && number >= BigInt(refuseFrom)) {
          return { imported: count, head, error: `Block #${number} could not be imported: bad state root` };
        }
        imported.push(number);
        head = { number, hash: hashOf(header), timestamp: 0n, totalDifficulty: 0n };
        count++;
      }
      return { imported: count, head };
    },
  };
  const sync = new BlockSync(syncChain, {
    async request(_peer, code, payload) {
      requests.push({ code, payload });
      if (code === EthCode.GetBlockHeaders) {
        const [origin, amount] = payload as [bigint | Uint8Array, number];
        const start = typeof origin === 'bigint' ? Number(origin) : chain.findIndex((h) => Buffer.compare(hashOf(h), origin) === 0);
        return chain.slice(start, start + amount) as NestedUint8Array;
      }
      // Bodies: empty transaction and ommer lists, at most 10 per answer to exercise the follow-up requests.
      return (payload as Uint8Array[]).slice(0, 10).map(() => [[], []]) as NestedUint8Array;
    },
    head: () => head,
    blockHash: hashOf,
    setHead: (h) => (head = h),
    log: (message) => logs.push(message),
  });
  return { sync, requests, imported, logs, head: () => head };
}

test('a peer ahead is synced from in batches of headers, bodies fetched until complete', async (t) => {
  const chain = makeChain(101);
  const { sync, requests, imported, head } = harness(chain, 3);
  await sync.learnPeerHead('peer', hashOf(chain[100]!));
  t.is(sync.highestKnown, 100n);
  t.true(await sync.step());
  t.is(head().number, 3n + BigInt(HEADERS_PER_REQUEST));
  t.deepEqual(requests[1]!.payload.slice(0, 2), [4n, HEADERS_PER_REQUEST]);
  t.is(requests.filter((r) => r.code === EthCode.GetBlockBodies).length, Math.ceil(HEADERS_PER_REQUEST / 10));
  while (await sync.step());
  t.is(head().number, 100n);
  t.deepEqual(imported, Array.from({ length: 97 }, (_, i) => BigInt(i + 4)));
  t.false(await sync.step(), 'nothing left to do');
});

/** Headers of a branch leaving `base` after its block `from`: `length` more blocks, each of difficulty `difficulty`. */
function branchOf(base: Uint8Array[][], from: number, length: number, salt: number, difficulty = 1): Uint8Array[][] {
  const headers = base.slice(0, from + 1);
  for (let i = 0; i < length; i++) {
    const fields: Uint8Array[] = Array.from({ length: 15 }, () => new Uint8Array());
    fields[0] = hashOf(headers[headers.length - 1]!);
    fields[7] = bigIntToUnpaddedBytes(BigInt(difficulty));
    fields[8] = bigIntToUnpaddedBytes(BigInt(headers.length));
    fields[12] = Uint8Array.of(salt);
    headers.push(fields);
  }
  return headers;
}

const difficultyOf = (header: Uint8Array[]) => BigInt('0x' + (Buffer.from(header[7]!).toString('hex') || '0'));

/** eth/68 GetBlockHeaders over a canonical list of headers: origin number or hash, skip, reverse. */
function serveHeaders(chain: Uint8Array[][], [origin, amount, skip, reverse]: [bigint | Uint8Array, number, number, number]): Uint8Array[][] {
  let at = typeof origin === 'bigint' ? Number(origin) : chain.findIndex((h) => Buffer.compare(hashOf(h), origin) === 0);
  const out: Uint8Array[][] = [];
  while (out.length < amount && at >= 0 && at < chain.length) {
    out.push(chain[at]!);
    at += (skip + 1) * (reverse ? -1 : 1);
  }
  return out;
}

/**
 * A local chain with Besu's fork choice (a block on the head extends it; a block elsewhere becomes
 * the head only when its total difficulty, the sum of header difficulties, exceeds the head's) and a
 * peer serving `theirs`.
 */
function forkHarness(ours: Uint8Array[][], theirs: Uint8Array[][]) {
  const stored = new Map<string, { header: Uint8Array[]; td: bigint }>();
  const key = (hash: Uint8Array) => Buffer.from(hash).toString('hex');
  let td = 0n;
  for (const header of ours) stored.set(key(hashOf(header)), { header, td: (td += difficultyOf(header)) });
  let canonical = ours.slice();
  const facts = (): ChainHeadFacts => {
    const tip = canonical[canonical.length - 1]!;
    return { number: BigInt(canonical.length - 1), hash: hashOf(tip), timestamp: 0n, totalDifficulty: stored.get(key(hashOf(tip)))!.td };
  };
  let head = facts();
  const requests: { code: number; payload: unknown[] }[] = [];
  const reorgs: { removed: number; added: number }[] = [];
  const syncChain: SyncChain = {
    headers: async (query) => serveHeaders(canonical, [query.origin, query.amount, query.skip, query.reverse ? 1 : 0]).map((h) => RLP.encode(h)),
    bodies: async () => [],
    async importBlocks(blocks) {
      let imported = 0;
      for (const rlp of blocks) {
        const header = (RLP.decode(rlp) as Uint8Array[][])[0]!;
        const parent = stored.get(key(header[0]!));
        if (!parent) return { imported, head, error: 'unknown parent' };
        const blockTd = parent.td + difficultyOf(header);
        stored.set(key(hashOf(header)), { header, td: blockTd });
        imported++;
        const extendsHead = Buffer.compare(header[0]!, head.hash) === 0;
        if (!extendsHead && blockTd <= head.totalDifficulty) continue;
        // Walk the new branch back to the canonical chain.
        const branch = [header];
        while (Buffer.compare(hashOf(canonical[Number(numberOf(branch[0]!)) - 1] ?? []), branch[0]![0]!) !== 0) branch.unshift(stored.get(key(branch[0]![0]!))!.header);
        const ancestor = Number(numberOf(branch[0]!)) - 1;
        if (!extendsHead) reorgs.push({ removed: canonical.length - 1 - ancestor, added: branch.length });
        canonical = [...canonical.slice(0, ancestor + 1), ...branch];
        head = facts();
      }
      return { imported, head };
    },
  };
  const logs: string[] = [];
  const sync = new BlockSync(syncChain, {
    async request(_peer, code, payload) {
      requests.push({ code, payload });
      if (code === EthCode.GetBlockHeaders) return serveHeaders(theirs, payload as [bigint, number, number, number]) as NestedUint8Array;
      return (payload as Uint8Array[]).map(() => [[], []]) as NestedUint8Array;
    },
    head: () => head,
    blockHash: hashOf,
    setHead: (h) => (head = h),
    log: (message) => logs.push(message),
  });
  return { sync, requests, reorgs, logs, head: () => head, canonical: () => canonical };
}

test('a peer on a longer branch is followed back to the common ancestor and its branch becomes ours', async (t) => {
  const base = makeChain(11);
  const ours = branchOf(base, 10, 5, 1); // 0..15
  const theirs = branchOf(base, 10, 12, 2); // 0..22, leaves ours after block 10
  const { sync, requests, reorgs, head, canonical } = forkHarness(ours, theirs);
  sync.notePeerHead('peer', 22n, 23n);
  t.true(await sync.step());
  t.is(head().number, 22n);
  t.deepEqual(canonical().map(hashOf), theirs.map(hashOf));
  t.deepEqual(reorgs, [{ removed: 5, added: 6 }], 'the switch happens at the first block that outweighs our head');
  t.true(requests.some((r) => r.code === EthCode.GetBlockHeaders && (r.payload as unknown[])[3] === 1), 'headers asked for in reverse');
  t.false(await sync.step(), 'nothing left to do');
});

test('an ancestor far below the head is found by bisection', async (t) => {
  const base = makeChain(31);
  const ours = branchOf(base, 30, HEADERS_PER_REQUEST + 40, 1);
  const theirs = branchOf(base, 30, HEADERS_PER_REQUEST + 60, 2);
  const { sync, requests, head, canonical } = forkHarness(ours, theirs);
  sync.notePeerHead('peer', BigInt(theirs.length - 1));
  t.true(await sync.step());
  t.is(head().number, BigInt(theirs.length - 1));
  t.deepEqual(canonical().map(hashOf), theirs.map(hashOf));
  const singleHeaderProbes = requests.filter((r) => r.code === EthCode.GetBlockHeaders && (r.payload as unknown[])[1] === 1).length;
  t.true(singleHeaderProbes > 0 && singleHeaderProbes <= 8, `${singleHeaderProbes} probes`);
});

test('a heavier but shorter branch (total difficulty) is switched to', async (t) => {
  const base = makeChain(5);
  const ours = branchOf(base, 4, 6, 1); // 0..10, difficulty 1 each above 4
  const theirs = branchOf(base, 4, 3, 2, 10); // 0..7, difficulty 10 each
  const { sync, head, canonical } = forkHarness(ours, theirs);
  const theirTd = theirs.reduce((sum, h) => sum + difficultyOf(h), 0n);
  sync.notePeerHead('peer', 7n, theirTd);
  t.true(await sync.step());
  t.is(head().number, 7n);
  t.is(head().totalDifficulty, theirTd);
  t.deepEqual(canonical().map(hashOf), theirs.map(hashOf));
});

test('a longer branch that does not outweigh ours is kept aside and the peer no longer taken as ahead', async (t) => {
  const base = makeChain(5);
  const ours = branchOf(base, 4, 3, 1, 10); // heavy
  const theirs = branchOf(base, 4, 8, 2); // longer, light
  const { sync, head, reorgs, logs } = forkHarness(ours, theirs);
  sync.notePeerHead('peer', 12n);
  t.true(await sync.step(), 'its blocks were stored');
  t.is(head().number, 7n, 'our head stays');
  t.deepEqual(reorgs, []);
  t.regex(logs.join('\n'), /does not outweigh ours/);
  t.is(sync.highestKnown, 7n);
  t.false(await sync.step());
});

test('a block the chain refuses stops the round; what came before it stays', async (t) => {
  const chain = makeChain(30);
  const { sync, imported, logs, head } = harness(chain, 0, 8);
  sync.notePeerHead('peer', 29n);
  t.true(await sync.step());
  t.deepEqual(imported, [1n, 2n, 3n, 4n, 5n, 6n, 7n]);
  t.is(head().number, 7n);
  t.regex(logs.join('\n'), /Block #8 could not be imported: bad state root/);
  t.false(await sync.step(), 'the peer that sent the bad block is not asked again');
});

test('a peer that disconnects is forgotten', async (t) => {
  const { sync } = harness(makeChain(10), 0);
  sync.notePeerHead('peer', 9n);
  sync.peerGone('peer');
  t.is(sync.highestKnown, 0n);
  t.false(await sync.step());
});

test('the status view reports a sync only beyond the tolerance, from where it started', (t) => {
  const buffer = createP2pStatusBuffer();
  const writer = new P2pStatusWriter(buffer);
  const reader = new P2pStatusReader(buffer);
  writer.setPeerCount(3);
  t.is(reader.peerCount(), 3);
  writer.updateSync(10n, 10n + SYNC_TOLERANCE);
  t.is(reader.sync(), undefined, 'a few blocks behind is in sync');
  writer.updateSync(10n, 100n);
  t.deepEqual(reader.sync(), { startingBlock: 10n, highestBlock: 100n });
  writer.updateSync(50n, 120n);
  t.deepEqual(reader.sync(), { startingBlock: 10n, highestBlock: 120n }, 'the start stays while the sync runs');
  writer.updateSync(118n, 120n);
  t.is(reader.sync(), undefined);
  t.is(reader.peerCount(), 3);
});

test('eth_syncing answers false or Besu\'s object in its key order', async (t) => {
  const buffer = createHeadBuffer();
  new HeadWriter(buffer).publish(50n, new Uint8Array(32));
  let sync: { startingBlock: bigint; currentBlock: bigint; highestBlock: bigint } | undefined;
  const call = createMethodCaller({
    enabledApis: ['ETH'],
    send: createDispatch(
      createLocalMethods({ clientVersion: 'basalt', networkId: 1n, chainId: 1n, apis: ['ETH'], head: new HeadReader(buffer), p2pEnabled: true, syncStatus: () => sync }),
      async () => ({ result: null }),
    ),
  });
  const rpc = async () => (await handleJsonRpcBody(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_syncing', params: [] }), { maxBatchSize: 1, call })).body;
  t.is(await rpc(), '{"jsonrpc":"2.0","id":1,"result":false}');
  sync = { startingBlock: 0n, currentBlock: 50n, highestBlock: 0x100n };
  t.is(await rpc(), '{"jsonrpc":"2.0","id":1,"result":{"startingBlock":"0x0","currentBlock":"0x32","highestBlock":"0x100"}}');
});
