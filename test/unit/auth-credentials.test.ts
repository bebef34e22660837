// The credentials file (start-up checks with Besu's messages, lookup at login), the password check of the
// login pool, bcrypt hashes, and the /login answers.
import test from 'ava';
import {
  checkCredentialsFile,
  CREDENTIALS_MESSAGES,
  CredentialsFileError,
  findUser,
  validateCredentials,
} from '../../src/shared/auth/credentials.js';
import { hashPassword, isBcryptHash, passwordMatches } from '../../src/shared/auth/password-hash.js';
import { checkLogin } from '../../src/tasks/credentials-login.js';
import {
  answerLogin,
  LOGIN_BAD_REQUEST,
  LOGIN_BUSY,
  LOGIN_MALFORMED,
  LOGIN_REFUSED,
  type LoginCheck,
} from '../../src/transport/auth/login.js';
import { EXAMPLE_CREDENTIALS, PEGASYS_HASH } from '../helpers/jwt.js';

/** Besu's example, with the `groups` array Besu reads but does not use. */
const BESU_EXAMPLE = `${EXAMPLE_CREDENTIALS}groups = ["readers"]\n`;

function refusal(t: import('ava').ExecutionContext, text: string, message: string): void {
  const error = t.throws(() => validateCredentials(text), { instanceOf: CredentialsFileError });
  t.is(error?.message, message, text);
}

test("Besu's example file is valid", (t) => {
  t.notThrows(() => validateCredentials(BESU_EXAMPLE));
  t.notThrows(() => validateCredentials('[Users]\n'), 'no users at all');
});

test('start-up refusals with Besu\'s messages', (t) => {
  refusal(t, '[Users.admin\npassword = "x"', CREDENTIALS_MESSAGES.malformed);
  refusal(t, '[Users.admin]\npermissions = ["*:*"]', CREDENTIALS_MESSAGES.userWithoutPassword);
  refusal(t, '[Users.admin]\npassword = ""\npermissions = ["*:*"]', CREDENTIALS_MESSAGES.userWithoutPassword);
  refusal(t, '[Users.admin]\npassword = 5\npermissions = ["*:*"]', CREDENTIALS_MESSAGES.userWithoutPassword);
  refusal(t, '[Users]\nadmin = "x"', CREDENTIALS_MESSAGES.userWithoutPassword);
  refusal(t, `[Users.admin]\npassword = "${PEGASYS_HASH}"\npermissions = []`, CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, `[Users.admin]\npassword = "${PEGASYS_HASH}"\npermissions = "*:*"`, CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, `[Users.admin]\npassword = "${PEGASYS_HASH}"\npermissions = [1]`, CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, `[Users.admin]\npassword = "${PEGASYS_HASH}"\nprivacyPublicKey = ""`, CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, `[Users.admin]\npassword = "${PEGASYS_HASH}"\nroles = []`, CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, `top = 1\n[Users.admin]\npassword = "${PEGASYS_HASH}"`, CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, 'title = ["a"]', CREDENTIALS_MESSAGES.invalidValues);
  refusal(t, '', CREDENTIALS_MESSAGES.invalidValues);
  t.is(CREDENTIALS_MESSAGES.notFound('HTTP', '/x.toml'), "The specified RPC HTTP authentication credential file '/x.toml' does not exist");
});

test('checkCredentialsFile: a missing file, an unreadable one', (t) => {
  const missing = t.throws(
    () =>
      checkCredentialsFile('/nope.toml', 'HTTP', () => {
        throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      }),
    { instanceOf: CredentialsFileError },
  );
  t.is(missing?.message, "The specified RPC HTTP authentication credential file '/nope.toml' does not exist");
  const unreadable = t.throws(
    () =>
      checkCredentialsFile('/dir', 'WS', () => {
        throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
      }),
    { instanceOf: CredentialsFileError },
  );
  t.is(unreadable?.message, CREDENTIALS_MESSAGES.unreadable);
});

test('findUser: exact key under Users, no dotted paths, no prototype names', (t) => {
  t.deepEqual(findUser(BESU_EXAMPLE, 'user'), {
    username: 'user',
    passwordHash: PEGASYS_HASH,
    permissions: ['net:*', 'eth:blockNumber', 'web3:*'],
    privacyPublicKey: 'A1aVtMxLCUHmBVHXoZzzBgPbW/wj5axDpW9X8l91SGo=',
  });
  t.deepEqual(findUser(BESU_EXAMPLE, 'admin')?.permissions, ['*:*']);
  const nested = `[Users.a]\npassword = "${PEGASYS_HASH}"\n[Users.a.b]\npassword = "${PEGASYS_HASH}"\npermissions = ["*:*"]`;
  t.is(findUser(nested, 'a.b'), undefined);
  for (const name of ['nobody', '__proto__', 'constructor', 'toString', '']) t.is(findUser(BESU_EXAMPLE, name), undefined, name);
  t.throws(() => findUser('[Users', 'admin'), { instanceOf: CredentialsFileError });
});

test('bcrypt: $2a$10$ hashes of 60 characters; $2a/$2b/$2y accepted, other forms refused', (t) => {
  const hash = hashPassword('correct horse');
  t.regex(hash, /^\$2a\$10\$[./A-Za-z0-9]{53}$/);
  t.true(passwordMatches('correct horse', hash));
  t.false(passwordMatches('correct horsf', hash));
  t.true(passwordMatches('pegasys', PEGASYS_HASH));
  t.true(passwordMatches('pegasys', PEGASYS_HASH.replace('$2a$', '$2b$')));
  t.true(passwordMatches('pegasys', PEGASYS_HASH.replace('$2a$', '$2y$')));
  t.false(passwordMatches('pegasys', PEGASYS_HASH.replace('$2a$', '$2x$')));
  t.false(passwordMatches('pegasys', PEGASYS_HASH.replace('$2a$', '$2$')));
  t.false(passwordMatches('pegasys', 'pegasys'));
  t.false(isBcryptHash(`${PEGASYS_HASH}x`));
});

test('checkLogin: accepted, unknown user, wrong password, no usable hash, unreadable text', (t) => {
  t.deepEqual(checkLogin(BESU_EXAMPLE, 'user', 'pegasys'), {
    accepted: {
      username: 'user',
      permissions: ['net:*', 'eth:blockNumber', 'web3:*'],
      privacyPublicKey: 'A1aVtMxLCUHmBVHXoZzzBgPbW/wj5axDpW9X8l91SGo=',
    },
  });
  t.deepEqual(checkLogin(BESU_EXAMPLE, 'nobody', 'pegasys'), { refused: 'unknown user' });
  t.deepEqual(checkLogin(BESU_EXAMPLE, 'admin', 'Pegasys'), { refused: 'wrong password' });
  t.deepEqual(checkLogin('[Users.x]\npassword = "plain"', 'x', 'plain'), { refused: 'no password set' });
  t.deepEqual(checkLogin('[Users.x]\npermissions = ["*:*"]', 'x', ''), { refused: 'no password set' });
  t.deepEqual(checkLogin('[Users', 'x', 'y'), { refused: 'credentials file unreadable' });
});

// ---------------------------------------------------------------------------------------------
// POST /login answers
// ---------------------------------------------------------------------------------------------

const SUBJECT = { username: 'user', permissions: ['net:*'] };

function checkThat(result: Awaited<ReturnType<LoginCheck>>, seen: [string, string][] = []): LoginCheck {
  return async (username, password) => {
    seen.push([username, password]);
    return result;
  };
}

const issue = async () => 'header.payload.signature';

test('/login: 400 for missing or null credentials and empty or null bodies', async (t) => {
  const check = checkThat({ accepted: SUBJECT });
  for (const body of ['', '  ', 'null', '{}', '{"username":"u"}', '{"password":"p"}', '{"username":null,"password":"p"}']) {
    t.deepEqual(await answerLogin(body, check, issue), LOGIN_BAD_REQUEST, body);
  }
  t.is(LOGIN_BAD_REQUEST.body, 'Authentication failed: username and password are required.');
});

test('/login: 500 for a body that is not a JSON object', async (t) => {
  for (const body of ['{', '[]', '5', '"user"']) t.deepEqual(await answerLogin(body, checkThat({ accepted: SUBJECT }), issue), LOGIN_MALFORMED, body);
});

test('/login: 401 for every refusal, 503 when the pool is full, 200 with the token', async (t) => {
  for (const refused of ['unknown user', 'wrong password', 'no password set', 'credentials file unreadable'] as const) {
    t.deepEqual(await answerLogin('{"username":"u","password":"p"}', checkThat({ refused }), issue), LOGIN_REFUSED);
  }
  t.is(LOGIN_REFUSED.body, 'Authentication failed: the username or password is incorrect.');
  t.deepEqual(await answerLogin('{"username":"u","password":"p"}', checkThat('busy'), issue), LOGIN_BUSY);
  const seen: [string, string][] = [];
  const ok = await answerLogin('{"username":"u","password":1234,"extra":true}', checkThat({ accepted: SUBJECT }, seen), issue);
  t.deepEqual(ok, { status: 200, reason: 'OK', contentType: 'application/json', body: '{"token":"header.payload.signature"}' });
  t.deepEqual(seen, [['u', '1234']], 'Vert.x getString turns a number into its text');
});
