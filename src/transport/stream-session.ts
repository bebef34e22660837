/**
 * One WebSocket or IPC connection as JSON-RPC sees it: messages in, answers and subscription
 * notifications out, its subscriptions dropped when it closes. The socket itself belongs to the
 * server (ws-server.ts, ipc-server.ts), which hands each message in and writes what comes out.
 */
import type { Logger } from '../shared/util/log.js';
import { INTERNAL_ERROR_RESPONSE, type RpcCaller } from './jsonrpc.js';
import { handleStreamMessage, type StreamRules } from './jsonrpc-stream.js';
import type { SubscribingConnection } from './subscription-hub.js';
import type { JsonText } from '../shared/rpc/json-text.js';

export interface StreamSessionOptions {
  rules: StreamRules;
  /** The method caller of this connection (its eth_subscribe and eth_unsubscribe act on it). */
  callerFor(session: StreamSession): RpcCaller;
  /** Writes one answer or notification to the socket, as text (a large answer comes as UTF-8 bytes). */
  write(text: JsonText): void;
  /** The connection closed. */
  onClose(session: StreamSession): void;
  log: Logger;
}

export class StreamSession implements SubscribingConnection {
  /** Set when the connection's token expired (authentication on): it may hold no more subscriptions. */
  subscriptionsRevoked = false;
  private open = true;
  private readonly call: RpcCaller;

  constructor(private readonly options: StreamSessionOptions) {
    this.call = options.callerFor(this);
  }

  get closed(): boolean {
    return !this.open;
  }

  /** Answers one message; answers go out as they are ready (requests run concurrently, ids tell them apart). */
  receive(text: string): void {
    handleStreamMessage(text, this.call, this.options.rules).then(
      (answer) => {
        if (answer !== undefined) this.send(answer);
      },
      // A bug, not bad input: answered, and logged, rather than left to end the thread.
      (err: unknown) => {
        this.options.log.error('JSON-RPC message failed', err);
        this.send(INTERNAL_ERROR_RESPONSE);
      },
    );
  }

  send(text: JsonText): void {
    if (this.open) this.options.write(text);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.options.onClose(this);
  }
}
