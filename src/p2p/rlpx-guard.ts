/**
 * Limits @ethereumjs/devp2p 10.0.0 does not apply itself, fitted onto its objects from outside (it
 * offers no hooks for them). They read members the library does not export, of the exact version
 * package.json pins; test/unit/p2p-limits.test.ts fails if those move.
 */
import type { Server, Socket } from 'node:net';
import type { Peer as RlpxPeer } from '@ethereumjs/devp2p';
import { equalsBytes } from '@ethereumjs/util';
import { HANDSHAKE_TIMEOUT_MS, MAX_MESSAGE_SIZE, snappyDeclaredLength } from './peer-limits.js';

/** The library's private peer members read here. */
interface PeerInternals {
  _eciesSession: { parseBody(data: Uint8Array): Uint8Array | undefined; _remotePublicKey: Uint8Array | null };
  _hello: { protocolVersion: number } | null;
  _socket: Socket;
}

/** Thrown out of the library's frame handling to stop it: the message is not decompressed. */
export class MessageTooLarge extends Error {}

/**
 * Refuses a message whose declared uncompressed length exceeds MAX_MESSAGE_SIZE before the library
 * decompresses it: it would otherwise allocate whatever the 5-byte snappy header claims (up to
 * 4 GiB) for every such message. `onTooLarge` runs first (it disconnects the peer), then the
 * library's own handler of the thrown error closes the frame stream.
 */
export function limitMessageSize(peer: RlpxPeer, onTooLarge: (declared: number) => void): void {
  const internals = peer as unknown as PeerInternals;
  const session = internals._eciesSession;
  const parseBody = session.parseBody.bind(session);
  session.parseBody = (data) => {
    const body = parseBody(data);
    // As the library reads it: byte 0 the message code, the rest snappy-compressed after a v5 Hello.
    if (body !== undefined && body.length > 1 && (internals._hello?.protocolVersion ?? 0) >= 5) {
      const declared = snappyDeclaredLength(body.subarray(1));
      if (declared !== undefined && declared > MAX_MESSAGE_SIZE) {
        onTooLarge(declared);
        throw new MessageTooLarge(`message of ${declared} bytes exceeds the ${MAX_MESSAGE_SIZE}-byte limit`);
      }
    }
    return body;
  };
}

/**
 * Whether the node id a peer's Hello names is the key it proved in the handshake. The library takes
 * an inbound peer's id from its Hello unchecked: a peer could pose as another node (a validator, or
 * a static peer whose connection the duplicate rule would then drop). Besu disconnects it (0x09).
 */
export function helloMatchesHandshake(peer: RlpxPeer): boolean {
  const id = peer.getId();
  const key = (peer as unknown as PeerInternals)._eciesSession._remotePublicKey;
  return id !== null && key !== null && key.length === 65 && id.length === 64 && equalsBytes(key.subarray(1), id);
}

/** Base-protocol codes after Hello: Disconnect, Ping, Pong (0x04–0x0f are reserved). */
const BASE_CODES_AFTER_HELLO: ReadonlySet<number> = new Set([0x01, 0x02, 0x03]);

/**
 * Refuses base-protocol messages out of turn: a second Hello (the library would build the
 * sub-protocols anew, leaving the connection without its Status) or a reserved code (the library
 * ignores those). `onBreach` disconnects the peer; the message is not handled.
 */
export function limitBaseProtocol(peer: RlpxPeer, onBreach: (why: string) => void): void {
  const base = peer as unknown as { _handleMessage(code: number, payload: unknown): void };
  const handle = base._handleMessage.bind(peer);
  base._handleMessage = (code, payload) => {
    if (!BASE_CODES_AFTER_HELLO.has(code)) return onBreach(code === 0x00 ? 'a second Hello' : `base protocol code 0x${code.toString(16)}`);
    handle(code, payload);
  };
}

/** The TCP socket of a library peer. */
export function socketOf(peer: RlpxPeer): Socket {
  return (peer as unknown as PeerInternals)._socket;
}

/**
 * Closes inbound connections that have not completed the handshake and Hello in time. The library
 * has none of its own: a silent socket, or one sending garbage before the handshake (the library
 * cannot send a Disconnect without session keys, so it keeps reading), would stay open for good.
 */
export function closeSlowHandshakes(server: Server, pastHello: (socket: Socket) => boolean, timeoutMs = HANDSHAKE_TIMEOUT_MS): void {
  // Ahead of the library's own listener, which wraps the socket in a peer.
  server.prependListener('connection', (socket: Socket) => {
    const timer = setTimeout(() => {
      if (!pastHello(socket)) socket.destroy();
    }, timeoutMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
