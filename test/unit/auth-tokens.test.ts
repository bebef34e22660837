// Token verification and issuing, and the key checks made at start-up: every algorithm with keys generated
// here, and the attacks a verifier must refuse.
import test from 'ava';
import { createPublicKey } from 'node:crypto';
import {
  checkKeyForAlgorithm,
  firstPemBlock,
  KEY_MESSAGES,
  loadVerificationKey,
  VerificationKeyError,
  type VerificationKey,
} from '../../src/shared/auth/verification-key.js';
import type { JwtAlgorithmName } from '../../src/shared/auth/jwt-algorithms.js';
import { checkClaims, createTokenVerifier } from '../../src/transport/auth/token-verifier.js';
import { createTokenIssuer } from '../../src/transport/auth/token-issuer.js';
import {
  decodeToken,
  generateTestKey,
  hs256WithPublicKey,
  nowSeconds,
  signToken,
  unsignedToken,
  validClaims,
  withTamperedPayload,
  type KeySpec,
  type TestAlgorithm,
} from '../helpers/jwt.js';

function keyFor(pem: string, algorithm: JwtAlgorithmName): VerificationKey {
  return loadVerificationKey('/keys/key.pem', algorithm, () => pem);
}

// ---------------------------------------------------------------------------------------------
// Every algorithm verifies its own tokens
// ---------------------------------------------------------------------------------------------

const POSITIVE: { name: string; key: KeySpec; configured: JwtAlgorithmName; signedAs: TestAlgorithm }[] = [
  { name: 'RS256', key: { rsa: 2048 }, configured: 'RS256', signedAs: 'RS256' },
  { name: 'RS384', key: { rsa: 2048 }, configured: 'RS384', signedAs: 'RS384' },
  { name: 'RS512', key: { rsa: 3072 }, configured: 'RS512', signedAs: 'RS512' },
  { name: 'ES256 on secp256r1', key: { ec: 'prime256v1' }, configured: 'ES256', signedAs: 'ES256' },
  { name: 'ES256 on secp256k1 (alg ES256)', key: { ec: 'secp256k1' }, configured: 'ES256', signedAs: 'ES256' },
  { name: 'ES256 on secp256k1 (alg ES256K)', key: { ec: 'secp256k1' }, configured: 'ES256', signedAs: 'ES256K' },
  { name: 'ES384', key: { ec: 'secp384r1' }, configured: 'ES384', signedAs: 'ES384' },
  { name: 'ES512', key: { ec: 'secp521r1' }, configured: 'ES512', signedAs: 'ES512' },
];

for (const { name, key, configured, signedAs } of POSITIVE) {
  test(`${name}: a valid token verifies, with its permissions and exp`, async (t) => {
    const pair = generateTestKey(key);
    const verifier = createTokenVerifier(keyFor(pair.publicPem, configured));
    const claims = validClaims(['eth:*', 'net:version', 7 as unknown as string]);
    const verified = await verifier.verify(signToken(pair.privateKey, signedAs, claims));
    t.deepEqual(verified, { permissions: ['eth:*', 'net:version'], exp: claims.exp as number, username: 'tester' });
  });
}

// ---------------------------------------------------------------------------------------------
// Attacks
// ---------------------------------------------------------------------------------------------

const rsa = generateTestKey({ rsa: 2048 });
const rsaVerifier = createTokenVerifier(keyFor(rsa.publicPem, 'RS256'));

test('alg none is refused', async (t) => {
  t.is(await rsaVerifier.verify(unsignedToken(validClaims())), undefined);
  // Even with a signature segment taken from a valid token.
  const valid = signToken(rsa.privateKey, 'RS256', validClaims());
  t.is(await rsaVerifier.verify(`${unsignedToken(validClaims()).slice(0, -1)}${valid.split('.')[2]}`), undefined);
});

test('alg HS256 keyed with the public key is refused', async (t) => {
  t.is(await rsaVerifier.verify(hs256WithPublicKey(rsa.publicPem, validClaims())), undefined);
  const ec = generateTestKey({ ec: 'prime256v1' });
  t.is(await createTokenVerifier(keyFor(ec.publicPem, 'ES256')).verify(hs256WithPublicKey(ec.publicPem, validClaims())), undefined);
});

test('a token signed by another key is refused', async (t) => {
  const other = generateTestKey({ rsa: 2048 });
  t.is(await rsaVerifier.verify(signToken(other.privateKey, 'RS256', validClaims())), undefined);
  const k1 = generateTestKey({ ec: 'secp256k1' });
  const otherK1 = generateTestKey({ ec: 'secp256k1' });
  t.is(await createTokenVerifier(keyFor(k1.publicPem, 'ES256')).verify(signToken(otherK1.privateKey, 'ES256K', validClaims())), undefined);
});

test('a tampered payload under the original signature is refused', async (t) => {
  const token = signToken(rsa.privateKey, 'RS256', validClaims(['net:version']));
  t.truthy(await rsaVerifier.verify(token));
  t.is(await rsaVerifier.verify(withTamperedPayload(token, validClaims(['*:*']))), undefined);
  const k1 = generateTestKey({ ec: 'secp256k1' });
  const k1Verifier = createTokenVerifier(keyFor(k1.publicPem, 'ES256'));
  const k1Token = signToken(k1.privateKey, 'ES256K', validClaims(['net:version']));
  t.truthy(await k1Verifier.verify(k1Token));
  t.is(await k1Verifier.verify(withTamperedPayload(k1Token, validClaims(['*:*']))), undefined);
});

test('the alg must be the configured one: RS384 and RS512 tokens fail an RS256 key, ES256K fails a P-256 key', async (t) => {
  t.is(await rsaVerifier.verify(signToken(rsa.privateKey, 'RS384', validClaims())), undefined);
  t.is(await rsaVerifier.verify(signToken(rsa.privateKey, 'RS512', validClaims())), undefined);
  const p256 = generateTestKey({ ec: 'prime256v1' });
  const p256Verifier = createTokenVerifier(keyFor(p256.publicPem, 'ES256'));
  t.is(await p256Verifier.verify(signToken(p256.privateKey, 'ES256K', validClaims(), { alg: 'ES256K' })), undefined);
});

test('an ES256 token is refused by a key of another curve', async (t) => {
  const p256 = generateTestKey({ ec: 'prime256v1' });
  const k1 = generateTestKey({ ec: 'secp256k1' });
  // A secp256k1 verifier, a token signed on P-256 (and the reverse), both labelled ES256.
  t.is(await createTokenVerifier(keyFor(k1.publicPem, 'ES256')).verify(signToken(p256.privateKey, 'ES256', validClaims())), undefined);
  t.is(await createTokenVerifier(keyFor(p256.publicPem, 'ES256')).verify(signToken(k1.privateKey, 'ES256', validClaims())), undefined);
  // A P-384 verifier and a P-256 token labelled ES384.
  const p384 = generateTestKey({ ec: 'secp384r1' });
  t.is(await createTokenVerifier(keyFor(p384.publicPem, 'ES384')).verify(signToken(p256.privateKey, 'ES256', validClaims(), { alg: 'ES384' })), undefined);
});

test('expired, exp missing or not a number, nbf or iat in the future: refused', async (t) => {
  const now = nowSeconds();
  const sign = (claims: Record<string, unknown>) => rsaVerifier.verify(signToken(rsa.privateKey, 'RS256', claims));
  t.is(await sign({ permissions: ['*:*'], iat: now - 600, exp: now - 300 }), undefined);
  t.is(await sign({ permissions: ['*:*'], iat: now - 600, exp: now }), undefined, 'exp = now has passed (Vert.x: now >= exp)');
  t.is(await sign({ permissions: ['*:*'], iat: now }), undefined);
  t.is(await sign({ permissions: ['*:*'], exp: String(now + 300) }), undefined);
  t.is(await sign(validClaims(['*:*'], { nbf: now + 60 })), undefined);
  t.is(await sign(validClaims(['*:*'], { iat: now + 60 })), undefined);
  t.truthy(await sign(validClaims(['*:*'], { nbf: now })), 'nbf = now is valid');
});

test('malformed tokens and a crit header are refused without throwing', async (t) => {
  for (const token of ['', 'a.b', 'a.b.c.d', '!!.??.**', `${Buffer.from('[]').toString('base64url')}.e30.`, 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.AAAA']) {
    t.is(await rsaVerifier.verify(token), undefined, token);
  }
  t.is(await rsaVerifier.verify(signToken(rsa.privateKey, 'RS256', validClaims(), { alg: 'RS256', crit: ['exp'], exp: 1 })), undefined);
  // A signature over a payload that is JSON but not an object.
  t.is(await rsaVerifier.verify(signToken(rsa.privateKey, 'RS256', [1, 2] as unknown as Record<string, unknown>)), undefined);
});

test('checkClaims: Vert.x rules, leeway 0', (t) => {
  t.deepEqual(checkClaims({ exp: 101 }, 100), { permissions: [], exp: 101 });
  t.is(checkClaims({ exp: 100 }, 100), undefined);
  t.is(checkClaims({ exp: 101, nbf: 'x' }, 100), undefined);
  t.is(checkClaims({ exp: 101, iat: 101 }, 100), undefined);
  t.deepEqual(checkClaims({ exp: 101, iat: 100, nbf: 100, permissions: '*:*' }, 100), { permissions: [], exp: 101 });
});

// ---------------------------------------------------------------------------------------------
// Issued tokens (credentials mode)
// ---------------------------------------------------------------------------------------------

test('issued tokens: Besu header and claim order, 5-minute exp, verified by the service key', async (t) => {
  const pair = generateTestKey({ rsa: 2048 });
  const issue = createTokenIssuer(new Uint8Array(pair.privateKey.export({ format: 'der', type: 'pkcs8' })));
  const token = await issue({ username: 'user', permissions: ['net:*'], privacyPublicKey: 'A1aV=' });
  const { headerText, payloadText, payload } = decodeToken(token);
  t.is(headerText, '{"typ":"JWT","alg":"RS256"}');
  t.deepEqual(Object.keys(payload), ['permissions', 'username', 'privacyPublicKey', 'iat', 'exp']);
  t.is(payload.exp, (payload.iat as number) + 300);
  t.false(payloadText.includes('password'));
  t.deepEqual(await createTokenVerifier(checkKeyForAlgorithm(pair.publicKey, 'RS256')).verify(token), {
    permissions: ['net:*'],
    exp: payload.exp as number,
    username: 'user',
  });
  const withoutKey = decodeToken(await issue({ username: 'admin', permissions: ['*:*'] }));
  t.deepEqual(Object.keys(withoutKey.payload), ['permissions', 'username', 'iat', 'exp']);
});

// ---------------------------------------------------------------------------------------------
// Start-up key checks
// ---------------------------------------------------------------------------------------------

function keyError(t: import('ava').ExecutionContext, run: () => unknown, message: string): void {
  const error = t.throws(run, { instanceOf: VerificationKeyError });
  t.is(error?.message, message);
}

test('an RSA key under 2048 bits is refused', (t) => {
  const short = generateTestKey({ rsa: 1024 });
  keyError(t, () => keyFor(short.publicPem, 'RS256'), KEY_MESSAGES.shortRsa(1024, 'RS256'));
  t.is(KEY_MESSAGES.shortRsa(1024, 'RS256'), 'Authentication RPC public key is a 1024-bit RSA key, but RS256 needs at least 2048 bits');
});

test('key type and curve must suit the algorithm', (t) => {
  const p256 = generateTestKey({ ec: 'prime256v1' });
  const p384 = generateTestKey({ ec: 'secp384r1' });
  keyError(t, () => keyFor(rsa.publicPem, 'ES256'), 'Authentication RPC public key is a RSA key, but ES256 needs an EC key');
  keyError(t, () => keyFor(p256.publicPem, 'RS256'), 'Authentication RPC public key is an EC key, but RS256 needs an RSA key');
  keyError(t, () => keyFor(p384.publicPem, 'ES256'), 'Authentication RPC public key is on curve secp384r1, but ES256 needs prime256v1 or secp256k1');
  keyError(t, () => keyFor(p256.publicPem, 'ES512'), 'Authentication RPC public key is on curve prime256v1, but ES512 needs secp521r1');
  keyError(t, () => keyFor(rsa.publicPem, 'HS256'), KEY_MESSAGES.hmac('HS256'));
  t.is(keyFor(p256.publicPem, 'ES256').curve, 'prime256v1');
});

test('the first PEM block is read; no block or no key is Besu\'s "format is invalid"', (t) => {
  const p256 = generateTestKey({ ec: 'prime256v1' });
  const key = keyFor(`comment line\n${rsa.publicPem}${p256.publicPem}`, 'RS256');
  t.deepEqual(Buffer.from(key.spki), rsa.publicKey.export({ format: 'der', type: 'spki' }));
  keyError(t, () => keyFor('no pem here', 'RS256'), 'Authentication RPC public key file format is invalid');
  keyError(t, () => keyFor('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n', 'RS256'), 'Authentication RPC public key file format is invalid');
  keyError(t, () => keyFor(rsa.publicPem.replace('END PUBLIC', 'END PRIVATE'), 'RS256'), 'Authentication RPC public key file format is invalid');
  keyError(
    t,
    () =>
      loadVerificationKey('/missing.pem', 'RS256', () => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      }),
    'Authentication RPC public key could not be read',
  );
  t.is(firstPemBlock('-----BEGIN X-----\nAAAAA\n-----END X-----'), undefined, 'base64 of a length not a multiple of 4');
  t.deepEqual(createPublicKey({ key: Buffer.from(key.spki), format: 'der', type: 'spki' }).asymmetricKeyType, 'rsa');
});
