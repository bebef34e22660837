/**
 * The istanbul/100 sub-protocol (QBFT messages, qbft-and-p2p.md §4.1) as an @ethereumjs/devp2p
 * protocol. The library does not export its `Protocol` base class: a sub-protocol is any class that
 * the peer constructs as `new C(version, peer, send)` and hands messages to via `_handleMessage`.
 */
import type { Capabilities, Peer, SendMethod } from '@ethereumjs/devp2p';
import * as snappy from 'snappyjs';

/** Message codes 0x00–0x15 (QBFT uses 0x12–0x15). */
export const ISTANBUL_PROTOCOL_LENGTH = 0x16;

/**
 * The codes QBFT sends: PROPOSAL, PREPARE, COMMIT, ROUND_CHANGE. Besu refuses any other code of the
 * protocol as a breach of protocol (an invalid message code for it).
 */
export function isQbftMessageCode(code: number): boolean {
  return code >= 0x12 && code <= 0x15;
}

export class IstanbulProtocol {
  /** Set by the owner once the peer is accepted; messages before that are dropped. */
  onMessage: ((code: number, data: Uint8Array) => void) | undefined;

  constructor(
    readonly version: number,
    private readonly peer: Peer,
    private readonly send: SendMethod,
  ) {}

  /** Called by the peer with the protocol-relative code; the payload arrives already decompressed. */
  _handleMessage(code: number, data: Uint8Array): void {
    this.onMessage?.(code, data);
  }

  /** Sends one message; false when the code is outside the protocol or the peer has no Hello. */
  sendMessage(code: number, data: Uint8Array): boolean {
    // The peer's own range check lets `code === length` through (it compares with `>`).
    if (!Number.isInteger(code) || code < 0 || code >= ISTANBUL_PROTOCOL_LENGTH) return false;
    const hello = this.peer.getHelloMessage();
    if (hello === null) return false;
    // The peer compresses nothing for a sub-protocol: devp2p v5 wants snappy on every message.
    this.send(code, hello.protocolVersion >= 5 ? snappy.compress(data) : data);
    return true;
  }
}

export const ISTANBUL_CAPABILITY: Capabilities = {
  name: 'istanbul',
  version: 100,
  length: ISTANBUL_PROTOCOL_LENGTH,
  // The declared constructor type is the unexported Protocol class; the peer only ever calls
  // `new C(version, peer, send)` and `_handleMessage`, which this class provides.
  constructor: IstanbulProtocol as unknown as Capabilities['constructor'],
};
