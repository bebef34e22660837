/**
 * Piscina task of the login pool: reads the credentials file as it is now (edits take effect without a
 * restart) and checks one login's password (src/tasks/credentials-login.ts). bcrypt is tens of
 * milliseconds of CPU per login; the thread lowers its own scheduling priority so that a storm of logins
 * takes the CPU JSON-RPC leaves idle rather than the CPU JSON-RPC needs.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../../src/shared/util/hex-builtins.js';
import { readFile } from 'node:fs/promises';
import { nameThisThread } from '../../src/shared/util/thread-name.js';
import { setThreadNiceness } from '../../src/shared/util/thread-priority.js';
import { checkLogin, type LoginCheckResult } from '../../src/tasks/credentials-login.js';

nameThisThread('login');

/**
 * Linux niceness of this thread (0 normal, 19 lowest). At 10 a busy login thread gets about a tenth of a
 * core that JSON-RPC threads also want, and all of a core they leave idle.
 */
const LOGIN_THREAD_NICENESS = 10;
// Where it cannot be set (off Linux), the pool still keeps bcrypt off the transport threads.
setThreadNiceness(LOGIN_THREAD_NICENESS);

export interface CredentialsLoginInput {
  credentialsFile: string;
  username: string;
  password: string;
}

export default async function credentialsLogin({ credentialsFile, username, password }: CredentialsLoginInput): Promise<LoginCheckResult> {
  let text: string;
  try {
    text = await readFile(credentialsFile, 'utf8');
  } catch {
    return { refused: 'credentials file unreadable' };
  }
  return checkLogin(text, username, password);
}
