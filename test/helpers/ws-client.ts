/**
 * A small JSON-RPC client over a raw WebSocket (the `ws` package) for tests that look at frames:
 * every message the node sends is kept in arrival order, and a test waits for the one it expects.
 */
import WebSocket from 'ws';

/** A message from the node: its text, and whether it came in a binary frame. */
export interface Received {
  text: string;
  binary: boolean;
}

export class WsClient {
  readonly received: Received[] = [];
  private waiters: (() => void)[] = [];
  /** Resolves with the close code once the connection is closed (by either side). */
  readonly closed: Promise<number>;
  private nextId = 1000;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, binary) => {
      this.received.push({ text: String(data), binary });
      this.wake();
    });
    this.closed = new Promise((resolve) => socket.once('close', (code) => {
      resolve(code);
      this.wake();
    }));
  }

  static open(url: string, options: WebSocket.ClientOptions = {}): Promise<WsClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { perMessageDeflate: false, ...options });
      const client = new WsClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('error', reject);
    });
  }

  send(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  /** Sends a request and waits for the answer with its id. */
  async call(method: string, params: unknown[] = []): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
    const id = this.nextId++;
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    const answer = await this.waitFor((message) => (JSON.parse(message.text) as { id?: unknown }).id === id);
    return JSON.parse(answer.text) as { result?: unknown; error?: { code: number; message: string } };
  }

  /** eth_subscribe; throws on an error answer. */
  async subscribe(...params: unknown[]): Promise<string> {
    const answer = await this.call('eth_subscribe', params);
    if (answer.error) throw new Error(`eth_subscribe failed: ${answer.error.message}`);
    return answer.result as string;
  }

  /** The results of the notifications of subscription `id` received so far. */
  notifications(id: string): unknown[] {
    return this.received.flatMap((message) => {
      const parsed = JSON.parse(message.text) as { method?: string; params?: { subscription: string; result: unknown } };
      return parsed.method === 'eth_subscription' && parsed.params?.subscription === id ? [parsed.params.result] : [];
    });
  }

  /** Waits until subscription `id` has had `count` notifications; answers them. */
  async notificationsOf(id: string, count: number, timeoutMs = 20_000): Promise<unknown[]> {
    await this.until(() => this.notifications(id).length >= count, `${count} notification(s) of ${id}`, timeoutMs);
    return this.notifications(id);
  }

  /** The first message from index `from` on that satisfies `accept`. */
  async waitFor(accept: (message: Received) => boolean, from = 0, timeoutMs = 20_000): Promise<Received> {
    let found: Received | undefined;
    await this.until(() => (found = this.received.slice(from).find(accept)) !== undefined, 'an expected message', timeoutMs);
    return found!;
  }

  /** Waits for the next message after those received so far. */
  next(timeoutMs = 20_000): Promise<Received> {
    return this.waitFor(() => true, this.received.length, timeoutMs);
  }

  async until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (this.socket.readyState === WebSocket.CLOSED) throw new Error(`the connection closed while waiting for ${what}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): Promise<number> {
    this.socket.close();
    return this.closed;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
