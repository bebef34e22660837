/**
 * Authentication of one WebSocket connection (spec rpc-auth-cli.md §6.5): the token comes from the
 * upgrade request only and is checked again for every call the connection makes, so a connection outlives
 * its token but its calls do not; without a valid token only the no-auth methods answer.
 *
 * Subscriptions: Besu checks the token on incoming messages only, so a subscription made with a token
 * keeps delivering after the token expired. Basalt stops it: when the token's `exp` passes, `onExpired`
 * drops the connection's subscriptions (the connection stays open, and its calls answer -40100 until it
 * reconnects with a new token).
 */
import type { RpcCaller } from '../jsonrpc.js';
import type { Authenticator } from './authenticator.js';
import type { MethodAccess } from './permissions.js';

/** setTimeout cannot wait longer than this; a later expiry is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export interface Timers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Milliseconds since the epoch. */
  now(): number;
}

const REAL_TIMERS: Timers = {
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  now: Date.now,
};

export class ConnectionAuthentication {
  private timer: unknown;
  private closed = false;

  /**
   * @param token the bearer token of the upgrade request, undefined without one
   * @param onExpired called once, when a valid token's `exp` passes
   */
  constructor(
    private readonly authenticator: Authenticator,
    private readonly token: string | undefined,
    private readonly onExpired: () => void,
    private readonly timers: Timers = REAL_TIMERS,
  ) {
    if (token === undefined) return;
    void Promise.resolve(authenticator.accessOf(token)).then(() => {
      const exp = authenticator.expiryOf(token);
      if (exp !== undefined) this.expireAt(exp * 1000);
    });
  }

  /** The connection's access now (its token re-checked against its expiry). */
  access(): MethodAccess | Promise<MethodAccess> {
    return this.authenticator.accessOf(this.token);
  }

  /** `call` with the connection's access, as it is at the moment of each call. */
  caller(call: RpcCaller): RpcCaller {
    return (method, params) => {
      const access = this.access();
      return access instanceof Promise ? access.then((resolved) => call(method, params, resolved)) : call(method, params, access);
    };
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private expireAt(atMs: number): void {
    if (this.closed) return;
    const delay = atMs - this.timers.now();
    if (delay <= 0) {
      this.timer = undefined;
      this.onExpired();
      return;
    }
    this.timer = this.timers.setTimeout(() => this.expireAt(atMs), Math.min(delay, LONGEST_TIMER_MS));
  }
}
