/**
 * devp2p between real node processes on loopback: admin_nodeInfo / net_enode, admin_addPeer and
 * admin_removePeer with Besu's answers and errors, admin_peers on both sides, net_peerCount, the
 * P2P-disabled errors, a node of another genesis refused after Status, `--bootnodes` at start, four
 * validators agreeing on blocks over istanbul/100, and full sync of a restarted validator and of a late
 * non-validator node over eth/68.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { genesisExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf } from '../../src/shared/qbft/seal.js';
import { nodeIdOf } from '../../src/shared/ethereum/node-id.js';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { JsonRpcProvider, Wallet, parseEther } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { REPO_ROOT, launchNode, removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { LaunchedNode, NodeProcess } from '../helpers/node-process.js';

const P2P_DISABLED = { code: -32000, message: 'P2P has been disabled. This functionality is not available' };
const APIS = '--rpc-http-api=ETH,NET,WEB3,ADMIN';

/** Every node a test launched, killed at the end whatever happened. */
const launched: Promise<NodeProcess>[] = [];
const paths: string[] = [];

test.after.always(async () => {
  const nodes = await Promise.allSettled(launched);
  await Promise.all(nodes.map((n) => (n.status === 'fulfilled' ? n.value.kill() : undefined)));
  for (const path of paths) removeDataPath(path);
});

function keyFile(): string {
  const dir = tempDataPath();
  paths.push(dir);
  const path = join(dir, 'key');
  writeFileSync(path, formatNodeKey(randomBytes(32)));
  return path;
}

/** A node with devp2p on; on the dev network unless `genesis` is given; on `dataPath` when given (the caller removes it). */
function launchP2pNode(args: string[], genesis?: string, dataPath?: string): LaunchedNode {
  const node = launchNode({ p2p: true, args: [APIS, ...args], ...(genesis ? { genesis } : {}), ...(dataPath ? { dataPath } : {}) });
  launched.push(node.ready);
  if (!dataPath) void node.ready.then((n) => paths.push(n.dataPath), () => undefined);
  return node;
}

const devNode = (args: string[]): Promise<NodeProcess> => launchP2pNode(args).ready;
const genesisNode = (genesis: string, args: string[]): Promise<NodeProcess> => launchP2pNode(args, genesis).ready;

interface Reply {
  status: number;
  body: { id?: unknown; result?: unknown; error?: { code: number; message: string } };
}

async function call(node: NodeProcess, method: string, params: unknown[], id: unknown = 7): Promise<Reply> {
  const res = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  return { status: res.status, body: (await res.json()) as Reply['body'] };
}

interface PeerJson {
  version: string;
  name: string;
  caps: string[];
  network: { localAddress: string; remoteAddress: string; inbound: boolean };
  port: string;
  id: string;
  protocols: { eth?: { difficulty: string; head: string; version: number } };
  enode: string;
}

interface NodeInfoJson {
  enode: string;
  id: string;
  ip: string;
  listenAddr: string;
  name: string;
  ports: { listener: number };
  protocols: { eth: { config: { chainId: number }; difficulty: number; genesis: string; head: string; network: number } };
  activeFork: string;
}

const peersOf = (node: NodeProcess) => node.rpc<PeerJson[]>('admin_peers');

test.serial('two dev nodes: nodeInfo, addPeer, peers on both sides, errors, removePeer', async (t) => {
  // A logs at DEBUG: each dial it starts is a line.
  const [a, b] = await Promise.all([devNode(['--logging=DEBUG']), devNode([`--node-private-key-file=${keyFile()}`])]);

  const info = await a.rpc<NodeInfoJson>('admin_nodeInfo');
  t.regex(info.id, /^[0-9a-f]{128}$/);
  const p2pPort = a.p2pPort!;
  // Discovery runs (Besu's default) on the listening port, so the enode has no discport.
  t.is(info.enode, `enode://${info.id}@127.0.0.1:${p2pPort}`);
  t.is(info.listenAddr, `127.0.0.1:${p2pPort}`);
  t.deepEqual(info.ports, { discovery: p2pPort, listener: p2pPort });
  t.is(info.ip, '127.0.0.1');
  t.is(info.name, await a.rpc<string>('web3_clientVersion'));
  t.is(await a.rpc('net_enode'), info.enode);
  t.is(info.protocols.eth.network, 1337);
  t.is(info.protocols.eth.config.chainId, 1337);
  t.is(info.protocols.eth.genesis, ((await a.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false])).hash));
  t.regex(info.protocols.eth.head, /^0x[0-9a-f]{64}$/);
  t.is(typeof info.protocols.eth.difficulty, 'number');
  t.is(info.activeFork, 'Osaka');
  t.is(await a.rpc('eth_protocolVersion'), '0x44');
  t.deepEqual(await a.rpc('net_services'), {
    jsonrpc: { host: '127.0.0.1', port: String(a.port) },
    p2p: { host: '127.0.0.1', port: String(p2pPort) },
  });
  t.is(await a.rpc('net_peerCount'), '0x0');

  // Errors, in Besu's order: unparsable → -32700 with HTTP 400 and the id kept; bad id; own node.
  const unparsable = await call(a, 'admin_addPeer', ['enode://nonsense'], 'x1');
  t.is(unparsable.status, 400);
  t.deepEqual(unparsable.body, { jsonrpc: '2.0', id: 'x1', error: { code: -32700, message: 'Parse error' } });
  t.deepEqual((await call(a, 'admin_addPeer', [`enode://0x${'ab'.repeat(63)}@127.0.0.1:30303`])).body.error, {
    code: -32000,
    message: "Invalid node ID: node ID must have exactly 128 hexadecimal characters and should not include any '0x' hex prefix.",
  });
  t.deepEqual((await call(a, 'admin_addPeer', [info.enode])).body.error, { code: -32100, message: 'Cannot add local node as peer.' });
  t.deepEqual((await call(a, 'admin_addPeer', [42])).body.error, { code: -32602, message: 'Invalid enode params' });
  t.deepEqual((await call(a, 'admin_removePeer', [])).body.error, { code: -32602, message: 'Invalid number of params' });

  const enodeB = await b.rpc<string>('net_enode');
  const infoB = await b.rpc<NodeInfoJson>('admin_nodeInfo');
  t.not(infoB.id, info.id, 'B has its own node key');
  t.is(await a.rpc('admin_addPeer', [enodeB]), true);
  const [peerOfA] = await waitFor('A lists B', () => peersOf(a), (p) => p.length === 1);
  const [peerOfB] = await waitFor('B lists A', () => peersOf(b), (p) => p.length === 1);
  t.deepEqual(Object.keys(peerOfA!), ['version', 'name', 'caps', 'network', 'port', 'id', 'protocols', 'enode']);
  t.is(peerOfA!.id, `0x${infoB.id}`);
  t.is(peerOfB!.id, `0x${info.id}`);
  t.is(peerOfA!.version, '0x5');
  t.regex(peerOfA!.name, /^basalt\/v/);
  t.true(peerOfA!.caps.includes('eth/68') && peerOfA!.caps.includes('istanbul/100'));
  t.false(peerOfA!.network.inbound);
  t.true(peerOfB!.network.inbound);
  t.is(peerOfA!.network.remoteAddress, `127.0.0.1:${new URL(enodeB.replace('enode://', 'http://')).port}`);
  t.is(peerOfB!.network.localAddress, peerOfA!.network.remoteAddress);
  t.is(peerOfA!.enode, enodeB);
  t.is(peerOfA!.protocols.eth?.version, 68);
  t.is(peerOfB!.port, `0x${p2pPort.toString(16)}`);
  t.is(await a.rpc('net_peerCount'), '0x1');
  t.is(await b.rpc('net_peerCount'), '0x1');
  t.is(await a.rpc('admin_addPeer', [enodeB]), false, 'already a static peer');

  t.is(await a.rpc('admin_removePeer', [enodeB]), true);
  await waitFor('A without peers', () => peersOf(a), (p) => p.length === 0);
  await waitFor('B without peers', () => peersOf(b), (p) => p.length === 0);
  t.is(await a.rpc('admin_removePeer', [enodeB]), false, 'no longer a static peer');
  // Still static, B would be due 1 s after the drop. A peer that refuses connections, added now, is
  // dialled at once and again 1 s after that: B's dial would come in that pass at the latest, and
  // its line before the refusal that ends the refusing peer's dial.
  const removedAt = a.output().length;
  const refusing = `enode://${Buffer.from(nodeIdOf(randomBytes(32))).toString('hex')}@127.0.0.1:1`;
  t.is(await a.rpc('admin_addPeer', [refusing]), true);
  const idOf = (enode: string) => enode.slice('enode://'.length, 'enode://'.length + 16);
  const refused = new RegExp(`Could not connect to ${idOf(refusing)}`);
  const first = await a.waitForLog(refused, { since: removedAt });
  await a.waitForLog(refused, { since: first.end });
  t.notRegex(a.output().slice(removedAt), new RegExp(`Dialling ${idOf(enodeB)}`), 'a removed peer is not redialled');
  t.deepEqual(await peersOf(a), []);
  t.is(await b.rpc('net_peerCount'), '0x0');
  await Promise.all([a.stop(), b.stop()]);
});

test.serial('with --p2p-enabled=false the peer methods answer Besu\'s P2P-disabled error', async (t) => {
  const node = await startNode({ args: [APIS] });
  launched.push(Promise.resolve(node));
  paths.push(node.dataPath);
  for (const method of ['net_enode', 'admin_nodeInfo', 'admin_peers', 'net_peerCount']) {
    t.deepEqual((await call(node, method, [])).body.error, P2P_DISABLED, method);
  }
  t.deepEqual((await call(node, 'admin_addPeer', [`enode://${'ab'.repeat(64)}@127.0.0.1:30303`])).body.error, P2P_DISABLED);
  const unparsable = await call(node, 'admin_addPeer', ['nope']);
  t.is(unparsable.status, 400, 'a bad enode is still a parse error, as in Besu');
  t.is(await node.rpc('net_listening'), false);
  t.deepEqual(await node.rpc('net_services'), { jsonrpc: { host: '127.0.0.1', port: String(node.port) } });
  await node.stop();
});

test.serial('a node of another genesis is not kept; --bootnodes connects at start', async (t) => {
  // Without discovery A cannot learn the follower and dial it too: the one connection is the follower's dial.
  const noDiscovery = '--discovery-enabled=false';
  const a = await devNode([noDiscovery]);
  const enodeA = await a.rpc<string>('net_enode');

  // The dev genesis with one more funded account: same chain id and forks, another genesis hash.
  const dir = tempDataPath();
  paths.push(dir);
  const genesis = JSON.parse(readFileSync(join(REPO_ROOT, 'genesis/dev.json'), 'utf8')) as { alloc: Record<string, unknown> };
  genesis.alloc['00000000000000000000000000000000000000aa'] = { balance: '0x1' };
  const genesisPath = join(dir, 'other.json');
  writeFileSync(genesisPath, JSON.stringify(genesis));
  // The stranger logs at DEBUG: each refusal of its Status is a line.
  const stranger = await genesisNode(genesisPath, [`--node-private-key-file=${keyFile()}`, '--logging=DEBUG']);
  t.not((await stranger.rpc<NodeInfoJson>('admin_nodeInfo')).protocols.eth.genesis, (await a.rpc<NodeInfoJson>('admin_nodeInfo')).protocols.eth.genesis);
  t.is(await stranger.rpc('admin_addPeer', [enodeA]), true);

  const follower = await devNode([noDiscovery, `--node-private-key-file=${keyFile()}`, `--bootnodes=${enodeA}`]);
  const followerId = (await follower.rpc<NodeInfoJson>('admin_nodeInfo')).id;
  const peers = await waitFor('the bootnode connection', () => peersOf(a), (p) => p.some((peer) => peer.id === `0x${followerId}`));
  t.true(peers.find((peer) => peer.id === `0x${followerId}`)!.network.inbound, 'the follower dialled A');
  t.is((await peersOf(follower))[0]?.id, `0x${(await a.rpc<NodeInfoJson>('admin_nodeInfo')).id}`);

  // The stranger dials A again and again (backoff from 1 s), and each time the genesis differs.
  const refused = /Peer [0-9a-f]{16}…: Genesis block mismatch/;
  const first = await stranger.waitForLog(refused);
  await stranger.waitForLog(refused, { since: first.end });
  t.notRegex(stranger.output(), /Connected to peer/, 'never kept');
  t.deepEqual(await peersOf(stranger), []);
  const strangerId = `0x${(await stranger.rpc<NodeInfoJson>('admin_nodeInfo')).id}`;
  t.false((await peersOf(a)).some((peer) => peer.id === strangerId));
  t.is(await a.rpc('net_peerCount'), '0x1');
  await Promise.all([a.stop(), stranger.stop(), follower.stop()]);
});

/**
 * Four validator processes on a fresh QBFT genesis (2 s blocks). Each listens on a port of its own
 * choosing, so each is given the ones started before it as --bootnodes: every pair is dialled once.
 */
interface ValidatorNetwork {
  nodes: NodeProcess[];
  genesisPath: string;
  keyPaths: string[];
  /** Node ids (hex). */
  ids: string[];
  p2pPorts: number[];
}

const enodeOf = (network: ValidatorNetwork, i: number) => `enode://${network.ids[i]}@127.0.0.1:${network.p2pPorts[i]}`;

async function startValidatorNetwork(): Promise<ValidatorNetwork> {
  const keys = [0, 1, 2, 3].map(() => new Uint8Array(randomBytes(32)));
  const validators = keys.map(addressOf).sort((a, b) => Buffer.compare(a, b));
  const dir = tempDataPath();
  paths.push(dir);
  const genesis = JSON.parse(readFileSync(join(REPO_ROOT, 'genesis/dev.json'), 'utf8')) as { extraData: string; config: { qbft: Record<string, number> } };
  genesis.extraData = `0x${Buffer.from(genesisExtraData(validators)).toString('hex')}`;
  genesis.config.qbft = { blockperiodseconds: 2, epochlength: 30000, requesttimeoutseconds: 4 };
  const genesisPath = join(dir, 'four.json');
  writeFileSync(genesisPath, JSON.stringify(genesis));
  const keyPaths = keys.map((key, i) => {
    const path = join(dir, `key${i}`);
    writeFileSync(path, formatNodeKey(key));
    return path;
  });
  const network: ValidatorNetwork = { nodes: [], genesisPath, keyPaths, ids: keys.map((key) => Buffer.from(nodeIdOf(key)).toString('hex')), p2pPorts: [] };
  // The next validator starts as soon as the previous one listens for peers.
  const ready: Promise<NodeProcess>[] = [];
  for (let i = 0; i < keys.length; i++) {
    const validator = launchValidator(network, i);
    ready.push(validator.ready);
    network.p2pPorts.push(await validator.p2pPort);
  }
  network.nodes = await Promise.all(ready);
  return network;
}

/** Validator `i`, given every other validator that listens as a bootnode; on `dataPath` when given. */
function launchValidator(network: ValidatorNetwork, i: number, dataPath?: string): LaunchedNode {
  const bootnodes = network.p2pPorts.flatMap((_, j) => (j === i ? [] : [enodeOf(network, j)]));
  const debug = process.env.P2P_DEBUG ? ['--logging=DEBUG'] : [];
  const args = [`--node-private-key-file=${network.keyPaths[i]}`, ...(bootnodes.length > 0 ? [`--bootnodes=${bootnodes.join(',')}`] : []), ...debug];
  return launchP2pNode(args, network.genesisPath, dataPath);
}

const heightsOf = (nodes: NodeProcess[]) => Promise.all(nodes.map(async (n) => Number(await n.rpc<string>('eth_blockNumber'))));

/** Runs `body`; on failure the node logs say which connection or round went wrong. */
async function withNodeLogs(t: { log(...values: unknown[]): void }, nodes: () => NodeProcess[], body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    nodes().forEach((n, i) => t.log(`node ${i}:\n${n.output().split('\n').slice(process.env.P2P_DEBUG ? -400 : -40).join('\n')}`));
    throw err;
  }
}

async function expectSameBlocks(t: { is(actual: unknown, expected: unknown, message?: string): void }, nodes: NodeProcess[], from: number, to: number): Promise<void> {
  for (let height = from; height <= to; height++) {
    const hashes = await Promise.all(nodes.map(async (n) => (await n.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${height.toString(16)}`, false])).hash));
    t.is(new Set(hashes).size, 1, `block ${height}: ${hashes.join(', ')}`);
  }
}

// One network for agreement and for catching up (a network of its own for agreement alone took ~30 s of
// CI): the four form a full mesh, and every block up to the end is the same on all five nodes.
test.serial('four validators connected by --bootnodes agree on the same blocks; a validator that was down and a node that joins late catch up by full sync', async (t) => {
  const network = await startValidatorNetwork();
  const nodes = [...network.nodes];
  let joiner: NodeProcess | undefined;
  const all = () => (joiner ? [...nodes, joiner] : nodes);
  await withNodeLogs(t, all, async () => {
    await waitFor('a full mesh', () => Promise.all(nodes.map((n) => n.rpc<string>('net_peerCount'))), (counts) => counts.every((c) => c === '0x3'), 30_000);
    await waitFor('height 2 everywhere', () => heightsOf(nodes), (heights) => heights.every((h) => h >= 2), 60_000);
    // Three of four validators are a quorum: the chain goes on without validator 3.
    const downPath = nodes[3]!.dataPath;
    t.is(await nodes[3]!.stop(), 0);
    const [missedFrom] = await heightsOf([nodes[0]!]);
    await waitFor('three more blocks without validator 3', () => heightsOf(nodes.slice(0, 3)), (heights) => heights.every((h) => h >= missedFrom! + 3), 40_000);

    // Back on its old database, validator 3 fetches the blocks it missed, then commits again.
    const restarted = launchValidator(network, 3, downPath);
    network.p2pPorts[3] = await restarted.p2pPort;
    nodes[3] = await restarted.ready;
    // A node that is not a validator, knowing only validator 0, gets the whole chain.
    joiner = await genesisNode(network.genesisPath, [`--bootnodes=${enodeOf(network, 0)}`]);
    const [now] = await heightsOf([nodes[0]!]);
    await waitFor(`height ${now! + 2} on all five nodes`, () => heightsOf(all()), (heights) => heights.every((h) => h >= now! + 2), 40_000);
  });
  const [reached] = await heightsOf([joiner!]);
  await expectSameBlocks(t, all(), 1, reached!);
  await Promise.all(all().map((n) => n.stop()));
});

test.serial('a transaction sent to a non-validator node reaches the validator, and the block comes back', async (t) => {
  const validator = await devNode([]);
  const follower = await devNode([`--node-private-key-file=${keyFile()}`, `--bootnodes=${await validator.rpc<string>('net_enode')}`]);
  await withNodeLogs(t, () => [validator, follower], async () => {
    await waitFor('the follower connected', () => follower.rpc<string>('net_peerCount'), (count) => count === '0x1', 20_000);
    const provider = new JsonRpcProvider(follower.url, undefined, { staticNetwork: true, pollingInterval: 200 });
    const sender = new Wallet(DEV_ACCOUNTS[1].privateKey, provider);
    const recipient = Wallet.createRandom().address;
    const tx = await sender.sendTransaction({ to: recipient, value: parseEther('2') });
    // The follower produces no blocks: the receipt exists only if the validator got the transaction by
    // gossip, put it in a block, and the follower synced that block.
    const receipt = await tx.wait(1, 30_000);
    t.is(receipt!.status, 1);
    t.is(await provider.getBalance(recipient), parseEther('2'));
    const mined = await validator.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${receipt!.blockNumber.toString(16)}`, false]);
    t.is(mined.hash, receipt!.blockHash);
    provider.destroy();
  });
  await Promise.all([validator.stop(), follower.stop()]);
});
