/**
 * The access of each request of one transport thread, from its bearer token (or none): a token is verified
 * once, then its access is kept until its `exp`, keyed by the token's exact text, so a client sending the
 * same token with every call pays one map lookup per request. Concurrent first uses of a token share one
 * verification. Only valid tokens are kept (an invalid one costs a verification each time, but cannot
 * fill the cache), and the cache is bounded.
 */
import { createAccess, type MethodAccess } from './permissions.js';
import type { TokenVerifier } from './token-verifier.js';

interface Entry {
  readonly access: MethodAccess;
  /** The token's `exp`, seconds since the epoch. */
  readonly exp: number;
}

export interface AuthenticatorOptions {
  /** Most tokens kept at once (default 10,000). */
  maxEntries?: number;
  /** Milliseconds since the epoch (tests drive it). */
  clock?: () => number;
}

export class Authenticator {
  /** No method is open to requests without a token: such a request is refused before it is parsed. */
  readonly tokenRequired: boolean;
  /** The access of a request without a valid token: the no-auth methods only. */
  readonly anonymous: MethodAccess;

  private readonly noAuthMethods: ReadonlySet<string>;
  private readonly verified = new Map<string, Entry>();
  private readonly verifying = new Map<string, Promise<MethodAccess>>();
  private readonly maxEntries: number;
  private readonly clock: () => number;

  constructor(
    private readonly verifier: TokenVerifier,
    noAuthMethods: readonly string[],
    options: AuthenticatorOptions = {},
  ) {
    this.noAuthMethods = new Set(noAuthMethods);
    this.tokenRequired = this.noAuthMethods.size === 0;
    this.anonymous = createAccess([], this.noAuthMethods);
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * The access of a request bearing `token` (undefined: none). Synchronous when the token is known (or
   * absent), a promise while it is being verified.
   */
  accessOf(token: string | undefined): MethodAccess | Promise<MethodAccess> {
    if (token === undefined) return this.anonymous;
    const entry = this.verified.get(token);
    if (entry !== undefined) {
      if (this.nowSeconds() < entry.exp) return entry.access;
      this.verified.delete(token);
      return this.anonymous;
    }
    let pending = this.verifying.get(token);
    if (pending === undefined) {
      pending = this.verify(token);
      this.verifying.set(token, pending);
    }
    return pending;
  }

  /**
   * Whether `token`'s access still holds (a WebSocket connection re-checks its upgrade token with every
   * message and notification). True only for a token verified before and not yet expired.
   */
  stillValid(token: string): boolean {
    const entry = this.verified.get(token);
    return entry !== undefined && this.nowSeconds() < entry.exp;
  }

  /** The `exp` (seconds) of a token verified before and not yet expired; undefined otherwise. */
  expiryOf(token: string): number | undefined {
    return this.stillValid(token) ? this.verified.get(token)!.exp : undefined;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock() / 1000);
  }

  private async verify(token: string): Promise<MethodAccess> {
    try {
      // A verifier that throws (it should not) grants nothing rather than failing the request.
      const claims = await this.verifier.verify(token).catch(() => undefined);
      if (claims === undefined) return this.anonymous;
      const entry: Entry = { access: createAccess(claims.permissions, this.noAuthMethods), exp: claims.exp };
      this.remember(token, entry);
      return entry.access;
    } finally {
      this.verifying.delete(token);
    }
  }

  private remember(token: string, entry: Entry): void {
    if (this.verified.size >= this.maxEntries) {
      const now = this.nowSeconds();
      for (const [known, { exp }] of this.verified) if (now >= exp) this.verified.delete(known);
      // Still full of live tokens: the oldest goes (it is verified again if it comes back).
      if (this.verified.size >= this.maxEntries) this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(token, entry);
  }
}
