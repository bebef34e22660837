/**
 * The tokens `/login` issues in credentials mode (spec rpc-auth-cli.md §8.5): RS256 with the service's
 * generated key, header `{"typ":"JWT","alg":"RS256"}`, claims in Besu's order `permissions`, `username`,
 * `privacyPublicKey` (only when the user has one), `iat`, `exp` = `iat` + 5 minutes. The password is never
 * in it. Signing goes through WebCrypto, off the transport thread.
 */
import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import type { LoginSubject } from '../../shared/auth/credentials.js';
import { ISSUED_TOKEN_LIFETIME_SECONDS } from '../../shared/auth/jwt-algorithms.js';

export type TokenIssuer = (subject: LoginSubject) => Promise<string>;

export function createTokenIssuer(signingKeyPkcs8: Uint8Array, clock: () => number = Date.now): TokenIssuer {
  const key = createPrivateKey({ key: Buffer.from(signingKeyPkcs8), format: 'der', type: 'pkcs8' });
  return (subject) => {
    const issuedAt = Math.floor(clock() / 1000);
    const claims = {
      permissions: [...subject.permissions],
      username: subject.username,
      ...(subject.privacyPublicKey === undefined ? {} : { privacyPublicKey: subject.privacyPublicKey }),
    };
    return new SignJWT(claims)
      .setProtectedHeader({ typ: 'JWT', alg: 'RS256' })
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ISSUED_TOKEN_LIFETIME_SECONDS)
      .sign(key);
  };
}
