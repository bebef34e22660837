/**
 * The devp2p service of a node on @ethereumjs/devp2p: RLPx listener and dialler, dialled static
 * peers, the eth/68 Status exchange (the library's ETH protocol plus Basalt's own checks) and the
 * istanbul/100 sub-protocol that carries QBFT messages (qbft-and-p2p.md §4.1, §4.7, §10).
 * It runs in the p2p actor; it has no thread or mailbox of its own, so two services can talk to each
 * other inside one test process. Static peers and bootnodes are always dialled; with discovery on
 * (`--discovery-enabled`, Besu's default) discovery v4 (the library's DPT) runs on the listening port
 * over UDP, seeded with the bootnodes, and the nodes it finds are dialled while --max-peers leaves room.
 */
import { DISCONNECT_REASON, DPT, ETH, RLPx } from '@ethereumjs/devp2p';
import type { PeerInfo, Peer as RlpxPeer } from '@ethereumjs/devp2p';
import type { Common } from '@ethereumjs/common';
import { bigIntToBytes, bytesToBigInt } from '@ethereumjs/util';
import { keccak256 } from '../shared/ethereum/keccak.js';
import { RLP } from '@ethereumjs/rlp';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { qbftOnChainHash } from '../shared/qbft/block-hash.js';
import { BlockSync, EthCode, numberOf } from './block-sync.js';
import type { SyncChain } from './block-sync.js';
import type { GossipTx } from '../shared/actors/messages.js';
import { createChainCommon } from '../shared/ethereum/common.js';
import { errorMessage } from '../shared/util/errors.js';
import { RecentKeys } from '../shared/util/recent-keys.js';
import type { Genesis } from '../shared/ethereum/genesis.js';
import type { Json } from '../shared/rpc/types.js';
import { nodeIdOf } from '../shared/ethereum/node-id.js';
import type { Enode } from '../shared/ethereum/enode.js';
import { checkRemoteStatus, genesisForkSchedule } from './eth-status.js';
import type { EthStatus } from './eth-status.js';
import type { ForkSchedule } from '../shared/ethereum/fork-id.js';
import { ISTANBUL_CAPABILITY, IstanbulProtocol, isQbftMessageCode } from './istanbul-protocol.js';
import {
  MAX_ANSWER_BYTES,
  MAX_FETCHES_PENDING,
  MAX_HASHES_PER_REQUEST,
  MAX_MESSAGE_SIZE,
  MAX_POOLED_TRANSACTIONS_SERVED,
  MAX_REQUESTS_IN_FLIGHT,
  MESSAGE_BUDGET,
  REQUEST_BUDGET,
  TokenBucket,
  groupsWithin,
  leadingItemsWithin,
} from './peer-limits.js';
import { useWasmRlpxMac } from './rlpx-mac.js';
import { MessageTooLarge, closeSlowHandshakes, helloMatchesHandshake, limitBaseProtocol, limitMessageSize, socketOf } from './rlpx-guard.js';
import type { Socket } from 'node:net';
import { nodeInfo, localEnode, peerInfo } from './node-info.js';
import { PeerTable, DEFAULT_BACKOFF } from './peer-table.js';
import type { BackoffSettings } from './peer-table.js';

export { ISTANBUL_CAPABILITY } from './istanbul-protocol.js';

export interface ChainHeadFacts {
  number: bigint;
  hash: Uint8Array;
  timestamp: bigint;
  totalDifficulty: bigint;
}

export interface P2pServiceConfig {
  privateKey: Uint8Array;
  /** Hello client id and admin_nodeInfo name: the web3_clientVersion string. */
  clientId: string;
  /** Advertised in the enode (`--p2p-host`). */
  advertisedHost: string;
  /** Where the listener binds (`--p2p-interface`). */
  listenHost: string;
  /** `--p2p-port`; 0 picks a free port. */
  listenPort: number;
  maxPeers: number;
  networkId: bigint;
  genesis: Genesis;
  genesisHash: Uint8Array;
  head: ChainHeadFacts;
  /** Sender-side de-duplication window of QBFT messages (`gossipedHistoryLimit`, default 1000). */
  gossipedHistoryLimit?: number;
  backoff?: BackoffSettings;
  /** TCP connect timeout and ping timeout of the library's peers (default 10 s). */
  timeoutMs?: number;
  /** The chain, for serving and importing blocks (full sync); without it peers get empty answers. */
  chain?: SyncChain;
  /** The transaction pool, for transaction gossip; without it peers' transactions are ignored. */
  txpool?: GossipPool;
  /** Discovery v4 on UDP at the listening port, seeded with these nodes; absent = no discovery. */
  discovery?: DiscoveryConfig;
}

export interface DiscoveryConfig {
  /** `--bootnodes`: the nodes asked first for their neighbours (also dialled as static peers). */
  seeds: Enode[];
  /** How often every known node is asked for neighbours again (default 30 s). */
  refreshIntervalMs?: number;
}

/** What transaction gossip needs from the pool (network forms: see GossipTx). */
export interface GossipPool {
  /** `hashes[i]` is the keccak of `raws[i]`. */
  add(raws: Uint8Array[], hashes: Uint8Array[]): Promise<unknown>;
  pooled(hashes: Uint8Array[]): Promise<Uint8Array[]>;
  unknown(hashes: Uint8Array[]): Promise<Uint8Array[]>;
}

/** A QBFT message to send: to peers whose address is a recipient, minus the exclusions (§4.7). */
export interface IstanbulOutbound {
  code: number;
  data: Uint8Array;
  /** Validator addresses (20 bytes) that should receive it. */
  recipients: Uint8Array[];
  /** Addresses never sent to (the author of a gossiped message). */
  excludeAddresses: Uint8Array[];
  /** Node id (hex) of the peer the message came from. */
  excludePeer?: string;
}

export interface P2pServiceListener {
  /** An istanbul message from a connected peer; `origin` is the peer's node id (hex). */
  onIstanbulMessage?(code: number, data: Uint8Array, origin: string): void;
  /** The number of connected peers changed. */
  onPeerCount?(count: number): void;
  /** The local head or the highest block a peer is known to have changed (eth_syncing). */
  onSyncProgress?(localHead: bigint, highestKnown: bigint): void;
  log?(message: string, level?: 'debug' | 'info' | 'warn'): void;
}

/** A connection past Hello that this service keeps (at most one per node id). */
interface Connection {
  peer: RlpxPeer;
  idHex: string;
  /** keccak(node id)[12:]: the validator address of a QBFT peer. */
  address: string;
  inbound: boolean;
  eth: ETH;
  istanbul: IstanbulProtocol | undefined;
  /** Set once both Status messages were exchanged and accepted. */
  status?: EthStatus;
  /** Transaction hashes (hex) this peer sent or was sent: not gossiped to it again. */
  knownTxs: RecentKeys;
  /** The peer's requests (Get*) and other messages against their budgets (peer-limits.ts). */
  requests: TokenBucket;
  messages: TokenBucket;
  /** The peer's requests being answered now. */
  answering: number;
}

const MAINTENANCE_INTERVAL_MS = 250;
const STATUS_CODE = 0x00;
/** The codes eth/68 defines after Status (GetNodeData/NodeData left with eth/67). */
const ETH68_MESSAGE_CODES: ReadonlySet<number> = new Set(Object.values(EthCode));
/** The requests a peer makes of this node, held to REQUEST_BUDGET. */
const REQUEST_CODES: ReadonlySet<number> = new Set([EthCode.GetBlockHeaders, EthCode.GetBlockBodies, EthCode.GetPooledTransactions, EthCode.GetReceipts]);
/** Transaction hashes remembered per peer (Besu keeps a similar bounded "seen" set per peer). */
const KNOWN_TXS_PER_PEER = 8192;
/** EIP-4844 blob transactions are only announced by hash (eth/68), never sent whole unasked. */
const BLOB_TX_TYPE = 3;
/** How long a peer has to answer a GetBlockHeaders / GetBlockBodies request. */
const REQUEST_TIMEOUT_MS = 10_000;

interface PendingRequest {
  peer: string;
  resolve: (payload: NestedUint8Array) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}
/** A dial that produced no peer within this time is counted as failed (the library has no handshake timeout). */
const DIAL_DEADLINE_MS = 15_000;
/** Seeds that did not answer are pinged again this often (the library bans a silent node for 5 minutes). */
const SEED_RETRY_MS = 30_000;

export class P2pService {
  readonly idHex: string;
  private readonly id: Uint8Array;
  private readonly schedule: ForkSchedule;
  /** The library's ETH protocol reads network id, fork hash and next fork from this Common. */
  private readonly common: Common;
  private readonly table: PeerTable;
  private readonly sent: RecentKeys;
  private readonly connections = new Map<string, Connection>();
  /** Node ids being dialled, with the time the dial started. */
  private readonly dialling = new Map<string, number>();
  /**
   * Inbound and outbound connections live in two RLPx instances: one instance refuses a second
   * connection to a node it already has, whatever its direction, so two nodes dialling each other
   * at once could each keep a different one and both end up with none. Split by direction, the
   * service sees both and applies one rule on both ends (see `onPeerAdded`).
   */
  private listener: RLPx | undefined;
  private dialler: RLPx | undefined;
  private discovery: DPT | undefined;
  private lastSeedRetry = 0;
  private maintenance: NodeJS.Timeout | undefined;
  private listenPort = 0;
  private head: ChainHeadFacts;
  private stopped = false;
  private lastPeerCount = 0;
  private readonly sync: BlockSync | undefined;
  /** eth/66+ request ids of this node's requests awaiting an answer. */
  private readonly pending = new Map<bigint, PendingRequest>();
  private nextRequestId = 1n;
  /** Blocks are announced (NewBlockHashes) only on chains that never merge: after the merge peers refuse them. */
  private readonly announceBlocks: boolean;
  /** Sockets of peers that completed Hello (inbound sockets that never do are closed). */
  private readonly pastHello = new WeakSet<Socket>();
  /** Peers disconnected for a breach of protocol, whose socket is about to be closed. */
  private readonly breached = new WeakSet<RlpxPeer>();

  constructor(
    private readonly config: P2pServiceConfig,
    private readonly events: P2pServiceListener = {},
  ) {
    useWasmRlpxMac();
    this.id = nodeIdOf(config.privateKey);
    this.idHex = hex(this.id);
    this.schedule = genesisForkSchedule(config.genesis, config.genesisHash);
    this.common = devp2pCommon(config.genesis, config.genesisHash, config.networkId);
    this.table = new PeerTable(config.backoff ?? DEFAULT_BACKOFF);
    this.sent = new RecentKeys(config.gossipedHistoryLimit ?? 1000);
    this.head = config.head;
    this.common.setHardforkBy({ blockNumber: this.head.number, timestamp: this.head.timestamp });
    this.announceBlocks = config.genesis.config.terminalTotalDifficulty === undefined;
    this.sync = config.chain
      ? new BlockSync(config.chain, {
          request: (peer, code, payload) => this.request(peer, code, payload),
          head: () => this.head,
          blockHash: config.genesis.consensus === 'qbft' ? (header) => qbftOnChainHash(header) : (header) => keccak256(RLP.encode(header)),
          setHead: (head) => this.setHead(head),
          log: (message, level = 'info') => this.events.log?.(message, level),
        })
      : undefined;
  }

  /** Starts listening; answers the bound TCP port. */
  async start(): Promise<number> {
    const listener = this.createRlpx(this.config.listenPort === 0 ? null : this.config.listenPort);
    this.listener = listener;
    await untilListening(listener.events, () =>
      listener.listen({ host: this.config.listenHost, port: this.config.listenPort, exclusive: true }),
    ).catch((err: unknown) => {
      listener.destroy();
      this.listener = undefined;
      throw err;
    });
    const server = listener['_server']!;
    const address = server.address();
    this.listenPort = typeof address === 'object' && address ? address.port : this.config.listenPort;
    // Sockets still in the handshake count too: the library tracks none of them before Hello.
    server.maxConnections = listener['_maxPeers'];
    closeSlowHandshakes(server, (socket) => this.pastHello.has(socket));
    // Each frame is written as a header and a body: with Nagle's algorithm the body waits for the
    // peer's delayed ACK of the header (tens of ms per QBFT message). Besu's sockets are TCP_NODELAY too.
    server.on('connection', (socket: Socket) => socket.setNoDelay(true));
    // With port 0 the port is known only now; Hello announces the field read at each connection.
    listener['_listenPort'] = this.listenPort;
    listener.events.on('error', (err: Error) => this.events.log?.(`P2P listener error: ${err.message}`, 'warn'));
    this.watch(listener, true);
    const dialler = this.createRlpx(this.listenPort);
    this.dialler = dialler;
    this.watch(dialler, false);
    if (this.config.discovery) {
      try {
        this.discovery = await this.startDiscovery(this.config.discovery);
      } catch (err) {
        listener.destroy();
        dialler.destroy();
        this.listener = undefined;
        this.dialler = undefined;
        throw err;
      }
    }
    this.maintenance = setInterval(() => {
      this.retrySeeds();
      this.dialDuePeers();
      void this.sync?.step();
      this.reportSync();
    }, MAINTENANCE_INTERVAL_MS);
    return this.listenPort;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.maintenance);
    for (const [id, request] of this.pending) this.settle(id, request.peer, new Error('the node is stopping'));
    const peers = [...this.connections.values()].map((c) => c.peer);
    this.connections.clear();
    for (const rlpx of [this.listener, this.dialler]) {
      if (!rlpx) continue;
      // destroy() sends CLIENT_QUITTING to every peer past Hello and closes the server.
      for (const peer of rlpx.getPeers()) if (!peers.includes(peer)) peers.push(peer);
      rlpx.destroy();
    }
    this.listener = undefined;
    this.dialler = undefined;
    this.discovery?.destroy();
    this.discovery = undefined;
    // The library ends a disconnected socket only after 2 s; give the Disconnect message a moment, then close.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const peer of peers) peer['_socket'].destroy();
    this.publishPeerCount();
  }

  get port(): number {
    return this.listenPort;
  }

  get enode(): string {
    return localEnode({ idHex: this.idHex, host: this.config.advertisedHost, listenPort: this.listenPort, ...this.discoveryPort() });
  }

  private discoveryPort(): { discoveryPort?: number } {
    return this.discovery ? { discoveryPort: this.listenPort } : {};
  }

  /** Peers that completed the Status exchange. */
  get peerCount(): number {
    let count = 0;
    for (const connection of this.connections.values()) if (connection.status) count++;
    return count;
  }

  setHead(head: ChainHeadFacts): void {
    const advanced = head.number > this.head.number;
    this.head = head;
    if (advanced && this.announceBlocks) this.broadcast(EthCode.NewBlockHashes, [[head.hash, head.number]]);
    // New connections announce the fork id of this head.
    this.common.setHardforkBy({ blockNumber: head.number, timestamp: head.timestamp });
  }

  /** admin_addPeer: keep a connection to this node. False when it already was a static peer. */
  addPeer(enode: Enode): boolean {
    const added = this.table.add(enode, Date.now());
    this.dialDuePeers();
    return added;
  }

  /** admin_removePeer: stop keeping the connection and drop it. False when it was not a static peer. */
  removePeer(enode: Enode): boolean {
    const removed = this.table.remove(enode.idHex);
    const connection = this.connections.get(enode.idHex);
    if (connection) this.drop(connection, DISCONNECT_REASON.DISCONNECT_REQUESTED);
    return removed;
  }

  nodeInfo(): { [key: string]: Json } {
    return nodeInfo({
      idHex: this.idHex,
      host: this.config.advertisedHost,
      listenPort: this.listenPort,
      ...this.discoveryPort(),
      clientVersion: this.config.clientId,
      genesis: this.config.genesis,
      genesisHash: this.config.genesisHash,
      networkId: this.config.networkId,
      head: this.head,
    });
  }

  peerList(): Json[] {
    const list: Json[] = [];
    for (const connection of this.connections.values()) {
      const hello = connection.peer.getHelloMessage();
      if (!connection.status || !hello) continue;
      const socket = connection.peer['_socket'];
      list.push(
        peerInfo({
          p2pVersion: hello.protocolVersion,
          clientId: hello.clientId,
          capabilities: hello.capabilities.map(({ name, version }) => ({ name, version })),
          localAddress: `${plainIp(socket.localAddress)}:${socket.localPort ?? 0}`,
          remoteAddress: `${plainIp(socket.remoteAddress)}:${socket.remotePort ?? 0}`,
          inbound: connection.inbound,
          listenPort: hello.port,
          idHex: connection.idHex,
          remoteHost: plainIp(socket.remoteAddress),
          status: { totalDifficulty: connection.status.totalDifficulty, bestHash: connection.status.bestHash, version: connection.status.version },
        }),
      );
    }
    return list;
  }

  /** Sends a QBFT message to the matching connected peers; a message sent before is not sent again. */
  sendIstanbul(message: IstanbulOutbound): number {
    if (!this.sent.add(hex(keccak256(message.data)))) return 0;
    const recipients = new Set(message.recipients.map(hex));
    const excluded = new Set(message.excludeAddresses.map(hex));
    let sentTo = 0;
    for (const connection of this.connections.values()) {
      if (!connection.status || !connection.istanbul || connection.idHex === message.excludePeer) continue;
      if (!recipients.has(connection.address) || excluded.has(connection.address)) continue;
      if (connection.istanbul.sendMessage(message.code, message.data)) sentTo++;
    }
    return sentTo;
  }

  // ---------------------------------------------------------------------------------------------
  // Connections
  // ---------------------------------------------------------------------------------------------

  private createRlpx(listenPort: number | null): RLPx {
    return new RLPx(this.config.privateKey, {
      clientId: new TextEncoder().encode(this.config.clientId),
      timeout: this.config.timeoutMs ?? 10_000,
      dpt: null,
      // The service enforces --max-peers itself (static peers are exempt); the library's own limit,
      // which also counts pending dials, only guards against floods.
      maxPeers: Math.max(this.config.maxPeers, 1) * 2 + 16,
      capabilities: [ETH.eth68, ISTANBUL_CAPABILITY],
      common: this.common,
      listenPort,
    });
  }

  private watch(rlpx: RLPx, inbound: boolean): void {
    rlpx.events.on('peer:added', (peer: RlpxPeer) => this.onPeerAdded(peer, inbound));
    rlpx.events.on('peer:removed', (peer: RlpxPeer, reason: unknown, byUs: boolean | null) => this.onPeerRemoved(peer, reason, byUs));
    // The library reports here what it caught in a peer's frames or handlers (bad MAC, undecodable
    // RLP, a Status it refused, a socket error); it has already disconnected the peer where it could.
    rlpx.events.on('peer:error', (peer: RlpxPeer, err: unknown) => {
      if (err instanceof MessageTooLarge || this.breached.has(peer)) return; // reported once, by breach()
      const id = peer.getId();
      this.events.log?.(`Peer ${id ? hex(id).slice(0, 16) : '?'}…: ${errorMessage(err)}`, 'debug');
      this.closeSoon(peer);
    });
  }

  private dialDuePeers(): void {
    const dialler = this.dialler;
    if (this.stopped || !dialler) return;
    const now = Date.now();
    for (const [idHex, startedAt] of this.dialling) {
      if (now - startedAt < DIAL_DEADLINE_MS) continue;
      this.dialling.delete(idHex);
      this.table.failed(idHex, now);
    }
    const busy = (idHex: string) => this.connections.has(idHex) || this.dialling.has(idHex);
    const room = this.config.maxPeers - this.connections.size - this.dialling.size;
    for (const enode of this.table.due(now, busy, room)) this.dial(dialler, enode);
  }

  // ---------------------------------------------------------------------------------------------
  // Discovery v4
  // ---------------------------------------------------------------------------------------------

  /** Binds discovery to the listening port (UDP) and pings the seeds; nodes it learns become dial candidates. */
  private async startDiscovery(config: DiscoveryConfig): Promise<DPT> {
    const dpt = new DPT(this.config.privateKey, {
      endpoint: { address: this.config.advertisedHost, udpPort: this.listenPort, tcpPort: this.listenPort },
      refreshInterval: config.refreshIntervalMs ?? 30_000,
    });
    await untilListening(dpt.events, () => dpt.bind(this.listenPort, this.config.listenHost)).catch((err: unknown) => {
      dpt.destroy();
      throw new Error(`Cannot bind discovery to UDP ${this.config.listenHost}:${this.listenPort}: ${errorMessage(err)}`);
    });
    // Unanswered pings, banned nodes and malformed packets are routine on an open UDP port.
    dpt.events.on('error', (err: Error) => this.events.log?.(`Discovery: ${err.message}`, 'debug'));
    dpt.events.on('peer:added', (peer: PeerInfo) => {
      if (peer.id === undefined || typeof peer.tcpPort !== 'number' || peer.tcpPort === 0 || peer.address === undefined) return;
      const idHex = hex(peer.id);
      if (idHex === this.idHex) return;
      this.events.log?.(`Discovered ${idHex.slice(0, 16)}… at ${peer.address}:${peer.tcpPort}`, 'debug');
      this.table.addDiscovered({ id: peer.id, idHex, host: peer.address, tcpPort: peer.tcpPort }, Date.now());
      this.dialDuePeers();
    });
    dpt.events.on('peer:removed', (peer: PeerInfo) => {
      if (peer.id !== undefined) this.table.forgetDiscovered(hex(peer.id));
    });
    this.lastSeedRetry = Date.now();
    for (const seed of config.seeds) this.bootstrap(dpt, seed);
    return dpt;
  }

  private bootstrap(dpt: DPT, seed: Enode): void {
    // A seed without a discovery port (`discport=0`) is only dialled.
    const udpPort = seed.udpPort ?? seed.tcpPort;
    if (seed.idHex === this.idHex || udpPort === 0) return;
    void dpt.bootstrap({ id: seed.id, address: seed.host, udpPort, tcpPort: seed.tcpPort });
  }

  /** Seeds discovery does not know yet (down at start-up, say) are pinged again now and then. */
  private retrySeeds(): void {
    const dpt = this.discovery;
    const seeds = this.config.discovery?.seeds ?? [];
    const now = Date.now();
    if (!dpt || this.stopped || now - this.lastSeedRetry < SEED_RETRY_MS) return;
    this.lastSeedRetry = now;
    for (const seed of seeds) if (dpt.getPeer(seed.id) === null) this.bootstrap(dpt, seed);
  }

  private dial(dialler: RLPx, enode: Enode): void {
    this.dialling.set(enode.idHex, Date.now());
    this.events.log?.(`Dialling ${enode.idHex.slice(0, 16)}… at ${enode.host}:${enode.tcpPort}`, 'debug');
    dialler.connect({ id: enode.id, address: enode.host, tcpPort: enode.tcpPort }).catch((err: unknown) => {
      // Refused, timed out, or the previous connection to this node is still closing.
      this.events.log?.(`Could not connect to ${enode.idHex.slice(0, 16)}…: ${errorMessage(err)}`, 'debug');
      this.dialling.delete(enode.idHex);
      if (!this.connections.has(enode.idHex)) this.table.failed(enode.idHex, Date.now());
    });
  }

  private onPeerAdded(peer: RlpxPeer, inbound: boolean): void {
    const id = peer.getId();
    if (id === null) return peer.disconnect(DISCONNECT_REASON.INVALID_IDENTITY);
    if (!helloMatchesHandshake(peer)) return peer.disconnect(DISCONNECT_REASON.UNEXPECTED_IDENTITY);
    const idHex = hex(id);
    if (!inbound) this.dialling.delete(idHex);
    if (this.stopped) return peer.disconnect(DISCONNECT_REASON.CLIENT_QUITTING);
    const existing = this.connections.get(idHex);
    if (existing) {
      // Both sides dialled at once: keep the connection the node with the smaller id initiated, a
      // rule both ends apply alike. A redial while the old connection lives keeps the old one.
      const initiatorOf = (c: { inbound: boolean }) => (c.inbound ? idHex : this.idHex);
      if (initiatorOf({ inbound }) < initiatorOf(existing)) {
        this.connections.delete(idHex);
        existing.peer.disconnect(DISCONNECT_REASON.ALREADY_CONNECTED);
      } else {
        return peer.disconnect(DISCONNECT_REASON.ALREADY_CONNECTED);
      }
    }
    if (this.connections.size >= this.config.maxPeers && !this.table.isStatic(idHex)) {
      return peer.disconnect(DISCONNECT_REASON.TOO_MANY_PEERS);
    }
    const protocols = peer.getProtocols();
    const eth = protocols.find((p): p is ETH => p instanceof ETH);
    if (!eth) return peer.disconnect(DISCONNECT_REASON.USELESS_PEER);
    const istanbul = (protocols as unknown[]).find((p): p is IstanbulProtocol => p instanceof IstanbulProtocol);
    const now = Date.now();
    const connection: Connection = {
      peer,
      idHex,
      address: hex(keccak256(id).subarray(12)),
      inbound,
      eth,
      istanbul,
      knownTxs: new RecentKeys(KNOWN_TXS_PER_PEER),
      requests: new TokenBucket(REQUEST_BUDGET, now),
      messages: new TokenBucket(MESSAGE_BUDGET, now),
      answering: 0,
    };
    this.connections.set(idHex, connection);
    this.pastHello.add(socketOf(peer));
    socketOf(peer).setNoDelay(true);
    limitMessageSize(peer, (declared) => this.breach(connection, `message of ${declared} bytes (limit ${MAX_MESSAGE_SIZE})`));
    limitBaseProtocol(peer, (why) => this.breach(connection, why));
    this.guardEth(connection);
    if (istanbul) {
      istanbul.onMessage = (code, data) => {
        if (this.connections.get(idHex) !== connection) return;
        if (!isQbftMessageCode(code)) return this.breach(connection, `istanbul message code 0x${code.toString(16)}`);
        // A QBFT message before Status is dropped, not a breach: Besu may gossip as soon as Hello is done.
        if (connection.status) this.events.onIstanbulMessage?.(code, data, idHex);
      };
    }
    // Listen before sending: when the peer's Status came first, sendStatus emits `status` at once.
    eth.events.on('status', (status: unknown) => this.onStatus(connection, status));
    try {
      eth.sendStatus({
        td: bigIntToBytes(this.head.totalDifficulty),
        bestHash: this.head.hash,
        genesisHash: this.config.genesisHash,
        latestBlock: bigIntToBytes(this.head.number),
      });
    } catch (err) {
      // The library validated the peer's earlier Status while sending ours (network, genesis, fork id).
      this.events.log?.(`Disconnecting peer ${idHex.slice(0, 16)}…: ${errorMessage(err)}`, 'debug');
      this.drop(connection, DISCONNECT_REASON.SUBPROTOCOL_ERROR);
    }
  }

  /** The library accepted the peer's Status; Basalt's EIP-2124 checks also look at time forks. */
  private onStatus(connection: Connection, raw: unknown): void {
    if (this.connections.get(connection.idHex) !== connection || connection.status) return;
    const status = toEthStatus(connection.eth.getVersion(), raw);
    const problem = status === undefined
      ? 'malformed Status'
      : checkRemoteStatus({ networkId: this.config.networkId, schedule: this.schedule, head: this.head }, status);
    if (status === undefined || problem !== undefined) {
      this.events.log?.(`Disconnecting peer ${connection.idHex.slice(0, 16)}…: ${problem}`, 'debug');
      return this.drop(connection, DISCONNECT_REASON.SUBPROTOCOL_ERROR);
    }
    connection.status = status;
    this.table.connected(connection.idHex);
    void this.sync?.learnPeerHead(connection.idHex, status.bestHash, status.totalDifficulty);
    const clientId = connection.peer.getHelloMessage()?.clientId ?? '?';
    this.events.log?.(`Connected to peer ${connection.idHex.slice(0, 16)}… (${clientId}, ${connection.inbound ? 'inbound' : 'outbound'})`);
    this.publishPeerCount();
  }

  private onPeerRemoved(peer: RlpxPeer, reason: unknown, byUs: boolean | null): void {
    const id = peer.getId();
    if (id === null) return;
    const idHex = hex(id);
    const connection = this.connections.get(idHex);
    // A connection refused or replaced earlier is no longer tracked.
    if (!connection || connection.peer !== peer) return;
    this.connections.delete(idHex);
    this.forgetPeer(idHex);
    if (connection.status) {
      const why = typeof reason === 'number' ? `reason 0x${reason.toString(16).padStart(2, '0')}${byUs ? '' : ' from peer'}` : 'connection closed';
      this.events.log?.(`Disconnected from peer ${idHex.slice(0, 16)}… (${why})`);
    }
    this.table.failed(idHex, Date.now());
    this.publishPeerCount();
  }

  /** Stops tracking a connection at once (admin_peers and the peer count drop it) and disconnects it. */
  private drop(connection: Connection, reason: DISCONNECT_REASON): void {
    if (this.connections.get(connection.idHex) === connection) {
      this.connections.delete(connection.idHex);
      this.forgetPeer(connection.idHex);
    }
    connection.peer.disconnect(reason);
    this.table.failed(connection.idHex, Date.now());
    this.publishPeerCount();
  }

  /**
   * Disconnects a peer that broke the protocol or a limit (garbage, an oversized or out-of-protocol
   * message, a flood of requests) with BREACH_OF_PROTOCOL (0x02), as Besu does, and logs it once.
   */
  private breach(connection: Connection, why: string): void {
    if (this.breached.has(connection.peer)) return;
    this.breached.add(connection.peer);
    this.events.log?.(`Disconnecting peer ${connection.idHex.slice(0, 16)}… (breach of protocol): ${why}`, 'debug');
    this.drop(connection, DISCONNECT_REASON.PROTOCOL_ERROR);
    this.closeSoon(connection.peer);
  }

  /**
   * Closes a disconnected peer's socket once the Disconnect message had time to leave. The library
   * only half-closes it (after 2 s), and before the handshake it cannot send a Disconnect at all:
   * a peer that keeps its end open would otherwise keep the socket.
   */
  private closeSoon(peer: RlpxPeer): void {
    const socket = socketOf(peer);
    const handshakeDone = peer.getHelloMessage() !== null;
    if (!handshakeDone) return void socket.destroy();
    setTimeout(() => socket.destroy(), 3_000).unref();
  }

  /**
   * Takes the eth messages after Status from the library: a code eth/68 does not define, or a
   * payload that does not decode to a list, is a breach (the library would ignore the first and
   * disconnect with SUBPROTOCOL_ERROR on the second). Status stays the library's, and so does its
   * SUBPROTOCOL_ERROR (0x10) for a wrong network, genesis or fork id, as Besu answers them.
   */
  private guardEth(connection: Connection): void {
    const eth = connection.eth as unknown as { _handleMessage(code: number, data: Uint8Array): void };
    const handleStatus = eth._handleMessage.bind(eth);
    eth._handleMessage = (code, data) => {
      if (code === STATUS_CODE) return handleStatus(code, data);
      if (!ETH68_MESSAGE_CODES.has(code)) return this.breach(connection, `eth message code 0x${code.toString(16)}`);
      let payload: Uint8Array | NestedUint8Array;
      try {
        payload = RLP.decode(data);
      } catch (err) {
        return this.breach(connection, `undecodable eth message 0x${code.toString(16)}: ${errorMessage(err)}`);
      }
      if (!Array.isArray(payload)) return this.breach(connection, `eth message 0x${code.toString(16)} is not a list`);
      this.onEthMessage(connection, code, payload);
    };
  }

  // ---------------------------------------------------------------------------------------------
  // eth/68 blocks: serving peers, requests of the sync, announcements
  // ---------------------------------------------------------------------------------------------

  private onEthMessage(connection: Connection, code: number, payload: NestedUint8Array): void {
    if (this.connections.get(connection.idHex) !== connection) return;
    const name = `eth message 0x${code.toString(16)}`;
    if (!connection.status) return this.breach(connection, `${name} before Status`);
    const now = Date.now();
    if (REQUEST_CODES.has(code)) {
      if (!connection.requests.take(now)) return this.breach(connection, `more than ${REQUEST_BUDGET.perSecond} requests a second`);
      if (connection.answering >= MAX_REQUESTS_IN_FLIGHT) return this.breach(connection, `more than ${MAX_REQUESTS_IN_FLIGHT} requests in flight`);
    } else if (!connection.messages.take(now)) {
      return this.breach(connection, `more than ${MESSAGE_BUDGET.perSecond} messages a second`);
    }
    try {
      switch (code) {
        case EthCode.GetBlockHeaders: {
          const [id, body] = requestParts(payload);
          const query = byteStrings(body, 'GetBlockHeaders');
          if (query.length !== 4) throw new Error('malformed GetBlockHeaders');
          const [origin, amount, skip, reverse] = query;
          const byNumber = origin!.length !== 32;
          this.answer(connection, id, EthCode.BlockHeaders, () =>
            this.config.chain?.headers({
              origin: byNumber ? uint64(origin!) : origin!,
              amount: Number(uint64(amount!)),
              skip: Number(uint64(skip!)),
              reverse: uint64(reverse!) !== 0n,
            }),
          );
          return;
        }
        case EthCode.GetBlockBodies: {
          const [id, body] = requestParts(payload);
          const hashes = byteStrings(body, 'GetBlockBodies').slice(0, MAX_HASHES_PER_REQUEST);
          this.answer(connection, id, EthCode.BlockBodies, () => this.config.chain?.bodies(hashes));
          return;
        }
        // Basalt serves no receipts to peers: an empty answer says so without a timeout.
        case EthCode.GetReceipts:
          return this.answer(connection, requestParts(payload)[0], EthCode.Receipts, async () => []);
        case EthCode.GetPooledTransactions: {
          const [id, body] = requestParts(payload);
          const hashes = byteStrings(body, 'GetPooledTransactions').slice(0, MAX_POOLED_TRANSACTIONS_SERVED);
          this.answer(connection, id, EthCode.PooledTransactions, () => this.config.txpool?.pooled(hashes), transactionItem);
          return;
        }
        case EthCode.Transactions:
          this.receiveTransactions(connection, payload);
          return;
        case EthCode.NewPooledTransactionHashes: {
          // eth/68: [types, [size…], [hash…]], the three of one length.
          const [types, sizes, hashList] = payload;
          const hashes = byteStrings(hashList, 'NewPooledTransactionHashes');
          const wellFormed =
            payload.length === 3 &&
            types instanceof Uint8Array &&
            types.length === hashes.length &&
            Array.isArray(sizes) &&
            sizes.length === hashes.length &&
            hashes.every((h) => h.length === 32);
          if (!wellFormed) throw new Error('malformed NewPooledTransactionHashes');
          for (const hash of hashes) connection.knownTxs.add(hex(hash));
          void this.fetchTransactions(connection, hashes);
          return;
        }
        case EthCode.BlockHeaders:
        case EthCode.BlockBodies:
        case EthCode.PooledTransactions: {
          const [id, items] = requestParts(payload);
          const request = this.pending.get(id);
          if (!request || request.peer !== connection.idHex || !Array.isArray(items)) return;
          this.settle(id, request.peer, items);
          return;
        }
        case EthCode.NewBlockHashes:
          for (const item of payload) {
            const number = Array.isArray(item) ? item[1] : undefined;
            if (number instanceof Uint8Array) this.sync?.notePeerHead(connection.idHex, uint64(number));
          }
          return;
        case EthCode.NewBlock: {
          // [block, total difficulty]
          const header = Array.isArray(payload[0]) ? payload[0][0] : undefined;
          const totalDifficulty = payload[1] instanceof Uint8Array ? bytesToBigInt(payload[1]) : undefined;
          if (Array.isArray(header)) this.sync?.notePeerHead(connection.idHex, numberOf(header), totalDifficulty);
          return;
        }
        default:
          return;
      }
    } catch (err) {
      this.breach(connection, `malformed ${name}: ${errorMessage(err)}`);
    }
  }

  /**
   * Answers a request with the encoded items `produce` gives (none without a chain or pool), as many
   * as fit in MAX_ANSWER_BYTES.
   */
  private answer(
    connection: Connection,
    id: bigint,
    code: number,
    produce: () => Promise<Uint8Array[]> | undefined,
    toItem: (encoded: Uint8Array) => Uint8Array | NestedUint8Array = (encoded) => RLP.decode(encoded),
  ): void {
    const produced = produce() ?? Promise.resolve([]);
    connection.answering++;
    produced
      .then((items) => {
        if (this.connections.get(connection.idHex) !== connection) return;
        const sent = leadingItemsWithin(items, (item) => item.length, MAX_ANSWER_BYTES);
        this.sendEth(connection, code, [id, sent.map(toItem)]);
      })
      .catch((err: unknown) => this.events.log?.(`Could not answer peer ${connection.idHex.slice(0, 16)}…: ${errorMessage(err)}`, 'debug'))
      .finally(() => connection.answering--);
  }

  private request(peer: string, code: number, payload: unknown[]): Promise<NestedUint8Array> {
    const connection = this.connections.get(peer);
    if (!connection?.status) return Promise.reject(new Error('the peer is not connected'));
    const id = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle(id, peer, new Error('no answer in time')), REQUEST_TIMEOUT_MS);
      this.pending.set(id, { peer, resolve, reject, timer });
      if (!this.sendEth(connection, code, [id, payload])) this.settle(id, peer, new Error('the request could not be sent'));
    });
  }

  private settle(id: bigint, peer: string, outcome: NestedUint8Array | Error): void {
    const request = this.pending.get(id);
    if (!request || request.peer !== peer) return;
    this.pending.delete(id);
    clearTimeout(request.timer);
    if (outcome instanceof Error) request.reject(outcome);
    else request.resolve(outcome);
  }

  /**
   * Transactions the pool just admitted, each peer told at most once: those submitted here go whole
   * to every peer; those a peer sent are only announced onward by hash (and blob ones always), as the
   * peers that lack one fetch it. The author's node sends its transaction whole to all its peers, so in
   * a mesh every peer already holds what would be forwarded: forwarding whole made each node receive
   * (and hash and decrypt) every transaction once per peer instead of once.
   */
  gossipTransactions(txs: GossipTx[]): void {
    for (const connection of this.connections.values()) {
      if (!connection.status) continue;
      const whole: GossipTx[] = [];
      const announced: GossipTx[] = [];
      for (const tx of txs) {
        if (!connection.knownTxs.add(hex(tx.hash))) continue;
        if (tx.type === BLOB_TX_TYPE || !tx.local) announced.push(tx);
        else whole.push(tx);
      }
      // In messages of at most MAX_ANSWER_BYTES, as Besu sends them.
      for (const group of groupsWithin(whole, (tx) => tx.raw.length, MAX_ANSWER_BYTES)) {
        this.sendEth(connection, EthCode.Transactions, group.map((tx) => transactionItem(tx.raw)));
      }
      if (announced.length > 0) {
        const types = Uint8Array.from(announced.map((tx) => tx.type));
        this.sendEth(connection, EthCode.NewPooledTransactionHashes, [types, announced.map((tx) => tx.raw.length), announced.map((tx) => tx.hash)]);
      }
    }
  }

  /** eth/68 Transactions: each item is a legacy transaction's list or a typed transaction's bytes. */
  private receiveTransactions(connection: Connection, items: NestedUint8Array): void {
    if (!this.config.txpool) return;
    const raws = items.map((item) => (item instanceof Uint8Array ? item : RLP.encode(item)));
    // The hash of the encoding is the transaction hash (for a blob transaction's network form it is not, which only costs a resend).
    const hashes = raws.map((raw) => keccak256(raw));
    for (const hash of hashes) connection.knownTxs.add(hex(hash));
    this.config.txpool.add(raws, hashes).catch((err: unknown) => this.events.log?.(`Could not pool peer transactions: ${String(err)}`, 'debug'));
  }

  /** Fetches announced transactions the pool does not hold, from the peer that announced them. */
  private async fetchTransactions(connection: Connection, hashes: Uint8Array[]): Promise<void> {
    const pool = this.config.txpool;
    if (!pool || hashes.length === 0) return;
    // A peer announcing faster than it answers is not asked more: the announcements are dropped.
    let pending = 0;
    for (const request of this.pending.values()) if (request.peer === connection.idHex) pending++;
    if (pending >= MAX_FETCHES_PENDING) return;
    try {
      const wanted = (await pool.unknown(hashes.slice(0, MAX_POOLED_TRANSACTIONS_SERVED))).slice(0, MAX_POOLED_TRANSACTIONS_SERVED);
      if (wanted.length === 0) return;
      const items = await this.request(connection.idHex, EthCode.GetPooledTransactions, wanted);
      this.receiveTransactions(connection, items);
    } catch (err) {
      this.events.log?.(`Could not fetch announced transactions from peer ${connection.idHex.slice(0, 16)}…: ${errorMessage(err)}`, 'debug');
    }
  }

  private forgetPeer(idHex: string): void {
    this.sync?.peerGone(idHex);
    for (const [id, request] of this.pending) if (request.peer === idHex) this.settle(id, idHex, new Error('the peer disconnected'));
  }

  private broadcast(code: number, payload: unknown[]): void {
    for (const connection of this.connections.values()) if (connection.status) this.sendEth(connection, code, payload);
  }

  /** Sends an eth message; false (and a debug line) when the library refuses it. */
  private sendEth(connection: Connection, code: number, payload: unknown[]): boolean {
    try {
      // The library types codes as its own enum and payloads as its Input; both are checked at run time.
      connection.eth.sendMessage(code as Parameters<ETH['sendMessage']>[0], payload as Parameters<ETH['sendMessage']>[1]);
      return true;
    } catch (err) {
      this.events.log?.(`Could not send eth message 0x${code.toString(16)} to peer ${connection.idHex.slice(0, 16)}…: ${errorMessage(err)}`, 'debug');
      return false;
    }
  }

  private lastSyncReport = '';

  private reportSync(): void {
    if (!this.sync) return;
    const highest = this.sync.highestKnown;
    const report = `${this.head.number}/${highest}`;
    if (report === this.lastSyncReport) return;
    this.lastSyncReport = report;
    this.events.onSyncProgress?.(this.head.number, highest);
  }

  private publishPeerCount(): void {
    const count = this.peerCount;
    if (count === this.lastPeerCount) return;
    this.lastPeerCount = count;
    this.events.onPeerCount?.(count);
  }
}

/**
 * The Common the library's ETH protocol reads: fork hashes need the genesis hash, and the library
 * sends and compares `common.chainId()` as the Status network id.
 */
export function devp2pCommon(genesis: Genesis, genesisHash: Uint8Array, networkId: bigint): Common {
  const common = createChainCommon(genesis, { genesisHash });
  // `--network-id` may differ from the chain id; this Common serves devp2p only.
  if (common.chainId() !== networkId) common.chainId = () => networkId;
  return common;
}

/** The library's `status` event (raw fields) as an EthStatus; undefined when a field is malformed. */
function toEthStatus(version: number, raw: unknown): EthStatus | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { chainId, td, bestHash, genesisHash, forkId } = raw as Record<string, unknown>;
  if (!(chainId instanceof Uint8Array) || !(td instanceof Uint8Array)) return undefined;
  if (!(bestHash instanceof Uint8Array) || bestHash.length !== 32 || !(genesisHash instanceof Uint8Array) || genesisHash.length !== 32) return undefined;
  if (!Array.isArray(forkId) || !(forkId[0] instanceof Uint8Array) || forkId[0].length !== 4 || !(forkId[1] instanceof Uint8Array)) return undefined;
  return {
    version,
    networkId: bytesToBigInt(chainId),
    totalDifficulty: bytesToBigInt(td),
    bestHash,
    genesisHash,
    forkId: { hash: forkId[0], next: bytesToBigInt(forkId[1]) },
  };
}

/** A transaction in a Transactions / PooledTransactions list: a legacy one as its list, a typed one as bytes. */
function transactionItem(raw: Uint8Array): Uint8Array | NestedUint8Array {
  return raw[0]! >= 0xc0 ? RLP.decode(raw) : raw;
}

/** A list of byte strings (hashes, request fields), or an error naming the malformed message. */
function byteStrings(item: Uint8Array | NestedUint8Array | undefined, message: string): Uint8Array[] {
  if (!Array.isArray(item) || !item.every((element) => element instanceof Uint8Array)) throw new Error(`malformed ${message}`);
  return item as Uint8Array[];
}

/** A number field of at most 64 bits (block numbers, counts); anything longer is malformed. */
function uint64(field: Uint8Array): bigint {
  if (field.length > 8) throw new Error('number field longer than 64 bits');
  return bytesToBigInt(field);
}

/** The request id and body of an eth/66+ request or answer. */
function requestParts(payload: NestedUint8Array): [bigint, Uint8Array | NestedUint8Array] {
  const [id, body] = payload;
  if (!(id instanceof Uint8Array) || body === undefined) throw new Error('no request id');
  return [uint64(id), body];
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** `::ffff:1.2.3.4` (an IPv4 peer on a dual-stack socket) → `1.2.3.4`. */
function plainIp(address: string | undefined): string {
  if (address === undefined) return '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

interface ListeningEvents {
  once(event: 'error', listener: (err: Error) => void): unknown;
  once(event: 'listening', listener: () => void): unknown;
  off(event: 'error', listener: (err: Error) => void): unknown;
}

/** Runs `start` and resolves once `events` says 'listening'; an 'error' before that rejects. */
function untilListening(events: ListeningEvents, start: () => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    events.once('error', reject);
    events.once('listening', () => {
      events.off('error', reject);
      resolve();
    });
    start();
  });
}
