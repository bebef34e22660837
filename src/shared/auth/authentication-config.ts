/**
 * What a JSON-RPC service (HTTP or WebSocket) needs to authenticate requests, made by the supervisor at
 * start-up and handed to every transport thread of that service. Plain data: it crosses threads as it is.
 * Each service gets its own: in credentials mode its own key pair, so a token `/login` issued on one
 * service is refused by the other (spec rpc-auth-cli.md §8.1), on every thread of the issuing service.
 */
import type { VerificationKey } from './verification-key.js';

export interface AuthenticationConfig {
  /** `--rpc-http-api-methods-no-auth` / `--rpc-ws-api-methods-no-auth`: methods anyone may call, with or without a token. */
  readonly noAuthMethods: readonly string[];
  /** How tokens are verified: the configured public key, or the public half of the generated key pair. */
  readonly verificationKey: VerificationKey;
  /** Credentials mode only: `/login` checks the file and signs RS256 tokens with the generated key. */
  readonly login?: {
    readonly credentialsFile: string;
    /** PKCS#8 DER of the generated RSA-2048 private key. */
    readonly signingKey: Uint8Array;
  };
}
