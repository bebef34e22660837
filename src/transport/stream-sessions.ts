/**
 * The sessions of a transport that holds connections (WebSocket, IPC): each connection gets a method
 * caller with its own eth_subscribe and eth_unsubscribe, and its subscriptions go when it closes.
 *
 * With authentication on (WebSocket only; IPC has none, spec rpc-auth-cli.md §7) a connection calls with
 * the access of the bearer token of its upgrade request, checked again with every call (§6.5). When
 * that token expires its subscriptions are dropped, which Besu does not do (connection-authentication.ts),
 * unless eth_subscribe is open to anyone (`--rpc-ws-api-methods-no-auth`), in which case the token never
 * mattered to them.
 */
import type { Logger } from '../shared/util/log.js';
import type { Authenticator } from './auth/authenticator.js';
import { bearerToken } from './auth/bearer.js';
import { ConnectionAuthentication, type Timers } from './auth/connection-authentication.js';
import type { RpcCaller } from './jsonrpc.js';
import type { StreamRules } from './jsonrpc-stream.js';
import type { SubscriptionHandlers } from './local-methods.js';
import { StreamSession } from './stream-session.js';
import type { SubscriptionHub } from './subscription-hub.js';
import type { JsonText } from '../shared/rpc/json-text.js';

export interface StreamSessionsOptions {
  /** Names the transport in log lines. */
  transportName: string;
  rules: StreamRules;
  hub: SubscriptionHub;
  /** The method caller of one connection whose subscription methods are `subscriptions`. */
  callerWith(subscriptions: SubscriptionHandlers): RpcCaller;
  /** With authentication on: the service's token cache. */
  authenticator?: Authenticator;
  log: Logger;
  /** Waits for token expiries (tests drive them). */
  timers?: Timers;
}

/**
 * Opens the session of a new connection writing through `write`; `authorization` is the Authorization
 * header of its upgrade request (undefined without one, and for a transport without authentication).
 */
export type OpenSession = (write: (text: JsonText) => void, authorization?: string) => StreamSession;

export function streamSessions(options: StreamSessionsOptions): OpenSession {
  const { hub, log, authenticator } = options;
  const subscribingIsOpen = authenticator?.anonymous.permits('eth_subscribe') ?? true;
  return (write, authorization) => {
    let authentication: ConnectionAuthentication | undefined;
    return new StreamSession({
      rules: options.rules,
      write,
      log,
      callerFor: (session) => {
        const call = options.callerWith(hub.handlers(session));
        if (authenticator === undefined) return call;
        const onExpired = (): void => {
          if (subscribingIsOpen) return;
          session.subscriptionsRevoked = true;
          const dropped = hub.dropSubscriptions(session);
          log.debug(`A ${options.transportName} connection's token expired: its ${dropped} subscription(s) dropped`);
        };
        authentication = new ConnectionAuthentication(authenticator, bearerToken(authorization), onExpired, options.timers);
        return authentication.caller(call);
      },
      onClose: (session) => {
        authentication?.close();
        const dropped = hub.connectionClosed(session);
        if (dropped > 0) log.debug(`A ${options.transportName} connection closed: its ${dropped} subscription(s) dropped`);
      },
    });
  };
}
