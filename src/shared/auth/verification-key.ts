/**
 * The key tokens are verified with: read from `--rpc-http-authentication-jwt-public-key-file` (public-key
 * mode), or the public half of the key pair the node generates for `/login` (credentials mode). Checked
 * once, on the main thread at start-up, against the configured algorithm, so that a transport thread
 * never holds a key it would have to refuse per request.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { EC_CURVES_OF, MIN_RSA_MODULUS_BITS, type EcCurve, type JwtAlgorithmName, type PublicKeyAlgorithm } from './jwt-algorithms.js';

/** Plain data, so it crosses to the transport threads as it is. */
export interface VerificationKey {
  readonly algorithm: PublicKeyAlgorithm;
  /** DER SubjectPublicKeyInfo. */
  readonly spki: Uint8Array;
  /** For ES algorithms, the key's curve (ES256 verifies on P-256 or secp256k1). */
  readonly curve?: EcCurve;
}

/** A refusal of the key file or of the key for the algorithm. */
export class VerificationKeyError extends Error {}

export const KEY_MESSAGES = {
  // Besu's two messages (JWTAuthOptionsFactory).
  unreadable: 'Authentication RPC public key could not be read',
  invalidFormat: 'Authentication RPC public key file format is invalid',
  hmac: (algorithm: string) =>
    `Authentication RPC public key cannot verify ${algorithm} tokens: ${algorithm} is an HMAC algorithm, whose secret must never be a public key; use RS256, RS384, RS512, ES256, ES384 or ES512`,
  wrongType: (type: string, algorithm: string) =>
    `Authentication RPC public key is ${type === 'ec' ? 'an EC' : `a ${type.toUpperCase()}`} key, but ${algorithm} needs ${algorithm.startsWith('RS') ? 'an RSA' : 'an EC'} key`,
  shortRsa: (bits: number, algorithm: string) =>
    `Authentication RPC public key is a ${bits}-bit RSA key, but ${algorithm} needs at least ${MIN_RSA_MODULUS_BITS} bits`,
  wrongCurve: (curve: string, algorithm: 'ES256' | 'ES384' | 'ES512') =>
    `Authentication RPC public key is on curve ${curve}, but ${algorithm} needs ${EC_CURVES_OF[algorithm].join(' or ')}`,
} as const;

/**
 * The DER content of the first PEM block of `text`, whatever its label (Besu's PemReader reads the first
 * object and treats it as SubjectPublicKeyInfo); undefined without a complete block.
 */
export function firstPemBlock(text: string): Uint8Array | undefined {
  const match = /-----BEGIN ([^\r\n-]+)-----\r?\n([\s\S]*?)-----END \1-----/.exec(text);
  if (!match) return undefined;
  const body = match[2]!.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(body, 'base64'));
}

/** Checks that `key` suits `algorithm`: the key type, RSA at least 2048 bits, the curve of an EC key. */
export function checkKeyForAlgorithm(key: KeyObject, algorithm: JwtAlgorithmName): VerificationKey {
  if (algorithm === 'HS256') throw new VerificationKeyError(KEY_MESSAGES.hmac(algorithm));
  const type = key.asymmetricKeyType ?? 'unknown';
  const spki = new Uint8Array(key.export({ format: 'der', type: 'spki' }));
  if (algorithm.startsWith('RS')) {
    if (type !== 'rsa') throw new VerificationKeyError(KEY_MESSAGES.wrongType(type, algorithm));
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_MODULUS_BITS) throw new VerificationKeyError(KEY_MESSAGES.shortRsa(bits, algorithm));
    return { algorithm, spki };
  }
  const ecAlgorithm = algorithm as 'ES256' | 'ES384' | 'ES512';
  if (type !== 'ec') throw new VerificationKeyError(KEY_MESSAGES.wrongType(type, algorithm));
  const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown';
  const allowed: readonly string[] = EC_CURVES_OF[ecAlgorithm];
  if (!allowed.includes(curve)) throw new VerificationKeyError(KEY_MESSAGES.wrongCurve(curve, ecAlgorithm));
  return { algorithm: ecAlgorithm, spki, curve: curve as EcCurve };
}

/** Reads the public key file and checks its key for the configured algorithm. */
export function loadVerificationKey(path: string, algorithm: JwtAlgorithmName, readFile: (path: string) => string): VerificationKey {
  let text: string;
  try {
    text = readFile(path);
  } catch {
    throw new VerificationKeyError(KEY_MESSAGES.unreadable);
  }
  const der = firstPemBlock(text);
  if (der === undefined) throw new VerificationKeyError(KEY_MESSAGES.invalidFormat);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
  } catch {
    throw new VerificationKeyError(KEY_MESSAGES.invalidFormat);
  }
  return checkKeyForAlgorithm(key, algorithm);
}
