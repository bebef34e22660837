/**
 * The JWT signature algorithms of `--rpc-http-authentication-jwt-algorithm` and its WebSocket twin
 * (spec rpc-auth-cli.md §8.1).
 * Besu's option parser also takes HS256; Basalt accepts the word and refuses it at start-up with a public
 * key file, since an HMAC secret cannot be a public key (the classic key-confusion attack).
 */
export const JWT_ALGORITHM_NAMES = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'HS256'] as const;

export type JwtAlgorithmName = (typeof JWT_ALGORITHM_NAMES)[number];

/** The algorithms a public key can verify. */
export type PublicKeyAlgorithm = Exclude<JwtAlgorithmName, 'HS256'>;

/** The named curves of EC keys (Node's names) that each ES algorithm verifies with. */
export const EC_CURVES_OF: Readonly<Record<'ES256' | 'ES384' | 'ES512', readonly EcCurve[]>> = {
  // secp256k1 with ES256 is Besu's (Vert.x) reading; RFC 8812 names that pairing ES256K.
  ES256: ['prime256v1', 'secp256k1'],
  ES384: ['secp384r1'],
  ES512: ['secp521r1'],
};

export type EcCurve = 'prime256v1' | 'secp256k1' | 'secp384r1' | 'secp521r1';

/** RSA moduli below this are refused (RFC 7518 §3.3). */
export const MIN_RSA_MODULUS_BITS = 2048;

/** Lifetime of the tokens `/login` issues (§8.5). */
export const ISSUED_TOKEN_LIFETIME_SECONDS = 300;
