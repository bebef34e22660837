/**
 * A bare WebSocket client on a TCP socket, for benchmarks that hold many connections in one process
 * and time arrivals: the handshake, masked text frames out, unfragmented server frames in, nothing
 * else (no ping answers, no extensions). A message is timed when its bytes are read, before any
 * parsing, so the client adds as little as it can to what it measures.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';

export interface RawWsMessage {
  text: string;
  /** performance.timeOrigin + performance.now() when the read that completed it returned. */
  at: number;
}

export class RawWs {
  private buffer: Buffer = Buffer.alloc(0);
  private handler: (message: RawWsMessage) => void = () => {};

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk, performance.timeOrigin + performance.now()));
  }

  static open(url: string): Promise<RawWs> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      socket.once('error', reject);
      socket.once('connect', () => {
        const key = randomBytes(16).toString('base64');
        socket.write(
          `GET / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
        let head = Buffer.alloc(0);
        const onHead = (chunk: Buffer): void => {
          head = Buffer.concat([head, chunk]);
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) return;
          socket.off('data', onHead);
          if (!head.subarray(0, 12).toString().includes('101')) {
            reject(new Error(`handshake refused: ${head.subarray(0, end).toString()}`));
            socket.destroy();
            return;
          }
          const client = new RawWs(socket);
          const rest = head.subarray(end + 4);
          if (rest.length > 0) client.read(rest, performance.timeOrigin + performance.now());
          resolve(client);
        };
        socket.on('data', onHead);
      });
    });
  }

  onMessage(handler: (message: RawWsMessage) => void): void {
    this.handler = handler;
  }

  /** One masked text frame (the mask is zero: the payload goes as is). */
  send(text: string): void {
    const payload = Buffer.from(text);
    const header =
      payload.length < 126
        ? Buffer.from([0x81, 0x80 | payload.length])
        : payload.length < 65536
          ? Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff])
          : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), bigLength(payload.length)]);
    this.socket.write(Buffer.concat([header, Buffer.alloc(4), payload]));
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer, at: number): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return;
      let length = this.buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffer.length < offset + length) return;
      const opcode = this.buffer[0]! & 0x0f;
      const payload = this.buffer.subarray(offset, offset + length);
      this.buffer = this.buffer.subarray(offset + length);
      if (opcode === 0x1 || opcode === 0x2) this.handler({ text: payload.toString('utf8'), at });
    }
  }
}

function bigLength(length: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(length));
  return bytes;
}
