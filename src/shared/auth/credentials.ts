/**
 * The credentials file of `--rpc-http-authentication-credentials-file` (and its WebSocket twin; spec
 * rpc-auth-cli.md §8.2): one TOML table per user, `[Users.<name>]`, with a bcrypt `password`,
 * `permissions` and an optional `privacyPublicKey`. Checked once at start-up with Besu's messages (main
 * thread), and read again on every login (login pool), so that edits take effect without a restart.
 */
import TOML from '@ltd/j-toml';

/** Which service names the file in the "does not exist" message (Besu writes `HTTP` or `WS`). */
export type CredentialsService = 'HTTP' | 'WS';

/** A refusal of the file, with Besu's wording. */
export class CredentialsFileError extends Error {}

export const CREDENTIALS_MESSAGES = {
  notFound: (service: CredentialsService, path: string) => `The specified RPC ${service} authentication credential file '${path}' does not exist`,
  unreadable: 'An error occurred while opening the specified RPC authentication configuration file.',
  malformed: 'An error occurred while parsing the specified RPC authentication configuration file.',
  userWithoutPassword: 'RPC user specified without password.',
  invalidValues: 'RPC authentication configuration file contains invalid values.',
} as const;

/** Who logged in: what the token `/login` issues says about them. */
export interface LoginSubject {
  readonly username: string;
  readonly permissions: readonly string[];
  readonly privacyPublicKey?: string;
}

/** What a login needs of one user. */
export interface CredentialsUser extends LoginSubject {
  /** bcrypt hash; empty when the file sets none (such a user cannot log in). */
  readonly passwordHash: string;
}

type Table = Readonly<Record<string, unknown>>;

function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !isTomlDateTime(value);
}

const DATE_TIME_CLASSES = [TOML.OffsetDateTime, TOML.LocalDateTime, TOML.LocalDate, TOML.LocalTime];

function isTomlDateTime(value: object): boolean {
  return DATE_TIME_CLASSES.some((dateTimeClass) => value instanceof dateTimeClass);
}

function parseToml(text: string): Table {
  try {
    return TOML.parse(text, { joiner: '\n', bigint: true });
  } catch {
    throw new CredentialsFileError(CREDENTIALS_MESSAGES.malformed);
  }
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * Besu's rule for every entry other than `password`: a non-empty array, or for `privacyPublicKey` a
 * non-empty string (so `permissions = []` is refused). Basalt also wants the permissions to be strings,
 * since a permission is matched as text.
 */
function validEntry(key: string, value: unknown): boolean {
  if (key === 'privacyPublicKey') return isNonEmptyString(value);
  if (!Array.isArray(value) || value.length === 0) return false;
  return key !== 'permissions' || value.every((permission) => typeof permission === 'string');
}

/** Every leaf of the document (tables walked into), with its own key. */
function leaves(table: Table): { key: string; value: unknown }[] {
  return Object.entries(table).flatMap(([key, value]) => (isTable(value) ? leaves(value) : [{ key, value }]));
}

/**
 * Checks the text of a credentials file as Besu does at start-up; throws CredentialsFileError with its
 * message. Besu fails with a NullPointerException on a file without a `Users` table; Basalt refuses it
 * as invalid values. Besu skips the check of any key whose dotted path merely contains `password` (a
 * user named `passwordless`, say); Basalt checks every key but `password` itself.
 */
export function validateCredentials(text: string): void {
  const document = parseToml(text);
  const users = document.Users;
  if (!isTable(users)) throw new CredentialsFileError(CREDENTIALS_MESSAGES.invalidValues);
  for (const user of Object.values(users)) {
    if (!isTable(user) || !isNonEmptyString(user.password)) throw new CredentialsFileError(CREDENTIALS_MESSAGES.userWithoutPassword);
  }
  for (const { key, value } of leaves(document)) {
    if (key !== 'password' && !validEntry(key, value)) throw new CredentialsFileError(CREDENTIALS_MESSAGES.invalidValues);
  }
}

function hasErrorCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && codes.includes(String(error.code));
}

/** Reads and checks the file named by the option; throws CredentialsFileError with Besu's messages. */
export function checkCredentialsFile(path: string, service: CredentialsService, readFile: (path: string) => string): void {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) throw new CredentialsFileError(CREDENTIALS_MESSAGES.notFound(service, path));
    throw new CredentialsFileError(CREDENTIALS_MESSAGES.unreadable);
  }
  validateCredentials(text);
}

/**
 * The user `username` of a credentials file's text, or undefined when the file has none. The name is
 * looked up as one key under `Users` (Besu builds a dotted path from it, so `admin.x` would reach into a
 * nested table). Throws CredentialsFileError when the text no longer parses.
 */
export function findUser(text: string, username: string): CredentialsUser | undefined {
  const users = parseToml(text).Users;
  if (!isTable(users) || !Object.hasOwn(users, username)) return undefined;
  const user = users[username];
  if (!isTable(user)) return undefined;
  const permissions = Array.isArray(user.permissions) ? user.permissions.filter((entry): entry is string => typeof entry === 'string') : [];
  return {
    username,
    passwordHash: typeof user.password === 'string' ? user.password : '',
    permissions,
    ...(typeof user.privacyPublicKey === 'string' ? { privacyPublicKey: user.privacyPublicKey } : {}),
  };
}
