/**
 * The devp2p limits (src/p2p/peer-limits.ts, rlpx-guard.ts): the pure pieces, then a P2pService in
 * this process facing a fake peer (the library's RLPx on loopback) that breaks each limit and gets
 * disconnected with the reason Besu gives.
 */
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import * as snappy from 'snappyjs';
import { P2pService, type ChainHeadFacts, type P2pServiceListener } from '../../src/p2p/p2p-service.js';
import { TokenBucket, groupsWithin, leadingItemsWithin, snappyDeclaredLength, MAX_ANSWER_BYTES, MAX_REQUESTS_IN_FLIGHT, REQUEST_BUDGET } from '../../src/p2p/peer-limits.js';
import type { SyncChain } from '../../src/p2p/block-sync.js';
import { buildGenesis } from '../../src/shared/ethereum/common.js';
import { loadDevNetwork, parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { FakePeer, ETH_OFFSET, type FakePeerChain, type NodeTarget } from '../harness/fuzz/fake-peer.js';
import { rawSocketClosedWithin } from '../harness/fuzz/devp2p-fuzz.js';
import { randomBytes } from 'node:crypto';

const BREACH_OF_PROTOCOL = 0x02;
const UNEXPECTED_IDENTITY = 0x09;
const GET_BLOCK_HEADERS = 0x03;
const GET_BLOCK_BODIES = 0x05;
const BLOCK_BODIES = 0x06;
const GET_RECEIPTS = 0x0f;

// ---------------------------------------------------------------------------------------------
// Pure pieces
// ---------------------------------------------------------------------------------------------

test('TokenBucket: a burst of its capacity, then its rate', (t) => {
  const bucket = new TokenBucket({ capacity: 3, perSecond: 2 }, 0);
  t.deepEqual([bucket.take(0), bucket.take(0), bucket.take(0), bucket.take(0)], [true, true, true, false]);
  t.false(bucket.take(400)); // 0.8 of a token
  t.true(bucket.take(500));
  t.false(bucket.take(500));
  // Idle time refills up to the capacity, no further.
  t.deepEqual([bucket.take(60_000), bucket.take(60_000), bucket.take(60_000), bucket.take(60_000)], [true, true, true, false]);
});

test('snappyDeclaredLength reads the varint header snappy writes, and refuses malformed ones', (t) => {
  for (const size of [0, 1, 127, 128, 16_383, 16_384, 0xffffff, 0x1000000]) {
    t.is(snappyDeclaredLength(snappy.compress(new Uint8Array(Math.min(size, 0x1000000)))), Math.min(size, 0x1000000), String(size));
  }
  t.is(snappyDeclaredLength(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f])), 0xffffffff);
  t.is(snappyDeclaredLength(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01])), undefined);
  t.is(snappyDeclaredLength(Uint8Array.from([0x80, 0x80])), undefined);
  t.is(snappyDeclaredLength(new Uint8Array()), undefined);
});

test('answers keep the leading items within the byte cap, and at least one; gossip splits into groups', (t) => {
  const size = (n: number) => n;
  t.deepEqual(leadingItemsWithin([4, 4, 4], size, 10), [4, 4]);
  t.deepEqual(leadingItemsWithin([20, 1], size, 10), [20]);
  t.deepEqual(leadingItemsWithin([], size, 10), []);
  t.deepEqual(groupsWithin([4, 4, 4, 20, 1, 1], size, 10), [[4, 4], [4], [20], [1, 1]]);
});

// ---------------------------------------------------------------------------------------------
// A service facing a fake peer
// ---------------------------------------------------------------------------------------------

interface Harness {
  service: P2pService;
  target: NodeTarget;
  chain: FakePeerChain;
  logs: string[];
}

async function harness(t: { teardown(fn: () => Promise<void> | void): void }, chainOverride?: Partial<SyncChain>): Promise<Harness> {
  const genesis = parseGenesis(loadDevNetwork().genesisJson);
  const built = await buildGenesis(genesis);
  const head: ChainHeadFacts = { number: 0n, hash: built.hash, timestamp: genesis.header.timestamp, totalDifficulty: genesis.header.difficulty };
  const logs: string[] = [];
  const listener: P2pServiceListener = { log: (message) => logs.push(message) };
  const syncChain: SyncChain = {
    headers: async () => [],
    bodies: async () => [],
    importBlocks: async () => ({ imported: 0, head }),
    ...chainOverride,
  };
  const service = new P2pService(
    { privateKey: randomBytes(32), clientId: 'basalt/test', advertisedHost: '127.0.0.1', listenHost: '127.0.0.1', listenPort: 0, maxPeers: 25,
      networkId: genesis.networkId, genesis, genesisHash: built.hash, head, chain: syncChain },
    listener,
  );
  const port = await service.start();
  t.teardown(() => service.stop());
  return { service, target: { id: Uint8Array.from(Buffer.from(service.idHex, 'hex')), host: '127.0.0.1', port }, chain: { genesis, genesisHash: built.hash, networkId: genesis.networkId }, logs };
}

async function connected(t: { teardown(fn: () => void): void }, h: Harness): Promise<FakePeer> {
  const peer = await FakePeer.connect(h.target, h.chain);
  t.teardown(() => peer.close());
  return peer;
}

const breachLogs = (h: Harness) => h.logs.filter((line) => line.includes('breach of protocol'));

for (const [name, send, why] of [
  ['an eth code eth/68 does not define', (p: FakePeer) => p.sendEth(0x0b, RLP.encode([])), /eth message code 0xb/],
  ['an undecodable eth message', (p: FakePeer) => p.sendEth(GET_BLOCK_HEADERS, Uint8Array.from([0xc5, 0x01])), /undecodable eth message 0x3/],
  ['an eth message that is no list', (p: FakePeer) => p.sendEth(GET_BLOCK_BODIES, RLP.encode(Uint8Array.from([1, 2, 3]))), /is not a list/],
  ['a malformed GetBlockHeaders', (p: FakePeer) => p.sendEth(GET_BLOCK_HEADERS, RLP.encode([1, [1, 2]])), /malformed eth message 0x3/],
  ['a request id over 64 bits', (p: FakePeer) => p.sendEth(GET_BLOCK_BODIES, RLP.encode([new Uint8Array(9).fill(1), []])), /longer than 64 bits/],
  ['an istanbul code QBFT does not use', (p: FakePeer) => p.sendIstanbul(0x01, Uint8Array.from([0xc0])), /istanbul message code 0x1/],
  ['a second Hello', (p: FakePeer) => p.sendFrame(0x00, RLP.encode([])), /a second Hello/],
  ['a reserved base-protocol code', (p: FakePeer) => p.sendFrame(0x07, RLP.encode([])), /base protocol code 0x7/],
  // A snappy header claiming 32 MiB in a 4-byte payload: refused before anything is allocated.
  ['a message declaring more than 16 MiB', (p: FakePeer) => p.sendFrame(ETH_OFFSET + 0x02, Uint8Array.from([0x80, 0x80, 0x80, 0x10]), false), /message of 33554432 bytes/],
] as const) {
  test.serial(`${name}: the peer is disconnected for a breach of protocol, logged once`, async (t) => {
    const h = await harness(t);
    const peer = await connected(t, h);
    send(peer);
    const ending = await peer.ended;
    t.is(ending.reason, BREACH_OF_PROTOCOL);
    t.is(breachLogs(h).length, 1, h.logs.join('\n'));
    t.regex(breachLogs(h)[0]!, why);
    t.is(h.service.peerCount, 0);
  });
}

test.serial('a QBFT message before Status is dropped without a disconnect; an eth request before Status is a breach', async (t) => {
  const h = await harness(t);
  const peer = await FakePeer.connect(h.target, h.chain, { status: false });
  t.teardown(() => peer.close());
  peer.sendIstanbul(0x12, Uint8Array.from([0xc0]));
  // An eth request before Status is out of turn, though.
  peer.sendEth(GET_RECEIPTS, RLP.encode([1, []]));
  t.is((await peer.ended).reason, BREACH_OF_PROTOCOL);
  t.regex(breachLogs(h)[0]!, /before Status/);
  t.is(breachLogs(h).length, 1);
});

test.serial('more requests in flight than allowed: the peer is disconnected', async (t) => {
  const never = new Promise<Uint8Array[]>(() => {});
  const h = await harness(t, { headers: () => never });
  const peer = await connected(t, h);
  for (let i = 0; i < MAX_REQUESTS_IN_FLIGHT; i++) peer.sendEth(GET_BLOCK_HEADERS, RLP.encode([i + 1, [1, 1, 0, 0]]));
  // One more than the service answers at once.
  peer.sendEth(GET_BLOCK_HEADERS, RLP.encode([99, [1, 1, 0, 0]]));
  t.is((await peer.ended).reason, BREACH_OF_PROTOCOL);
  t.regex(breachLogs(h)[0]!, new RegExp(`more than ${MAX_REQUESTS_IN_FLIGHT} requests in flight`));
});

test.serial('an answer stops at 10 MiB of items (at least one item)', async (t) => {
  const body = (fill: number) => RLP.encode([[], [], new Uint8Array(4 * 1024 * 1024).fill(fill)]);
  const h = await harness(t, { bodies: async (hashes) => hashes.map((_, i) => body(i + 1)) });
  const peer = await connected(t, h);
  peer.sendEth(GET_BLOCK_BODIES, RLP.encode([7, [new Uint8Array(32), new Uint8Array(32), new Uint8Array(32)]]));
  const deadline = Date.now() + 10_000;
  while (!peer.received.some((m) => m.code === BLOCK_BODIES) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const answer = peer.received.find((m) => m.code === BLOCK_BODIES)?.payload as [Uint8Array, unknown[]] | undefined;
  t.truthy(answer);
  // Two bodies of 4 MiB fit under 10 MiB, the third does not.
  t.is(answer![1].length, 2);
  t.true(2 * 4 * 1024 * 1024 < MAX_ANSWER_BYTES && 3 * 4 * 1024 * 1024 > MAX_ANSWER_BYTES);
  t.true(peer.isOpen);
});

test.serial('a Hello claiming another node id than the handshake key is disconnected (0x09)', async (t) => {
  const h = await harness(t);
  const peer = await FakePeer.connect(h.target, h.chain, { status: false, claimId: randomBytes(64) });
  t.teardown(() => peer.close());
  t.is((await peer.ended).reason, UNEXPECTED_IDENTITY);
  t.is(h.service.peerCount, 0);
});

test.serial('garbage before the handshake closes the socket at once; the service keeps accepting peers', async (t) => {
  const h = await harness(t);
  // An EIP-8 auth size of 300 bytes, then bytes that do not decrypt (past the 307 the library waits for).
  const garbage = Uint8Array.from([0x01, 0x2c, ...randomBytes(400)]);
  const closedAfter = await rawSocketClosedWithin(h.target.host, h.target.port, garbage, 5_000);
  t.not(closedAfter, undefined);
  t.true(closedAfter! < 5_000);
  const peer = await connected(t, h);
  t.true(peer.isOpen);
  t.is(h.service.peerCount, 1);
});

test.serial('a peer asking faster than the request budget is disconnected, though it waits for each batch of answers', async (t) => {
  const h = await harness(t);
  const peer = await connected(t, h);
  let sent = 0;
  // Batches well under the in-flight limit, each sent once the last was answered.
  while (peer.isOpen && sent < REQUEST_BUDGET.capacity * 3) {
    for (let i = 0; i < 16; i++) peer.sendEth(GET_RECEIPTS, RLP.encode([++sent, []]));
    const deadline = Date.now() + 2_000;
    while (peer.isOpen && peer.received.filter((m) => m.code === GET_RECEIPTS + 1).length < sent && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  t.is((await peer.ended).reason, BREACH_OF_PROTOCOL);
  t.regex(breachLogs(h)[0]!, /requests a second/);
  t.true(sent > REQUEST_BUDGET.capacity, `disconnected after ${sent} requests`);
});
