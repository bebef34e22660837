/**
 * The password check of a `/login` (spec rpc-auth-cli.md §8.4), run in the login pool: find the user in
 * the credentials file's current text and compare the password with its bcrypt hash. An unknown user, a
 * user without a usable hash and a wrong password cost the same bcrypt comparison, so the time of a
 * refusal does not tell which names exist.
 */
import { randomBytes } from 'node:crypto';
import { findUser, type LoginSubject } from '../shared/auth/credentials.js';
import { hashPassword, isBcryptHash, passwordMatches } from '../shared/auth/password-hash.js';

export type LoginRefusal = 'unknown user' | 'no password set' | 'wrong password' | 'credentials file unreadable';

export type LoginCheckResult = { readonly accepted: LoginSubject } | { readonly refused: LoginRefusal };

let decoy: string | undefined;

/** A hash of a random password at Besu's cost: compared against when there is no real hash to compare. */
function decoyHash(): string {
  return (decoy ??= hashPassword(randomBytes(16).toString('hex')));
}

export function checkLogin(credentialsText: string, username: string, password: string): LoginCheckResult {
  let user;
  try {
    user = findUser(credentialsText, username);
  } catch {
    return { refused: 'credentials file unreadable' };
  }
  const usable = user !== undefined && isBcryptHash(user.passwordHash);
  const matches = passwordMatches(password, usable ? user!.passwordHash : decoyHash());
  if (user === undefined) return { refused: 'unknown user' };
  if (!usable) return { refused: 'no password set' };
  if (!matches) return { refused: 'wrong password' };
  const { passwordHash: _hash, ...subject } = user;
  return { accepted: subject };
}
