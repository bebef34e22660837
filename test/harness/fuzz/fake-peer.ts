/**
 * A devp2p peer for tests that speak to a node's p2p port on loopback: @ethereumjs/devp2p's RLPx as
 * a client with eth/68 and istanbul/100, which completes Hello and Status like any peer and then
 * sends whatever frames a test gives it, well-formed or not, bypassing the library's own checks.
 */
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { ETH, Peer, RLPx } from '@ethereumjs/devp2p';
import { bigIntToBytes, equalsBytes } from '@ethereumjs/util';
import * as snappy from 'snappyjs';
import { devp2pCommon } from '../../../src/p2p/p2p-service.js';
import { ISTANBUL_CAPABILITY } from '../../../src/p2p/istanbul-protocol.js';
import type { Genesis } from '../../../src/shared/ethereum/genesis.js';

/** Where the base protocol, eth/68 and istanbul/100 codes start once both sides share eth and istanbul. */
export const ETH_OFFSET = 0x10;
export const ETH_LENGTH = 17;
export const ISTANBUL_OFFSET = ETH_OFFSET + ETH_LENGTH;
export const ISTANBUL_LENGTH = 0x16;

export interface NodeTarget {
  /** The node id (64 bytes). */
  id: Uint8Array;
  host: string;
  port: number;
}

/** What the fake peer announces in Status: the node's own chain at its genesis. */
export interface FakePeerChain {
  genesis: Genesis;
  genesisHash: Uint8Array;
  networkId: bigint;
}

/** How a connection ended: the reason of the node's Disconnect, when it sent one. */
export interface Ending {
  reason: number | undefined;
  /** True when the fake peer ended it itself. */
  byUs: boolean;
}

export interface FakePeerOptions {
  /** Complete the Status exchange (default true). */
  status?: boolean;
  timeoutMs?: number;
  /** A node id to claim in Hello instead of the key used in the handshake. */
  claimId?: Uint8Array;
}

/**
 * Makes the library's peers dialling `target` name `claim` in their Hello while the handshake keeps
 * the real key (the library uses one id for both); answers a function undoing it.
 */
function claimIdInHello(target: Uint8Array, claim: Uint8Array): () => void {
  const prototype = Peer.prototype as unknown as { _sendHello(this: HelloSender): void };
  const sendHello = prototype._sendHello;
  prototype._sendHello = function (this: HelloSender) {
    if (this._remoteId !== null && equalsBytes(this._remoteId, target)) this.id = claim;
    sendHello.call(this);
  };
  return () => {
    prototype._sendHello = sendHello;
  };
}

interface HelloSender {
  id: Uint8Array;
  _remoteId: Uint8Array | null;
}

export class FakePeer {
  /** Settles when the connection is gone, however it ended. */
  readonly ended: Promise<Ending>;
  /** eth messages the node sent (code relative to eth, decoded payload), in order. */
  readonly received: { code: number; payload: unknown }[] = [];
  private done = false;

  private constructor(
    private readonly rlpx: RLPx,
    readonly peer: Peer,
    ended: Promise<Ending>,
  ) {
    this.ended = ended.finally(() => this.close());
    const eth = peer.getProtocols().find((p): p is ETH => p instanceof ETH);
    eth?.events.on('message', (code: number, payload: unknown) => this.received.push({ code, payload }));
  }

  /**
   * Connects, completes Hello and (unless `status` is false) the Status exchange; rejects when the
   * node does not accept the peer within `timeoutMs`.
   */
  static async connect(target: NodeTarget, chain: FakePeerChain, options: FakePeerOptions = {}): Promise<FakePeer> {
    const common = devp2pCommon(chain.genesis, chain.genesisHash, chain.networkId);
    const rlpx = new RLPx(randomBytes(32), {
      clientId: new TextEncoder().encode('basalt-fuzz/fake-peer'),
      timeout: options.timeoutMs ?? 10_000,
      dpt: null,
      maxPeers: 1,
      capabilities: [ETH.eth68, ISTANBUL_CAPABILITY],
      common,
      listenPort: null,
    });
    // Frames go out as a header write and a body write: without TCP_NODELAY each waits for a delayed ACK.
    const internals = rlpx as unknown as { _onConnect(socket: Socket, id: Uint8Array | null): void };
    const onConnect = internals._onConnect.bind(rlpx);
    internals._onConnect = (socket, id) => {
      socket.setNoDelay(true);
      onConnect(socket, id);
    };
    // The node's answers to garbage (a Disconnect, a closed socket) surface here; they are expected.
    rlpx.events.on('peer:error', () => {});
    rlpx.events.on('error', () => {});
    let resolveEnded!: (ending: Ending) => void;
    const ended = new Promise<Ending>((resolve) => (resolveEnded = resolve));
    const ready = new Promise<Peer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the node did not accept the fake peer in time')), options.timeoutMs ?? 10_000);
      rlpx.events.once('peer:removed', (_peer: Peer, reason: unknown, byUs: boolean | null) => {
        clearTimeout(timer);
        resolveEnded({ reason: typeof reason === 'number' ? reason : undefined, byUs: byUs === true });
        reject(new Error(`the node disconnected the fake peer during the handshake (reason ${String(reason)})`));
      });
      rlpx.events.once('peer:added', (peer: Peer) => {
        const eth = peer.getProtocols().find((p): p is ETH => p instanceof ETH);
        if (!eth) return reject(new Error('eth/68 was not agreed'));
        if (options.status === false) {
          clearTimeout(timer);
          return resolve(peer);
        }
        eth.events.once('status', () => {
          clearTimeout(timer);
          resolve(peer);
        });
        eth.sendStatus({
          td: bigIntToBytes(chain.genesis.header.difficulty),
          bestHash: chain.genesisHash,
          genesisHash: chain.genesisHash,
          latestBlock: bigIntToBytes(0n),
        });
      });
    });
    const restoreHello = options.claimId === undefined ? undefined : claimIdInHello(target.id, options.claimId);
    rlpx.connect({ id: target.id, address: target.host, tcpPort: target.port }).catch(() => {});
    try {
      const peer = await ready;
      return new FakePeer(rlpx, peer, ended);
    } catch (err) {
      rlpx.destroy();
      throw err;
    } finally {
      restoreHello?.();
    }
  }

  get isOpen(): boolean {
    return !this.done && !(this.peer as unknown as { _closed: boolean })._closed;
  }

  /** One frame with an absolute message code; the payload snappy-compressed unless `compress` is false. */
  sendFrame(code: number, payload: Uint8Array, compress = true): void {
    if (!this.isOpen) return;
    this.peer._sendMessage(code, compress ? snappy.compress(payload) : payload);
  }

  sendEth(code: number, payload: Uint8Array): void {
    this.sendFrame(ETH_OFFSET + code, payload);
  }

  sendIstanbul(code: number, payload: Uint8Array): void {
    this.sendFrame(ISTANBUL_OFFSET + code, payload);
  }

  /** Closes the connection without a Disconnect and frees the RLPx instance. */
  close(): void {
    if (this.done) return;
    this.done = true;
    (this.peer as unknown as { _socket: { destroy(): void } })._socket.destroy();
    this.rlpx.destroy();
  }
}
