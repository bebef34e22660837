/**
 * Tokens made by hand for authentication tests: any header, any payload, signed with node:crypto by any
 * key or HMAC secret, so that both well-formed tokens of every algorithm and the attacks on a verifier
 * (`alg: none`, HS256 keyed with the public key, a foreign key, a tampered payload) can be built.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export type TestAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'ES256' | 'ES256K' | 'ES384' | 'ES512';

/** The digest each algorithm signs with. */
const DIGEST: Record<TestAlgorithm, string> = {
  RS256: 'sha256', RS384: 'sha384', RS512: 'sha512', ES256: 'sha256', ES256K: 'sha256', ES384: 'sha384', ES512: 'sha512',
};

export interface TestKeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
  /** `-----BEGIN PUBLIC KEY-----` SubjectPublicKeyInfo, as a public key file holds it. */
  publicPem: string;
}

export type KeySpec = { rsa: number } | { ec: 'prime256v1' | 'secp256k1' | 'secp384r1' | 'secp521r1' };

export function generateTestKey(spec: KeySpec): TestKeyPair {
  const { publicKey, privateKey } =
    'rsa' in spec ? generateKeyPairSync('rsa', { modulusLength: spec.rsa }) : generateKeyPairSync('ec', { namedCurve: spec.ec });
  return { publicKey, privateKey, publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
}

export function base64url(value: unknown): string {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(JSON.stringify(value), 'utf8');
  return bytes.toString('base64url');
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Claims valid for five minutes, with the permissions given. */
export function validClaims(permissions: string[] = ['*:*'], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = nowSeconds();
  return { permissions, username: 'tester', iat, exp: iat + 300, ...extra };
}

/** A compact JWS of `payload` with `header`, signed by `privateKey` as `algorithm` says. */
export function signToken(
  privateKey: KeyObject,
  algorithm: TestAlgorithm,
  payload: Record<string, unknown>,
  header: Record<string, unknown> = { typ: 'JWT', alg: algorithm },
): string {
  const signingInput = `${base64url(header)}.${base64url(payload)}`;
  const signature = algorithm.startsWith('ES')
    ? sign(DIGEST[algorithm], Buffer.from(signingInput), { key: privateKey, dsaEncoding: 'ieee-p1363' })
    : sign(DIGEST[algorithm], Buffer.from(signingInput), privateKey);
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** The classic key-confusion token: HS256 with the verifier's public key (its PEM text) as the HMAC secret. */
export function hs256WithPublicKey(publicPem: string, payload: Record<string, unknown>): string {
  const signingInput = `${base64url({ typ: 'JWT', alg: 'HS256' })}.${base64url(payload)}`;
  return `${signingInput}.${createHmac('sha256', publicPem).update(signingInput).digest('base64url')}`;
}

/** An unsigned token (`alg: none`, empty signature). */
export function unsignedToken(payload: Record<string, unknown>): string {
  return `${base64url({ typ: 'JWT', alg: 'none' })}.${base64url(payload)}.`;
}

/** The token with its payload replaced and its original signature kept. */
export function withTamperedPayload(token: string, payload: Record<string, unknown>): string {
  const [header, , signature] = token.split('.');
  return `${header}.${base64url(payload)}.${signature}`;
}

/** The JSON of a token's header and payload. */
export function decodeToken(token: string): { header: Record<string, unknown>; payload: Record<string, unknown>; headerText: string; payloadText: string } {
  const [header, payload] = token.split('.') as [string, string];
  const headerText = Buffer.from(header, 'base64url').toString('utf8');
  const payloadText = Buffer.from(payload, 'base64url').toString('utf8');
  return { header: JSON.parse(headerText), payload: JSON.parse(payloadText), headerText, payloadText };
}

/** Besu's test fixture (§8.2): the bcrypt hash of the password `pegasys`. */
export const PEGASYS_HASH = '$2a$10$l3GA7K8g6rJ/Yv.YFSygCuI9byngpEzxgWS9qEg5emYDZomQW7fGC';

/** Besu's example credentials file (§8.2): two users, both with the password `pegasys`. */
export const EXAMPLE_CREDENTIALS = `[Users.admin]
password = "${PEGASYS_HASH}"
permissions = ["*:*"]

[Users.user]
password = "${PEGASYS_HASH}"
permissions = ["net:*", "eth:blockNumber", "web3:*"]
privacyPublicKey = "A1aVtMxLCUHmBVHXoZzzBgPbW/wj5axDpW9X8l91SGo="
`;
