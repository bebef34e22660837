/**
 * The devp2p service of a node: an RLPx listener, dialled static peers, the eth/68 Status exchange
 * and the istanbul/100 sub-protocol that carries QBFT messages (qbft-and-p2p.md §4.1, §4.7, §10).
 * It runs in the p2p actor; it has no thread or mailbox of its own, so two services can talk to each
 * other inside one test process.
 */
import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { RecentKeys } from '../consensus/qbft/controller.js';
import type { Genesis } from '../chain/genesis.js';
import type { Json } from '../rpc/types.js';
import type { Enode } from './enode.js';
import {
  checkRemoteStatus,
  decodeStatus,
  encodeStatus,
  ETH_PROTOCOL_LENGTH,
  ETH_PROTOCOL_VERSION,
  EthCode,
  forkIdAt,
  forkSchedule,
} from './eth-status.js';
import type { EthStatus, ForkSchedule } from './eth-status.js';
import { nodeInfo, localEnode, peerInfo } from './node-info.js';
import { PeerTable, DEFAULT_BACKOFF } from './peer-table.js';
import type { BackoffSettings } from './peer-table.js';
import { nodeIdOf } from './rlpx-handshake.js';
import { DEFAULT_TIMINGS, DisconnectReason, RlpxSession } from './rlpx-session.js';
import type { DisconnectReasonCode, LocalCapability, SessionHandler, SessionTimings } from './rlpx-session.js';

export const ISTANBUL_CAPABILITY: LocalCapability = { name: 'istanbul', version: 100, length: 0x16 };
export const ETH_CAPABILITY: LocalCapability = { name: 'eth', version: ETH_PROTOCOL_VERSION, length: ETH_PROTOCOL_LENGTH };

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
  timings?: SessionTimings;
  backoff?: BackoffSettings;
  /** How long a peer may take to send its Status after Hello. */
  statusTimeoutMs?: number;
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
  log?(message: string, level?: 'debug' | 'info' | 'warn'): void;
}

interface Peer {
  session: RlpxSession;
  idHex: string;
  /** keccak(node id)[12:]: the validator address of a QBFT peer. */
  address: string;
  status?: EthStatus;
  statusTimer?: NodeJS.Timeout;
}

const MAINTENANCE_INTERVAL_MS = 250;

export class P2pService {
  readonly idHex: string;
  private readonly id: Uint8Array;
  private readonly schedule: ForkSchedule;
  private readonly table: PeerTable;
  private readonly sent: RecentKeys;
  /** Every session past Hello, by node id: at most one per peer. */
  private readonly peers = new Map<string, Peer>();
  private readonly dialling = new Set<string>();
  private readonly sessions = new Set<RlpxSession>();
  private server: Server | undefined;
  private maintenance: NodeJS.Timeout | undefined;
  private listenPort = 0;
  private head: ChainHeadFacts;
  private stopped = false;
  private lastPeerCount = 0;

  constructor(
    private readonly config: P2pServiceConfig,
    private readonly listener: P2pServiceListener = {},
  ) {
    this.id = nodeIdOf(config.privateKey);
    this.idHex = Buffer.from(this.id).toString('hex');
    this.schedule = forkSchedule(config.genesis, config.genesisHash);
    this.table = new PeerTable(config.backoff ?? DEFAULT_BACKOFF);
    this.sent = new RecentKeys(config.gossipedHistoryLimit ?? 1000);
    this.head = config.head;
  }

  /** Starts listening; answers the bound TCP port. */
  async start(): Promise<number> {
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.config.listenHost, port: this.config.listenPort, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    this.listenPort = typeof address === 'object' && address ? address.port : this.config.listenPort;
    this.maintenance = setInterval(() => this.dialDuePeers(), MAINTENANCE_INTERVAL_MS);
    return this.listenPort;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.maintenance);
    for (const session of this.sessions) session.disconnect(DisconnectReason.CLIENT_QUITTING);
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get port(): number {
    return this.listenPort;
  }

  get enode(): string {
    return localEnode({ idHex: this.idHex, host: this.config.advertisedHost, listenPort: this.listenPort });
  }

  /** Peers that completed the Status exchange. */
  get peerCount(): number {
    let count = 0;
    for (const peer of this.peers.values()) if (peer.status) count++;
    return count;
  }

  setHead(head: ChainHeadFacts): void {
    this.head = head;
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
    this.peers.get(enode.idHex)?.session.disconnect(DisconnectReason.REQUESTED);
    return removed;
  }

  nodeInfo(): { [key: string]: Json } {
    return nodeInfo({
      idHex: this.idHex,
      host: this.config.advertisedHost,
      listenPort: this.listenPort,
      clientVersion: this.config.clientId,
      genesis: this.config.genesis,
      genesisHash: this.config.genesisHash,
      networkId: this.config.networkId,
      head: this.head,
    });
  }

  peerList(): Json[] {
    const list: Json[] = [];
    for (const peer of this.peers.values()) {
      const { session } = peer;
      if (!peer.status || !session.hello) continue;
      list.push(
        peerInfo({
          p2pVersion: session.hello.p2pVersion,
          clientId: session.hello.clientId,
          capabilities: session.hello.capabilities,
          localAddress: `${plainIp(session.socket.localAddress)}:${session.socket.localPort ?? 0}`,
          remoteAddress: `${plainIp(session.socket.remoteAddress)}:${session.socket.remotePort ?? 0}`,
          inbound: session.inbound,
          listenPort: session.hello.listenPort,
          idHex: peer.idHex,
          remoteHost: plainIp(session.socket.remoteAddress),
          status: { totalDifficulty: peer.status.totalDifficulty, bestHash: peer.status.bestHash, version: peer.status.version },
        }),
      );
    }
    return list;
  }

  /** Sends a QBFT message to the matching connected peers; a message sent before is not sent again. */
  sendIstanbul(message: IstanbulOutbound): number {
    if (!this.sent.add(Buffer.from(keccak_256(message.data)).toString('hex'))) return 0;
    const recipients = new Set(message.recipients.map(hex));
    const excluded = new Set(message.excludeAddresses.map(hex));
    let sentTo = 0;
    for (const peer of this.peers.values()) {
      if (!peer.status || peer.idHex === message.excludePeer) continue;
      if (!recipients.has(peer.address) || excluded.has(peer.address)) continue;
      if (peer.session.send(ISTANBUL_CAPABILITY.name, message.code, message.data)) sentTo++;
    }
    return sentTo;
  }

  // ---------------------------------------------------------------------------------------------
  // Connections
  // ---------------------------------------------------------------------------------------------

  private identity() {
    return {
      privateKey: this.config.privateKey,
      id: this.id,
      clientId: this.config.clientId,
      listenPort: this.listenPort,
      capabilities: [ETH_CAPABILITY, ISTANBUL_CAPABILITY],
    };
  }

  private readonly handler: SessionHandler = {
    onHello: (session) => this.onHello(session),
    onMessage: (session, capability, code, payload) => this.onMessage(session, capability, code, payload),
    onClose: (session, reason, byPeer) => this.onClose(session, reason, byPeer),
  };

  private accept(socket: Socket): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    this.track(new RlpxSession(socket, this.identity(), this.handler, undefined, this.config.timings ?? DEFAULT_TIMINGS));
  }

  private dialDuePeers(): void {
    if (this.stopped) return;
    const busy = (idHex: string) => this.peers.has(idHex) || this.dialling.has(idHex);
    for (const enode of this.table.due(Date.now(), busy)) this.dial(enode);
  }

  private dial(enode: Enode): void {
    this.dialling.add(enode.idHex);
    const socket = connect({ host: enode.host, port: enode.tcpPort });
    const session = new RlpxSession(socket, this.identity(), this.handler, enode.id, this.config.timings ?? DEFAULT_TIMINGS);
    this.track(session);
  }

  private track(session: RlpxSession): void {
    this.sessions.add(session);
  }

  private onHello(session: RlpxSession): DisconnectReasonCode | undefined {
    const idHex = session.remoteIdHex;
    if (!session.inbound) this.dialling.delete(idHex);
    if (idHex === this.idHex) return DisconnectReason.LOCAL_IDENTITY;
    const existing = this.peers.get(idHex);
    if (existing && !existing.session.isClosed) {
      // Both sides dialled at once: keep the connection the node with the smaller id initiated, a
      // rule both ends apply alike. A redial while the old connection lives keeps the old one.
      const initiatorOf = (s: RlpxSession) => (s.inbound ? idHex : this.idHex);
      if (initiatorOf(session) < initiatorOf(existing.session)) {
        this.peers.delete(idHex);
        existing.session.disconnect(DisconnectReason.ALREADY_CONNECTED);
      } else {
        return DisconnectReason.ALREADY_CONNECTED;
      }
    }
    if (this.peers.size >= this.config.maxPeers && !this.table.isStatic(idHex)) return DisconnectReason.TOO_MANY_PEERS;
    if (!session.hasCapability(ETH_CAPABILITY.name)) return DisconnectReason.USELESS_PEER;
    const peer: Peer = { session, idHex, address: Buffer.from(keccak_256(session.remoteId!).subarray(12)).toString('hex') };
    this.peers.set(idHex, peer);
    peer.statusTimer = setTimeout(() => {
      if (!peer.status) session.disconnect(DisconnectReason.TIMEOUT);
    }, this.config.statusTimeoutMs ?? 10_000);
    session.send(ETH_CAPABILITY.name, EthCode.STATUS, encodeStatus(this.localStatus()));
    return undefined;
  }

  private localStatus(): EthStatus {
    return {
      version: ETH_PROTOCOL_VERSION,
      networkId: this.config.networkId,
      totalDifficulty: this.head.totalDifficulty,
      bestHash: this.head.hash,
      genesisHash: this.config.genesisHash,
      forkId: forkIdAt(this.schedule, this.head),
    };
  }

  private onMessage(session: RlpxSession, capability: string, code: number, payload: Uint8Array): void {
    const peer = this.peers.get(session.remoteIdHex);
    if (!peer || peer.session !== session) return;
    if (capability === ETH_CAPABILITY.name) {
      if (code !== EthCode.STATUS) return; // block exchange is not implemented: other eth messages are ignored
      if (peer.status) return session.disconnect(DisconnectReason.PROTOCOL_BREACH);
      let status: EthStatus;
      try {
        status = decodeStatus(payload);
      } catch {
        return session.disconnect(DisconnectReason.SUBPROTOCOL);
      }
      const problem = checkRemoteStatus({ networkId: this.config.networkId, schedule: this.schedule, head: this.head }, status);
      if (problem !== undefined) {
        this.listener.log?.(`Disconnecting peer ${peer.idHex.slice(0, 16)}…: ${problem}`, 'debug');
        return session.disconnect(DisconnectReason.SUBPROTOCOL);
      }
      peer.status = status;
      clearTimeout(peer.statusTimer);
      this.table.connected(peer.idHex);
      this.listener.log?.(`Connected to peer ${peer.idHex.slice(0, 16)}… (${session.hello?.clientId ?? '?'}, ${session.inbound ? 'inbound' : 'outbound'})`);
      this.publishPeerCount();
      return;
    }
    if (capability === ISTANBUL_CAPABILITY.name && peer.status) {
      this.listener.onIstanbulMessage?.(code, payload, peer.idHex);
    }
  }

  private onClose(session: RlpxSession, reason: DisconnectReasonCode | undefined, byPeer: boolean): void {
    this.sessions.delete(session);
    const idHex = session.remoteIdHex;
    if (!session.inbound) this.dialling.delete(idHex);
    const peer = this.peers.get(idHex);
    if (peer && peer.session === session) {
      clearTimeout(peer.statusTimer);
      this.peers.delete(idHex);
      if (peer.status) {
        const why = reason === undefined ? 'connection closed' : `reason 0x${reason.toString(16).padStart(2, '0')}${byPeer ? ' from peer' : ''}`;
        this.listener.log?.(`Disconnected from peer ${idHex.slice(0, 16)}… (${why})`);
      }
      this.publishPeerCount();
    }
    // A connection replaced by a better one for the same peer is not a failure.
    if (idHex !== '' && !this.peers.has(idHex)) this.table.failed(idHex, Date.now());
  }

  private publishPeerCount(): void {
    const count = this.peerCount;
    if (count === this.lastPeerCount) return;
    this.lastPeerCount = count;
    this.listener.onPeerCount?.(count);
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** `::ffff:1.2.3.4` (an IPv4 peer on a dual-stack socket) → `1.2.3.4`. */
function plainIp(address: string | undefined): string {
  if (address === undefined) return '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
