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
import { BlockSync, EthCode, HEADERS_PER_REQUEST } from '../../src/p2p/block-sync.js';
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

test('headers on another parent than the head are not imported and the claim is dropped', async (t) => {
  const ours = makeChain(6);
  const theirs = makeChain(20, 1); // same numbers, different hashes from block 0 on
  const { sync, imported, logs } = harness([...ours.slice(0, 6), ...theirs.slice(6)], 5);
  sync.notePeerHead('peer', 19n);
  t.false(await sync.step());
  t.deepEqual(imported, []);
  t.regex(logs.join('\n'), /another parent/);
  t.is(sync.highestKnown, 5n, 'the peer is no longer taken as ahead');
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
