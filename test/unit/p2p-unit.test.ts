/**
 * The pure parts of Basalt's devp2p (src/p2p): enode URLs with Besu's errors, the istanbul/100
 * protocol class for @ethereumjs/devp2p, eth/68 Status with the EIP-2124 fork id, the admin_nodeInfo / admin_peers
 * shapes and the static-peer table; then two services connected over loopback inside this process.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { buildGenesis, createChainCommon } from '../../src/shared/ethereum/common.js';
import { parseGenesis, parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import type { Genesis } from '../../src/shared/ethereum/genesis.js';
import { RpcError } from '../../src/shared/rpc/errors.js';
import { formatEnode, parseEnode } from '../../src/shared/ethereum/enode.js';
import { nodeIdOf } from '../../src/shared/ethereum/node-id.js';
import { checkRemoteStatus, decodeStatus, encodeStatus, genesisForkSchedule } from '../../src/p2p/eth-status.js';
import { checkRemoteForkId, forkHashHex, forkIdAt, forkIdAtActivation, hardforkActivation } from '../../src/shared/ethereum/fork-id.js';
import { activeFork, nodeInfo, nodeInfoConfig, peerInfo } from '../../src/p2p/node-info.js';
import { P2pService } from '../../src/p2p/p2p-service.js';
import { useWasmRlpxMac } from '../../src/p2p/rlpx-mac.js';
import { MAC } from '@ethereumjs/devp2p';
import { createCipheriv } from 'node:crypto';
import type { ChainHeadFacts, GossipPool } from '../../src/p2p/p2p-service.js';
import { PeerTable } from '../../src/p2p/peer-table.js';
import { ISTANBUL_CAPABILITY, IstanbulProtocol } from '../../src/p2p/istanbul-protocol.js';
import type { Peer } from '@ethereumjs/devp2p';
import * as snappy from 'snappyjs';
import { BESU_FIXTURES, REPO_ROOT } from '../helpers/node-process.js';

const randomPrivateKey = (): Uint8Array => new Uint8Array(randomBytes(32));
const ID = 'a'.repeat(64) + 'b'.repeat(64);
const hex = (bytes: Uint8Array): string => '0x' + Buffer.from(bytes).toString('hex');

function errorOf(fn: () => unknown): { code: number; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof RpcError) return { code: err.code, message: err.message };
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Enode URLs
// ---------------------------------------------------------------------------------------------

test('enode URLs parse and format like Besu', (t) => {
  const enode = parseEnode(`enode://${ID}@127.0.0.1:30303`);
  t.is(enode.idHex, ID);
  t.is(enode.id.length, 64);
  t.is(enode.host, '127.0.0.1');
  t.is(enode.tcpPort, 30303);
  t.is(enode.udpPort, undefined);
  t.is(formatEnode(enode), `enode://${ID}@127.0.0.1:30303`);
  t.is(parseEnode(`enode://${ID}@10.0.0.1:30303?discport=30303`).udpPort, undefined, 'same port: no discport');
  const withDisc = parseEnode(`enode://${ID.toUpperCase()}@10.0.0.1:30303?discport=0`);
  t.is(withDisc.udpPort, 0);
  t.is(withDisc.idHex, ID, 'ids are kept lower-case');
  t.is(formatEnode(withDisc), `enode://${ID}@10.0.0.1:30303?discport=0`);
  t.is(parseEnode(`enode://${ID}@[::1]:30303`).host, '::1');
});

test('enode errors: parse error, invalid node id, DNS disabled', (t) => {
  const parse = { code: -32700, message: 'Parse error' };
  const badId = {
    code: -32000,
    message: "Invalid node ID: node ID must have exactly 128 hexadecimal characters and should not include any '0x' hex prefix.",
  };
  for (const text of ['', 'not an enode', `http://${ID}@127.0.0.1:30303`, `enode://${ID}`, `enode://${ID}@127.0.0.1`,
    `enode://${ID}@127.0.0.1:99999`, `enode://${ID}@127.0.0.1:30303?foo=1`, `enode://${ID}@1.2.3.4:x`]) {
    t.deepEqual(errorOf(() => parseEnode(text)), parse, text);
  }
  for (const id of ['0x' + ID.slice(2), ID.slice(1), ID + 'a', 'z'.repeat(128), '']) {
    t.deepEqual(errorOf(() => parseEnode(`enode://${id}@127.0.0.1:30303`)), badId, id);
  }
  t.deepEqual(errorOf(() => parseEnode(`enode://${ID}@localhost:30303`)), { code: -32100, message: 'Enode DNS support is disabled' });
});

// ---------------------------------------------------------------------------------------------
// istanbul/100 on @ethereumjs/devp2p
// ---------------------------------------------------------------------------------------------

test('istanbul protocol: snappy for devp2p v5 peers, plain for v4, codes checked with >=', (t) => {
  const sent: [number, Uint8Array][] = [];
  let protocolVersion: number | undefined = 5;
  const peer = { getHelloMessage: () => (protocolVersion === undefined ? null : { protocolVersion }) } as unknown as Peer;
  const protocol = new IstanbulProtocol(100, peer, (code, data) => sent.push([code, data]));
  const message = new Uint8Array(300).fill(0x42);
  t.true(protocol.sendMessage(0x12, message));
  t.is(sent[0]![0], 0x12);
  t.true(sent[0]![1].length < message.length, 'compressed');
  t.deepEqual(snappy.uncompress(sent[0]![1]), message);
  protocolVersion = 4;
  t.true(protocol.sendMessage(0x15, message));
  t.deepEqual(sent[1], [0x15, message]);
  t.false(protocol.sendMessage(ISTANBUL_CAPABILITY.length, message), 'one past the last code');
  t.false(protocol.sendMessage(-1, message));
  protocolVersion = undefined;
  t.false(protocol.sendMessage(0x12, message), 'no Hello yet');
  t.is(sent.length, 2);
  const received: [number, Uint8Array][] = [];
  protocol._handleMessage(0x13, message);
  protocol.onMessage = (code, data) => received.push([code, data]);
  protocol._handleMessage(0x14, message);
  t.deepEqual(received, [[0x14, message]], 'messages before the owner listens are dropped');
  t.deepEqual([ISTANBUL_CAPABILITY.name, ISTANBUL_CAPABILITY.version, ISTANBUL_CAPABILITY.length], ['istanbul', 100, 0x16]);
});

// ---------------------------------------------------------------------------------------------
// Status and fork id
// ---------------------------------------------------------------------------------------------

const FORKED_GENESIS = {
  config: { chainId: 4242, homesteadBlock: 0, eip150Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0,
    petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 10, shanghaiTime: 1000, cancunTime: 2000,
    qbft: { blockPeriodSeconds: 2, epochLength: 30000, requestTimeoutSeconds: 4 } },
  timestamp: '0x0', gasLimit: '0x1fffffffffffff', difficulty: '0x1', extraData: '0x', alloc: {},
};

test('fork id follows EIP-2124 and agrees with ethereumjs', async (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const built = await buildGenesis(genesis);
  const schedule = genesisForkSchedule(genesis, built.hash);
  t.deepEqual(schedule.blocks, [10n]);
  t.deepEqual(schedule.times, [1000n, 2000n]);
  const word = (n: bigint) => Buffer.from(n.toString(16).padStart(16, '0'), 'hex');
  const sum = (...forks: bigint[]) => crc32(Buffer.concat([built.hash, ...forks.map(word)])) >>> 0;
  const at = (number: bigint, timestamp: bigint) => forkIdAt(schedule, { number, timestamp });
  t.deepEqual(at(0n, 0n), { hash: Uint8Array.from(Buffer.from(sum().toString(16).padStart(8, '0'), 'hex')), next: 10n });
  t.is(Buffer.from(at(10n, 500n).hash).readUInt32BE(0), sum(10n));
  t.is(at(10n, 500n).next, 1000n);
  t.is(Buffer.from(at(11n, 2000n).hash).readUInt32BE(0), sum(10n, 1000n, 2000n));
  t.is(at(11n, 2000n).next, 0n);
  // ethereumjs computes the same hashes from its own fork list.
  const ethereumjs = createChainCommon(genesis);
  t.is(hex(at(10n, 500n).hash), ethereumjs.forkHash('london', built.hash));
  t.is(hex(at(11n, 2000n).hash), ethereumjs.forkHash('cancun', built.hash));

  const head = { number: 10n, timestamp: 500n };
  t.is(checkRemoteForkId(schedule, head, at(10n, 500n)), undefined, 'same state');
  t.is(checkRemoteForkId(schedule, head, at(0n, 0n)), undefined, 'peer behind, knows our next fork');
  t.truthy(checkRemoteForkId(schedule, head, { hash: at(0n, 0n).hash, next: 11n }), 'peer behind with another next fork');
  t.is(checkRemoteForkId(schedule, head, at(11n, 1500n)), undefined, 'peer ahead');
  t.truthy(checkRemoteForkId(schedule, head, { hash: Uint8Array.of(1, 2, 3, 4), next: 0n }), 'unknown checksum');
  t.is(checkRemoteForkId(schedule, { number: 10n, timestamp: 1500n }, at(10n, 500n)), undefined, 'peer one fork behind');
  t.truthy(checkRemoteForkId(schedule, head, { hash: at(10n, 500n).hash, next: 5n }), 'peer announces a fork this node passed');
});

test('fork ids of the dev, Besu test and a forked genesis: ours agree with ethereumjs\' and fill the Common the devp2p library reads', async (t) => {
  const genesisFiles = {
    dev: JSON.parse(readFileSync(join(REPO_ROOT, 'genesis/dev.json'), 'utf8')) as unknown,
    besuTestChain: JSON.parse(readFileSync(join(BESU_FIXTURES, 'chain/testGenesis.json'), 'utf8')) as unknown,
    forked: FORKED_GENESIS,
  };
  for (const [name, json] of Object.entries(genesisFiles)) {
    const genesis = parseGenesis(json);
    const built = await buildGenesis(genesis);
    const schedule = genesisForkSchedule(genesis, built.hash);
    const ethereumjs = createChainCommon(genesis);
    const hardforks = built.common.hardforks();
    for (const [i, hardfork] of hardforks.entries()) {
      const ours = forkIdAtActivation(schedule, hardforkActivation(hardfork));
      t.is(built.common.forkHash(hardfork.name), forkHashHex(ours), `${name} ${hardfork.name}: the Common carries our fork hash`);
      // ethereumjs answers per name: Paris, activated with the first time fork, would lack that activation.
      if (hardfork.name === 'paris' && hardforks[i + 1]?.timestamp === hardfork.timestamp) continue;
      t.is(ethereumjs.forkHash(hardfork.name, built.hash), forkHashHex(ours), `${name} ${hardfork.name}: hash`);
      t.is(ethereumjs.nextHardforkBlockOrTimestamp(hardfork.name) ?? 0n, ours.next, `${name} ${hardfork.name}: next`);
    }
  }
});

test('eth/68 Status encodes, decodes and is checked for network, genesis and fork id', async (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const built = await buildGenesis(genesis);
  const schedule = genesisForkSchedule(genesis, built.hash);
  const head = { number: 5n, timestamp: 100n };
  const status = { version: 68, networkId: 4242n, totalDifficulty: 6n, bestHash: new Uint8Array(32).fill(7), genesisHash: built.hash, forkId: forkIdAt(schedule, head) };
  const encoded = encodeStatus(status);
  t.deepEqual(decodeStatus(encoded), status);
  const local = { networkId: 4242n, schedule, head };
  t.is(checkRemoteStatus(local, status), undefined);
  t.regex(checkRemoteStatus(local, { ...status, networkId: 1n }) ?? '', /network id/);
  t.regex(checkRemoteStatus(local, { ...status, genesisHash: new Uint8Array(32) }) ?? '', /genesis/);
  t.regex(checkRemoteStatus(local, { ...status, forkId: { hash: Uint8Array.of(0, 0, 0, 0), next: 0n } }) ?? '', /fork id/);
  t.throws(() => decodeStatus(Uint8Array.of(0xc0)));
});

// ---------------------------------------------------------------------------------------------
// admin_nodeInfo and admin_peers shapes
// ---------------------------------------------------------------------------------------------

test('admin_nodeInfo: config keys only when set, numbers where Besu prints numbers, activeFork', (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const config = nodeInfoConfig(genesis);
  t.deepEqual(config, {
    chainId: 4242, homesteadBlock: 0, eip150Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0,
    petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 10, shanghaiTime: 1000, cancunTime: 2000,
    qbft: { epochLength: 30000, blockPeriodSeconds: 2, requestTimeoutSeconds: 4 },
  });
  t.is(activeFork(genesis, { number: 0n, timestamp: 0n }), 'Berlin');
  t.is(activeFork(genesis, { number: 10n, timestamp: 999n }), 'London');
  t.is(activeFork(genesis, { number: 11n, timestamp: 2000n }), 'Cancun');

  const info = nodeInfo({
    idHex: ID, host: '127.0.0.1', listenPort: 30303, clientVersion: 'basalt/v0.1.0/linux-x86_64/nodejs-20', genesis,
    genesisHash: new Uint8Array(32).fill(1), networkId: 4242n,
    head: { number: 3n, hash: new Uint8Array(32).fill(2), timestamp: 6n, totalDifficulty: 4n },
  });
  t.deepEqual(info, {
    enode: `enode://${ID}@127.0.0.1:30303?discport=0`,
    id: ID,
    ip: '127.0.0.1',
    listenAddr: '127.0.0.1:30303',
    name: 'basalt/v0.1.0/linux-x86_64/nodejs-20',
    ports: { listener: 30303 },
    protocols: { eth: { config, difficulty: 4, genesis: '0x' + '01'.repeat(32), head: '0x' + '02'.repeat(32), network: 4242 } },
    activeFork: 'Berlin',
  });
  const zeroFee = parseGenesisJson(JSON.stringify({ ...FORKED_GENESIS, config: { chainId: 1, zeroBaseFee: true, londonBlock: '0x0' } }));
  t.deepEqual(nodeInfoConfig(zeroFee), { chainId: 1, londonBlock: 0, zeroBaseFee: true });
});

test('admin_peers element: Besu key order, id with 0x, quantities', (t) => {
  const peer = peerInfo({
    p2pVersion: 5, clientId: 'besu/v26.1.0/linux-x86_64/openjdk-java-21', capabilities: [{ name: 'eth', version: 68 }, { name: 'istanbul', version: 100 }],
    localAddress: '127.0.0.1:30303', remoteAddress: '127.0.0.1:45678', inbound: true, listenPort: 30304, idHex: ID,
    remoteHost: '127.0.0.1', status: { totalDifficulty: 17n, bestHash: new Uint8Array(32).fill(3), version: 68 },
  });
  t.deepEqual(Object.keys(peer), ['version', 'name', 'caps', 'network', 'port', 'id', 'protocols', 'enode']);
  t.deepEqual(peer, {
    version: '0x5',
    name: 'besu/v26.1.0/linux-x86_64/openjdk-java-21',
    caps: ['eth/68', 'istanbul/100'],
    network: { localAddress: '127.0.0.1:30303', remoteAddress: '127.0.0.1:45678', inbound: true },
    port: '0x7660',
    id: '0x' + ID,
    protocols: { eth: { difficulty: '0x11', head: '0x' + '03'.repeat(32), version: 68 } },
    enode: `enode://${ID}@127.0.0.1:30304`,
  });
});

// ---------------------------------------------------------------------------------------------
// Static peers
// ---------------------------------------------------------------------------------------------

test('peer table: static peers are due at once, then back off exponentially up to the cap', (t) => {
  const table = new PeerTable({ initialMs: 100, maxMs: 350 });
  const enode = parseEnode(`enode://${ID}@127.0.0.1:30303`);
  t.true(table.add(enode, 0));
  t.false(table.add(enode, 0), 'already static');
  const idle = () => false;
  t.deepEqual(table.due(0, idle), [enode]);
  t.deepEqual(table.due(0, () => true), [], 'busy peers are not dialled');
  table.failed(ID, 0);
  t.deepEqual(table.due(99, idle), []);
  t.deepEqual(table.due(100, idle).length, 1);
  table.failed(ID, 100);
  t.deepEqual(table.due(299, idle), []);
  t.deepEqual(table.due(300, idle).length, 1);
  table.failed(ID, 300);
  table.failed(ID, 300);
  t.deepEqual(table.due(649, idle), [], 'capped at 350 ms');
  t.deepEqual(table.due(650, idle).length, 1);
  table.connected(ID);
  table.failed(ID, 1000);
  t.deepEqual(table.due(1100, idle).length, 1, 'backoff restarts after a connection');
  t.true(table.remove(ID));
  t.false(table.remove(ID));
  t.deepEqual(table.due(10_000, idle), []);
});

test('peer table: discovered peers are dialled only while --max-peers leaves room, static ones always', (t) => {
  const table = new PeerTable({ initialMs: 100, maxMs: 350 });
  const ids = ['1', '2', '3'].map((digit) => digit.repeat(128));
  const [staticPeer, found1, found2] = ids.map((id) => parseEnode(`enode://${id}@127.0.0.1:30303`));
  table.add(staticPeer!, 0);
  table.addDiscovered(found1!, 0);
  table.addDiscovered(found2!, 0);
  table.addDiscovered(staticPeer!, 0);
  t.true(table.isStatic(ids[0]!), 'discovery does not demote a static peer');
  t.false(table.isStatic(ids[1]!));
  const idle = () => false;
  t.deepEqual(table.due(0, idle, 0), [staticPeer]);
  t.deepEqual(table.due(0, idle, 1), [staticPeer, found1]);
  t.deepEqual(table.due(0, idle, 5), [staticPeer, found1, found2]);
  t.false(table.remove(ids[1]!), 'admin_removePeer removes static peers only');
  table.forgetDiscovered(ids[1]!);
  table.forgetDiscovered(ids[0]!);
  t.deepEqual(table.due(0, idle, 5), [staticPeer, found2]);
  t.true(table.add(found2!, 0), 'admin_addPeer of a discovered peer makes it static');
  t.is(table.size, 2);
});

/** @ethereumjs/devp2p's MAC as the library writes it (pure-JS keccak): the reference for ours. */
class ReferenceMac {
  private readonly hash = keccak_256.create();
  constructor(private readonly secret: Uint8Array) {}
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  updateHeader(data: Uint8Array): void {
    const encrypted = createCipheriv('aes-256-ecb', this.secret, '').update(this.digest());
    this.hash.update(Uint8Array.from(encrypted, (byte, i) => byte ^ data[i]!));
  }
  updateBody(data: Uint8Array): void {
    this.hash.update(data);
    const prev = this.digest();
    const encrypted = createCipheriv('aes-256-ecb', this.secret, '').update(prev);
    this.hash.update(Uint8Array.from(encrypted, (byte, i) => byte ^ prev[i]!));
  }
  digest(): Uint8Array {
    return Uint8Array.from(this.hash.clone().digest().subarray(0, 16));
  }
}

test('RLPx frame MACs on the WebAssembly keccak give the library\'s digests, step by step, for two MACs at once', (t) => {
  useWasmRlpxMac();
  const secret = new Uint8Array(randomBytes(32));
  const ours = [new MAC(secret), new MAC(secret)];
  const reference = [new ReferenceMac(secret), new ReferenceMac(secret)];
  // Interleaved, as ingress and egress MACs of one connection are: each keeps its own running hash.
  for (let step = 0; step < 200; step++) {
    const which = step % 2;
    const kind = step % 3;
    // Sizes around keccak's 136-byte rate and far beyond it (a proposal's frames).
    const data = new Uint8Array(randomBytes(kind === 1 ? 16 : [0, 1, 135, 136, 137, 1000, 70_000][step % 7]!));
    if (kind === 0) {
      ours[which]!.update(data);
      reference[which]!.update(data);
    } else if (kind === 1) {
      ours[which]!.updateHeader(data);
      reference[which]!.updateHeader(data);
    } else {
      ours[which]!.updateBody(data);
      reference[which]!.updateBody(data);
    }
    t.deepEqual(hex(ours[which]!.digest()), hex(reference[which]!.digest()), `step ${step}`);
  }
});

// ---------------------------------------------------------------------------------------------
// Two services over loopback
// ---------------------------------------------------------------------------------------------

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** RLPx connections past the TCP connect, kept or not: the listener's and the dialler's (the library's own count). */
const openConnections = (s: P2pService): number => (['listener', 'dialler'] as const).reduce((n, side) => n + (s[side]?.getPeers().length ?? 0), 0);

/** What a service reported: its log lines and each change of its peer count. */
interface Reports {
  logs: string[];
  peerCounts: number[];
}

async function service(
  genesis: Genesis,
  genesisHash: Uint8Array,
  key = randomPrivateKey(),
  received: unknown[] = [],
  reports: Reports = { logs: [], peerCounts: [] },
  txpool?: GossipPool,
) {
  const head: ChainHeadFacts = { number: 0n, hash: genesisHash, timestamp: 0n, totalDifficulty: 1n };
  const s = new P2pService(
    { privateKey: key, clientId: 'basalt/test', advertisedHost: '127.0.0.1', listenHost: '127.0.0.1', listenPort: 0, maxPeers: 25,
      networkId: genesis.networkId, genesis, genesisHash, head, backoff: { initialMs: 50, maxMs: 200 }, ...(txpool ? { txpool } : {}) },
    {
      onIstanbulMessage: (code, data, origin) => received.push({ code, data: hex(data), origin }),
      onPeerCount: (count) => reports.peerCounts.push(count),
      log: (message) => reports.logs.push(message),
    },
  );
  await s.start();
  return s;
}

const logsAbout = (reports: Reports, what: string, service: P2pService, since = 0) =>
  reports.logs.slice(since).filter((line) => line.startsWith(what) && line.includes(service.idHex.slice(0, 16)));

test('two services connect, exchange Status and istanbul messages, and part on removal', async (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const built = await buildGenesis(genesis);
  const receivedByB: unknown[] = [];
  const aReports: Reports = { logs: [], peerCounts: [] };
  const a = await service(genesis, built.hash, randomPrivateKey(), [], aReports);
  const bKey = randomPrivateKey();
  const b = await service(genesis, built.hash, bKey, receivedByB);
  // A node that A dials and drops again and again: its dials show that A's dialling goes on.
  const otherGenesis = parseGenesis({ ...FORKED_GENESIS, extraData: '0x01' });
  const stranger = await service(otherGenesis, (await buildGenesis(otherGenesis)).hash);
  t.teardown(() => Promise.all([a.stop(), b.stop(), stranger.stop()]));

  t.true(a.addPeer(parseEnode(b.enode)));
  t.false(a.addPeer(parseEnode(b.enode)));
  await waitFor('both sides connected', () => a.peerCount === 1 && b.peerCount === 1);
  const [peerOfA] = a.peerList() as { id: string; caps: string[]; network: { inbound: boolean } }[];
  const [peerOfB] = b.peerList() as { id: string; network: { inbound: boolean } }[];
  t.is(peerOfA!.id, `0x${b.idHex}`);
  t.deepEqual(peerOfA!.caps, ['eth/68', 'istanbul/100']);
  t.false(peerOfA!.network.inbound);
  t.is(peerOfB!.id, `0x${a.idHex}`);
  t.true(peerOfB!.network.inbound);

  // QBFT messages go only to recipients, once per content, and never back to their origin.
  const bAddress = keccak_256(nodeIdOf(bKey)).subarray(12);
  const data = Uint8Array.of(0xc2, 0x01, 0x02);
  t.is(a.sendIstanbul({ code: 0x13, data, recipients: [], excludeAddresses: [] }), 0, 'no recipient');
  t.is(a.sendIstanbul({ code: 0x13, data: Uint8Array.of(0xc1, 0x05), recipients: [bAddress], excludeAddresses: [bAddress] }), 0, 'excluded author');
  t.is(a.sendIstanbul({ code: 0x13, data: Uint8Array.of(0xc1, 0x06), recipients: [bAddress], excludeAddresses: [], excludePeer: b.idHex }), 0, 'excluded origin');
  t.is(a.sendIstanbul({ code: 0x14, data: Uint8Array.of(0xc1, 0x07), recipients: [bAddress], excludeAddresses: [] }), 1);
  t.is(a.sendIstanbul({ code: 0x14, data: Uint8Array.of(0xc1, 0x07), recipients: [bAddress], excludeAddresses: [] }), 0, 'sent before');
  await waitFor('the message at B', () => receivedByB.length === 1);
  t.deepEqual(receivedByB, [{ code: 0x14, data: '0xc107', origin: a.idHex }]);

  t.true(a.removePeer(parseEnode(b.enode)));
  t.false(a.removePeer(parseEnode(b.enode)));
  await waitFor('both sides disconnected', () => a.peerCount === 0 && b.peerCount === 0);
  // Still static, B would be due 50 ms after the drop: a dial of the stranger due later goes in the
  // same maintenance pass at the earliest, and A logs each dial as it starts it.
  const removedAt = aReports.logs.length;
  a.addPeer(parseEnode(stranger.enode));
  await waitFor('A dialling the stranger twice', () => logsAbout(aReports, 'Dialling', stranger, removedAt).length >= 2);
  t.deepEqual(logsAbout(aReports, 'Dialling', b, removedAt), [], 'a removed peer is not redialled');
  t.is(a.peerCount, 0);
});

/**
 * A pool for gossip tests: holds what it was given, admits what peers send (handing each new one to
 * `onAdmitted`, as the txpool actor hands admitted transactions back to p2p) and records which hashes
 * it was asked about, i.e. which ones reached it only as announcements.
 */
class RecordingPool implements GossipPool {
  readonly held = new Map<string, Uint8Array>();
  readonly askedAbout: string[] = [];
  onAdmitted: (raw: Uint8Array, hash: Uint8Array) => void = () => undefined;

  async add(raws: Uint8Array[], hashes: Uint8Array[]): Promise<unknown> {
    raws.forEach((raw, i) => {
      if (this.held.has(hex(hashes[i]!))) return;
      this.held.set(hex(hashes[i]!), raw);
      this.onAdmitted(raw, hashes[i]!);
    });
    return null;
  }
  async pooled(hashes: Uint8Array[]): Promise<Uint8Array[]> {
    return hashes.flatMap((hash) => this.held.get(hex(hash)) ?? []);
  }
  async unknown(hashes: Uint8Array[]): Promise<Uint8Array[]> {
    this.askedAbout.push(...hashes.map(hex));
    return hashes.filter((hash) => !this.held.has(hex(hash)));
  }
}

test('transactions submitted here go whole to peers; ones from a peer are announced onward and fetched by who lacks them', async (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const built = await buildGenesis(genesis);
  const pools = [new RecordingPool(), new RecordingPool(), new RecordingPool()];
  // A line: A — B — C. C hears of A's transaction only through B.
  const [a, b, c] = await Promise.all(pools.map((pool) => service(genesis, built.hash, randomPrivateKey(), [], undefined, pool)));
  t.teardown(() => Promise.all([a!.stop(), b!.stop(), c!.stop()]));
  pools[1]!.onAdmitted = (raw, hash) => b!.gossipTransactions([{ hash, type: 2, raw, local: false }]);
  a!.addPeer(parseEnode(b!.enode));
  c!.addPeer(parseEnode(b!.enode));
  await waitFor('the line connected', () => a!.peerCount === 1 && b!.peerCount === 2 && c!.peerCount === 1);

  // Any bytes do: gossip neither decodes nor checks them, and their keccak is their hash.
  const raw = Uint8Array.of(0x02, 0xc3, 0x01, 0x02, 0x03);
  const hash = keccak_256(raw);
  a!.gossipTransactions([{ hash, type: 2, raw, local: true }]);
  await waitFor('the transaction at C', () => pools[2]!.held.has(hex(hash)));
  t.deepEqual(pools[1]!.askedAbout, [], 'B got it whole from A, where it was submitted');
  t.deepEqual(pools[2]!.askedAbout, [hex(hash)], 'C got an announcement from B, then fetched it');
  t.deepEqual(pools[2]!.held.get(hex(hash)), raw);
  t.false(pools[0]!.askedAbout.includes(hex(hash)), 'B does not tell A of what A sent it');
});

test('a node with another genesis is dropped after Status; a static peer is redialled after it restarts', async (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const built = await buildGenesis(genesis);
  const otherGenesis = parseGenesis({ ...FORKED_GENESIS, extraData: '0x01' });
  const other = await buildGenesis(otherGenesis);
  const aReports: Reports = { logs: [], peerCounts: [] };
  const strangerReports: Reports = { logs: [], peerCounts: [] };
  const a = await service(genesis, built.hash, randomPrivateKey(), [], aReports);
  const stranger = await service(otherGenesis, other.hash, randomPrivateKey(), [], strangerReports);
  t.teardown(() => Promise.all([a.stop(), stranger.stop()]));
  a.addPeer(parseEnode(stranger.enode));
  // Refused on the first dial and again on the redial after the backoff; never counted as a peer.
  await waitFor('the stranger refused twice', () => logsAbout(aReports, 'Peer', stranger).filter((line) => /Genesis block mismatch/.test(line)).length >= 2);
  t.deepEqual(aReports.peerCounts, []);
  t.deepEqual(strangerReports.peerCounts, []);
  t.is(a.peerCount, 0);
  t.is(stranger.peerCount, 0);

  const bKey = randomPrivateKey();
  const b1 = await service(genesis, built.hash, bKey);
  a.addPeer(parseEnode(b1.enode));
  await waitFor('connected', () => a.peerCount === 1);
  const port = b1.port;
  await b1.stop();
  await waitFor('disconnected', () => a.peerCount === 0);
  const b2 = new P2pService({ privateKey: bKey, clientId: 'basalt/test', advertisedHost: '127.0.0.1', listenHost: '127.0.0.1', listenPort: port,
    maxPeers: 25, networkId: genesis.networkId, genesis, genesisHash: built.hash, head: { number: 0n, hash: built.hash, timestamp: 0n, totalDifficulty: 1n } });
  await b2.start();
  t.teardown(() => b2.stop());
  await waitFor('reconnected', () => a.peerCount === 1 && b2.peerCount === 1);
  t.pass();
});

test('two services dialling each other at once keep exactly one connection', async (t) => {
  const genesis = parseGenesis(FORKED_GENESIS);
  const built = await buildGenesis(genesis);
  const aReports: Reports = { logs: [], peerCounts: [] };
  const bReports: Reports = { logs: [], peerCounts: [] };
  const a = await service(genesis, built.hash, randomPrivateKey(), [], aReports);
  const b = await service(genesis, built.hash, randomPrivateKey(), [], bReports);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  a.addPeer(parseEnode(b.enode));
  b.addPeer(parseEnode(a.enode));
  await waitFor('both sides connected', () => a.peerCount === 1 && b.peerCount === 1);
  // Both ends keep the connection the node with the smaller id initiated, and it stays: the other
  // one closes (the library ends a refused connection up to 2 s later) without taking it along.
  await waitFor('the other connection closed on both sides', () => openConnections(a) === 1 && openConnections(b) === 1, 10_000);
  t.deepEqual(aReports.peerCounts, [1]);
  t.deepEqual(bReports.peerCounts, [1]);
  const [peerOfA] = a.peerList() as { network: { inbound: boolean } }[];
  const [peerOfB] = b.peerList() as { network: { inbound: boolean } }[];
  t.is(a.peerCount, 1);
  t.is(b.peerCount, 1);
  t.is(peerOfA!.network.inbound, a.idHex > b.idHex, 'A dialled iff its id is the smaller');
  t.is(peerOfB!.network.inbound, !peerOfA!.network.inbound);
});
