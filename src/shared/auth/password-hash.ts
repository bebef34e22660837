/**
 * bcrypt as Besu uses it (spec rpc-auth-cli.md §8.2–8.3): `basalt password hash` writes `$2a$10$` hashes,
 * logins accept `$2a$`, `$2b$` and `$2y$` (the three compute the same for passwords under 255 bytes).
 * Synchronous and slow by design (tens of milliseconds at cost 10): only the CLI command and the login
 * pool's threads call it, never a transport or actor thread.
 */
import bcrypt from 'bcryptjs';

/** Besu's cost (jBCrypt's default). */
export const BCRYPT_COST = 10;

const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

export function isBcryptHash(text: string): boolean {
  return BCRYPT_HASH.test(text);
}

/** A new `$2a$10$` hash of `password` with a random salt. */
export function hashPassword(password: string): string {
  // bcryptjs writes `$2b$`; the `$2a$` revision computes the same hash and is what Besu prints.
  const salt = bcrypt.genSaltSync(BCRYPT_COST).replace(/^\$2b\$/, '$2a$');
  return bcrypt.hashSync(password, salt);
}

/** Whether `password` matches `hash`; false for anything that is not a well-formed bcrypt hash. */
export function passwordMatches(password: string, hash: string): boolean {
  return isBcryptHash(hash) && bcrypt.compareSync(password, hash);
}
