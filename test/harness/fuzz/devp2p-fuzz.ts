/**
 * Sending fuzz frames to a node's p2p port through fake peers, and the checks on what the node does:
 * a peer that sent garbage must be disconnected promptly (with a Disconnect reason); any other
 * traffic may be answered, ignored or disconnected. Raw TCP garbage before the handshake, and a
 * silent socket, must be closed within the handshake timeout. Shared by
 * test/e2e/fuzz-devp2p.test.ts and bench/fuzz.ts.
 */
import { connect } from 'node:net';
import { FakePeer, type FakePeerChain, type NodeTarget } from './fake-peer.js';
import type { FrameCase } from './devp2p-frames.js';

/** How long the node has to disconnect a peer that sent garbage. */
const DISCONNECT_WITHIN_MS = 5_000;

export class Devp2pFuzzer {
  tried = 0;
  garbage = 0;
  /** Garbage the node did not disconnect for: must stay 0. */
  garbageKept = 0;
  /** Fake peers the node did not accept (it must keep accepting peers): must stay 0. */
  refusedConnections = 0;
  connections = 0;
  /** Disconnect reasons the node gave, by reason byte ('none' when it just closed). */
  readonly reasons = new Map<string, number>();
  readonly failures: string[] = [];
  private peer: FakePeer | undefined;

  constructor(
    private readonly target: NodeTarget,
    private readonly chain: FakePeerChain,
  ) {}

  /** Sends one case on the current connection (a new one when the node closed the last). */
  async run(fuzzCase: FrameCase): Promise<void> {
    this.tried++;
    const peer = await this.connected();
    if (!peer) return;
    for (const frame of fuzzCase.frames) peer.sendFrame(frame.code, frame.payload, frame.compress);
    if (!fuzzCase.garbage) return;
    this.garbage++;
    let timer: NodeJS.Timeout | undefined;
    const ending = await Promise.race([
      peer.ended,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), DISCONNECT_WITHIN_MS))),
    ]);
    clearTimeout(timer);
    this.peer = undefined;
    if (ending === undefined) {
      peer.close();
      this.garbageKept++;
      this.fail(`not disconnected after ${fuzzCase.kind}: ${describe(fuzzCase)}`);
      return;
    }
    const reason = ending.reason === undefined ? 'none' : `0x${ending.reason.toString(16).padStart(2, '0')}`;
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
  }

  close(): void {
    this.peer?.close();
    this.peer = undefined;
  }

  private async connected(): Promise<FakePeer | undefined> {
    if (this.peer?.isOpen) return this.peer;
    this.peer?.close();
    this.peer = undefined;
    // The node may still be closing the last connection: it refuses a second one from a node id
    // only while the first lives, and every fake peer has an id of its own.
    try {
      this.peer = await FakePeer.connect(this.target, this.chain);
      this.connections++;
      return this.peer;
    } catch (err) {
      this.refusedConnections++;
      this.fail(`could not connect: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  private fail(message: string): void {
    if (this.failures.length < 10) this.failures.push(message);
  }
}

function describe(fuzzCase: FrameCase): string {
  return fuzzCase.frames.map((f) => `0x${f.code.toString(16)}:${Buffer.from(f.payload.subarray(0, 48)).toString('hex')}${f.payload.length > 48 ? '…' : ''}${f.compress ? '' : ' (raw)'}`).join(' ');
}

/**
 * Opens a TCP connection to the p2p port, writes `bytes` (nothing for a silent socket) and resolves
 * with how long the node took to close it, or undefined when it was still open after `withinMs`.
 */
export function rawSocketClosedWithin(host: string, port: number, bytes: Uint8Array, withinMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(undefined);
    }, withinMs);
    socket.on('error', () => {});
    socket.on('connect', () => {
      if (bytes.length > 0) socket.write(bytes);
    });
    socket.on('data', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}
