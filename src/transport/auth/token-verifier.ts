/**
 * Verification of a bearer token (spec rpc-auth-cli.md §8.6): a compact JWS whose `alg` is the configured
 * algorithm, signed by the configured (or generated) key, whose claims carry an `exp` still ahead and no
 * `nbf`/`iat` in the future (Vert.x's checks, leeway 0).
 *
 * Signatures are checked off the calling thread: jose verifies RSA and NIST-curve ECDSA through WebCrypto,
 * and secp256k1 keys (which jose 6 no longer takes) go to node:crypto's asynchronous verify. Both sit
 * behind one `TokenVerifier`, and one claims check follows either.
 */
import { createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import type { VerificationKey } from '../../shared/auth/verification-key.js';

/** What a verified token says about its bearer. */
export interface VerifiedToken {
  /** The `permissions` claim (its strings; anything else grants nothing). */
  readonly permissions: readonly string[];
  /** The `exp` claim, seconds since the epoch: the token is valid while the clock is before it. */
  readonly exp: number;
  readonly username?: string;
}

export interface TokenVerifier {
  /** The token's claims if it is valid now, undefined otherwise (never throws). */
  verify(token: string): Promise<VerifiedToken | undefined>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function decodeJsonObject(segment: string): JsonObject | undefined {
  if (!BASE64URL.test(segment)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds since the epoch, as Vert.x counts them. */
function nowSeconds(clock: () => number): number {
  return Math.floor(clock() / 1000);
}

/**
 * The claims check shared by every algorithm: `exp` required and ahead of now; `nbf` and `iat`, when
 * present, numbers not in the future. A claim of the wrong type fails the token.
 */
export function checkClaims(claims: JsonObject, now: number): VerifiedToken | undefined {
  const { exp, nbf, iat, permissions, username } = claims;
  if (typeof exp !== 'number' || !Number.isFinite(exp) || now >= exp) return undefined;
  if (nbf !== undefined && (typeof nbf !== 'number' || now < nbf)) return undefined;
  if (iat !== undefined && (typeof iat !== 'number' || iat > now)) return undefined;
  return {
    permissions: Array.isArray(permissions) ? permissions.filter((entry): entry is string => typeof entry === 'string') : [],
    exp,
    ...(typeof username === 'string' ? { username } : {}),
  };
}

/** The `alg` header values accepted for a key: its algorithm, and RFC 8812's ES256K for a secp256k1 ES256 key. */
export function acceptedAlgorithms(key: VerificationKey): readonly string[] {
  return key.curve === 'secp256k1' ? [key.algorithm, 'ES256K'] : [key.algorithm];
}

/** Checks a token's signature; resolves with its payload bytes when the signature is good. */
type SignatureCheck = (token: string, segments: readonly [string, string, string]) => Promise<Uint8Array | undefined>;

function joseSignatureCheck(key: KeyObject, algorithm: string): SignatureCheck {
  return async (token) => {
    try {
      return (await compactVerify(token, key, { algorithms: [algorithm] })).payload;
    } catch {
      return undefined;
    }
  };
}

/** ECDSA over secp256k1 with SHA-256, the signature as JOSE writes it (r ‖ s, 32 bytes each). */
function secp256k1SignatureCheck(key: KeyObject): SignatureCheck {
  return (_token, [header, payload, signature]) => {
    const signatureBytes = Buffer.from(signature, 'base64url');
    if (!BASE64URL.test(signature) || signatureBytes.length !== 64) return Promise.resolve(undefined);
    const signingInput = Buffer.from(`${header}.${payload}`, 'ascii');
    return new Promise((resolve) => {
      verifySignature('sha256', signingInput, { key, dsaEncoding: 'ieee-p1363' }, signatureBytes, (error, valid) => {
        resolve(error === null && valid ? Buffer.from(payload, 'base64url') : undefined);
      });
    });
  };
}

export function createTokenVerifier(key: VerificationKey, clock: () => number = Date.now): TokenVerifier {
  const keyObject = createPublicKey({ key: Buffer.from(key.spki), format: 'der', type: 'spki' });
  const accepted = acceptedAlgorithms(key);
  const checkSignature = key.curve === 'secp256k1' ? secp256k1SignatureCheck(keyObject) : joseSignatureCheck(keyObject, key.algorithm);
  return {
    async verify(token) {
      const segments = token.split('.');
      if (segments.length !== 3) return undefined;
      const header = decodeJsonObject(segments[0]!);
      // `none`, HMAC and any algorithm but the configured one fail here, before any key is used; so does
      // a header naming extensions that must be understood (`crit`), since none is.
      if (header === undefined || typeof header.alg !== 'string' || !accepted.includes(header.alg) || 'crit' in header) return undefined;
      const payload = await checkSignature(token, segments as [string, string, string]);
      if (payload === undefined) return undefined;
      let claims: unknown;
      try {
        claims = JSON.parse(Buffer.from(payload).toString('utf8'));
      } catch {
        return undefined;
      }
      if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
      return checkClaims(claims as JsonObject, nowSeconds(clock));
    },
  };
}
