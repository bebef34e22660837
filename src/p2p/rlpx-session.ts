/**
 * One RLPx connection over a TCP socket: encryption handshake, Hello, capability offsets, snappy,
 * ping/pong keep-alive and Disconnect (qbft-and-p2p.md §10). Sub-protocol messages are handed to the
 * owner (the P2P service) by capability name and protocol-relative code.
 */
import type { Socket } from 'node:net';
import { RLP } from '@ethereumjs/rlp';
import { createAck, createAuth, deriveSecrets, packetSize, readAck, readAuth } from './rlpx-handshake.js';
import { FRAME_HEADER_SIZE, FrameCodec } from './rlpx-frames.js';
import { MAX_UNCOMPRESSED_LENGTH, snappyCompress, snappyDecompress, snappyUncompressedLength } from './snappy.js';

export const P2P_VERSION = 5;

/** devp2p Disconnect reasons (§10). */
export const DisconnectReason = {
  REQUESTED: 0x00,
  TCP_ERROR: 0x01,
  PROTOCOL_BREACH: 0x02,
  USELESS_PEER: 0x03,
  TOO_MANY_PEERS: 0x04,
  ALREADY_CONNECTED: 0x05,
  INCOMPATIBLE_VERSION: 0x06,
  NULL_NODE_ID: 0x07,
  CLIENT_QUITTING: 0x08,
  UNEXPECTED_ID: 0x09,
  LOCAL_IDENTITY: 0x0a,
  TIMEOUT: 0x0b,
  SUBPROTOCOL: 0x10,
} as const;
export type DisconnectReasonCode = (typeof DisconnectReason)[keyof typeof DisconnectReason];

const BaseCode = { HELLO: 0x00, DISCONNECT: 0x01, PING: 0x02, PONG: 0x03 } as const;
const BASE_PROTOCOL_LENGTH = 0x10;
const EMPTY_LIST = Uint8Array.of(0xc0);

/** A capability this node offers, with the size of its message space. */
export interface LocalCapability {
  name: string;
  version: number;
  length: number;
}

export interface Capability {
  name: string;
  version: number;
}

export interface Hello {
  p2pVersion: number;
  clientId: string;
  capabilities: Capability[];
  listenPort: number;
  id: Uint8Array;
}

export interface LocalIdentity {
  privateKey: Uint8Array;
  id: Uint8Array;
  clientId: string;
  listenPort: number;
  capabilities: readonly LocalCapability[];
}

export interface SessionTimings {
  /** Handshake and Hello must complete within this time. */
  setupTimeoutMs: number;
  /** A PING goes out after this much inbound silence; a second silence of this length disconnects. */
  pingIntervalMs: number;
}

export const DEFAULT_TIMINGS: SessionTimings = { setupTimeoutMs: 10_000, pingIntervalMs: 15_000 };

export interface SessionHandler {
  /** After both Hellos: answer a reason to refuse the peer, or undefined to keep it. */
  onHello(session: RlpxSession): DisconnectReasonCode | undefined;
  onMessage(session: RlpxSession, capability: string, code: number, payload: Uint8Array): void;
  /** Called once when the connection ends, whoever ended it. */
  onClose(session: RlpxSession, reason: DisconnectReasonCode | undefined, byPeer: boolean): void;
}

interface SharedCapability extends LocalCapability {
  offset: number;
}

type State = 'auth' | 'ack' | 'header' | 'body';

export class RlpxSession {
  /** The peer's node id; known from the start when dialling, after the auth message when accepting. */
  remoteId: Uint8Array | undefined;
  hello: Hello | undefined;
  readonly inbound: boolean;
  private shared: SharedCapability[] = [];
  private codec: FrameCodec | undefined;
  private compress = false;
  private state: State;
  private buffer: Uint8Array = new Uint8Array(0);
  private pendingFrameSize = 0;
  private pendingBodyLength = 0;
  private initiator: { auth: Uint8Array; ephemeralKey: Uint8Array; nonce: Uint8Array } | undefined;
  private helloSent = false;
  private closed = false;
  private setupTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private awaitingPong = false;

  constructor(
    readonly socket: Socket,
    private readonly local: LocalIdentity,
    private readonly handler: SessionHandler,
    remoteId: Uint8Array | undefined,
    private readonly timings: SessionTimings = DEFAULT_TIMINGS,
  ) {
    this.inbound = remoteId === undefined;
    this.remoteId = remoteId;
    this.state = this.inbound ? 'auth' : 'ack';
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => this.finish(DisconnectReason.TCP_ERROR, false));
    socket.on('close', () => this.finish(undefined, false));
    this.setupTimer = setTimeout(() => this.disconnect(DisconnectReason.TIMEOUT), timings.setupTimeoutMs);
    if (!this.inbound) {
      this.initiator = createAuth(local.privateKey, remoteId!);
      socket.write(this.initiator.auth);
    }
  }

  get remoteIdHex(): string {
    return this.remoteId === undefined ? '' : Buffer.from(this.remoteId).toString('hex');
  }

  get isActive(): boolean {
    return this.hello !== undefined && !this.closed;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Capabilities both sides speak (highest common version of each name), in offset order. */
  get sharedCapabilities(): readonly Capability[] {
    return this.shared.map(({ name, version }) => ({ name, version }));
  }

  hasCapability(name: string): boolean {
    return this.shared.some((c) => c.name === name);
  }

  send(capability: string, code: number, payload: Uint8Array): boolean {
    const cap = this.shared.find((c) => c.name === capability);
    if (!cap || this.closed || code >= cap.length) return false;
    this.writeFrame(cap.offset + code, payload);
    return true;
  }

  /** Sends Disconnect, then closes the socket shortly after so that the message can leave. */
  disconnect(reason: DisconnectReasonCode): void {
    if (this.closed) return;
    if (this.codec) {
      try {
        this.writeFrame(BaseCode.DISCONNECT, RLP.encode([reason]));
      } catch {
        // The socket may already be gone; closing is all that is left.
      }
    }
    this.finish(reason, false);
    const socket = this.socket;
    setTimeout(() => socket.destroy(), 200).unref();
    socket.end();
  }

  private finish(reason: DisconnectReasonCode | undefined, byPeer: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.setupTimer);
    clearTimeout(this.pingTimer);
    if (reason === undefined || byPeer) this.socket.destroy();
    this.handler.onClose(this, reason, byPeer);
  }

  private writeFrame(messageId: number, payload: Uint8Array): void {
    if (!this.codec) throw new Error('no session keys yet');
    const body = this.compress && messageId !== BaseCode.HELLO ? snappyCompress(payload) : payload;
    this.socket.write(this.codec.encode(messageId, body));
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.buffer = this.buffer.length === 0 ? new Uint8Array(chunk) : Buffer.concat([this.buffer, chunk]);
    try {
      while (!this.closed && this.step()) {
        // keep consuming complete units from the buffer
      }
    } catch {
      // Bad MAC, bad handshake or a malformed base-protocol message.
      this.disconnect(DisconnectReason.PROTOCOL_BREACH);
    }
  }

  /** Consumes one unit (handshake packet, frame header or frame body); false when more bytes are needed. */
  private step(): boolean {
    switch (this.state) {
      case 'auth':
      case 'ack': {
        if (this.buffer.length < 2) return false;
        const size = packetSize(this.buffer);
        if (this.buffer.length < size) return false;
        const packet = this.take(size);
        if (this.state === 'auth') this.onAuth(packet);
        else this.onAck(packet);
        return true;
      }
      case 'header': {
        if (this.buffer.length < FRAME_HEADER_SIZE) return false;
        const { frameSize, bodyLength } = this.codec!.readHeader(this.take(FRAME_HEADER_SIZE));
        this.pendingFrameSize = frameSize;
        this.pendingBodyLength = bodyLength;
        this.state = 'body';
        return true;
      }
      case 'body': {
        if (this.buffer.length < this.pendingBodyLength) return false;
        const frame = this.codec!.readBody(this.take(this.pendingBodyLength), this.pendingFrameSize);
        this.state = 'header';
        this.onFrame(frame.code, frame.payload);
        return true;
      }
    }
  }

  private take(n: number): Uint8Array {
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }

  private onAuth(authPacket: Uint8Array): void {
    const auth = readAuth(this.local.privateKey, authPacket);
    this.remoteId = auth.remoteId;
    const recipient = createAck(auth.remoteId);
    this.socket.write(recipient.ack);
    this.codec = new FrameCodec(
      deriveSecrets({
        initiator: false,
        ephemeralKey: recipient.ephemeralKey,
        remoteEphemeralId: auth.remoteEphemeralId,
        initiatorNonce: auth.remoteNonce,
        recipientNonce: recipient.nonce,
        authPacket,
        ackPacket: recipient.ack,
      }),
    );
    this.state = 'header';
    this.sendHello();
  }

  private onAck(ackPacket: Uint8Array): void {
    const initiator = this.initiator!;
    const ack = readAck(this.local.privateKey, ackPacket);
    this.codec = new FrameCodec(
      deriveSecrets({
        initiator: true,
        ephemeralKey: initiator.ephemeralKey,
        remoteEphemeralId: ack.remoteEphemeralId,
        initiatorNonce: initiator.nonce,
        recipientNonce: ack.remoteNonce,
        authPacket: initiator.auth,
        ackPacket,
      }),
    );
    this.initiator = undefined;
    this.state = 'header';
    this.sendHello();
  }

  private sendHello(): void {
    if (this.helloSent) return;
    this.helloSent = true;
    const caps = this.local.capabilities.map((c) => [c.name, c.version]);
    this.writeFrame(BaseCode.HELLO, RLP.encode([P2P_VERSION, this.local.clientId, caps, this.local.listenPort, this.local.id]));
  }

  private onFrame(messageId: number, raw: Uint8Array): void {
    this.armPing();
    if (messageId === BaseCode.HELLO) return this.onHello(raw);
    if (!this.hello) {
      // Only Disconnect may come before Hello, and then uncompressed.
      if (messageId === BaseCode.DISCONNECT) return this.onDisconnect(raw);
      throw new Error('message before Hello');
    }
    let payload = raw;
    if (this.compress) {
      if (snappyUncompressedLength(raw) >= MAX_UNCOMPRESSED_LENGTH) throw new Error('message too large');
      payload = snappyDecompress(raw);
    }
    switch (messageId) {
      case BaseCode.DISCONNECT:
        return this.onDisconnect(payload);
      case BaseCode.PING:
        this.writeFrame(BaseCode.PONG, EMPTY_LIST);
        return;
      case BaseCode.PONG:
        this.awaitingPong = false;
        return;
    }
    if (messageId < BASE_PROTOCOL_LENGTH) return;
    const cap = this.shared.find((c) => messageId >= c.offset && messageId < c.offset + c.length);
    if (!cap) throw new Error(`message id 0x${messageId.toString(16)} outside every shared capability`);
    this.handler.onMessage(this, cap.name, messageId - cap.offset, payload);
  }

  private onHello(payload: Uint8Array): void {
    if (this.hello) throw new Error('second Hello');
    const hello = decodeHello(payload);
    if (this.remoteId !== undefined && !bytesEqual(hello.id, this.remoteId)) {
      this.disconnect(DisconnectReason.UNEXPECTED_ID);
      return;
    }
    this.hello = hello;
    this.compress = hello.p2pVersion >= 5;
    this.shared = negotiate(this.local.capabilities, hello.capabilities);
    clearTimeout(this.setupTimer);
    this.setupTimer = undefined;
    if (hello.p2pVersion < 4) return this.disconnect(DisconnectReason.INCOMPATIBLE_VERSION);
    if (this.shared.length === 0) return this.disconnect(DisconnectReason.USELESS_PEER);
    const refusal = this.handler.onHello(this);
    if (refusal !== undefined) this.disconnect(refusal);
  }

  private onDisconnect(payload: Uint8Array): void {
    let reason: DisconnectReasonCode | undefined;
    try {
      // RLP([reason]), or (older clients) the bare reason byte.
      const decoded = payload.length === 1 ? payload : RLP.decode(payload);
      const first = Array.isArray(decoded) ? decoded[0] : decoded;
      if (first instanceof Uint8Array) reason = (first.length === 0 ? 0 : first[0]) as DisconnectReasonCode;
    } catch {
      reason = undefined;
    }
    this.finish(reason, true);
  }

  /** Ping after inbound silence; a peer that stays silent through a second interval is dropped. */
  private armPing(): void {
    this.awaitingPong = false;
    clearTimeout(this.pingTimer);
    if (this.closed) return;
    this.pingTimer = setTimeout(() => this.onSilence(), this.timings.pingIntervalMs);
  }

  private onSilence(): void {
    if (this.closed) return;
    if (this.awaitingPong) return this.disconnect(DisconnectReason.TIMEOUT);
    this.awaitingPong = true;
    this.writeFrame(BaseCode.PING, EMPTY_LIST);
    this.pingTimer = setTimeout(() => this.onSilence(), this.timings.pingIntervalMs);
  }
}

export function decodeHello(payload: Uint8Array): Hello {
  const decoded = RLP.decode(payload);
  if (!Array.isArray(decoded) || decoded.length < 5) throw new Error('bad Hello');
  const [version, clientId, caps, port, id] = decoded;
  if (!(version instanceof Uint8Array) || !(clientId instanceof Uint8Array) || !Array.isArray(caps)) throw new Error('bad Hello');
  if (!(port instanceof Uint8Array) || !(id instanceof Uint8Array) || id.length !== 64) throw new Error('bad Hello');
  const capabilities: Capability[] = [];
  for (const cap of caps) {
    if (!Array.isArray(cap) || !(cap[0] instanceof Uint8Array) || !(cap[1] instanceof Uint8Array)) throw new Error('bad capability');
    capabilities.push({ name: Buffer.from(cap[0]).toString('utf8'), version: toNumber(cap[1]) });
  }
  return { p2pVersion: toNumber(version), clientId: Buffer.from(clientId).toString('utf8'), capabilities, listenPort: toNumber(port), id };
}

/** Shared capabilities: highest common version per name, sorted by name, offsets from 0x10 (§4.1). */
export function negotiate(local: readonly LocalCapability[], remote: readonly Capability[]): SharedCapability[] {
  const best = new Map<string, LocalCapability>();
  for (const cap of local) {
    if (!remote.some((r) => r.name === cap.name && r.version === cap.version)) continue;
    const current = best.get(cap.name);
    if (!current || cap.version > current.version) best.set(cap.name, cap);
  }
  let offset = BASE_PROTOCOL_LENGTH;
  return [...best.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((cap) => {
      const shared = { ...cap, offset };
      offset += cap.length;
      return shared;
    });
}

function toNumber(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) n = n * 256 + b;
  return n;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
