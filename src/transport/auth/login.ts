/**
 * `POST /login` (spec rpc-auth-cli.md §8.4), as a pure function of the request body: the password check
 * and the token signing are passed in (the login pool and the service's issuer), so every answer is
 * tested without sockets.
 */
import type { LoginCheckResult } from '../../tasks/credentials-login.js';
import type { TokenIssuer } from './token-issuer.js';
import type { Logger } from '../../shared/util/log.js';
import type { HttpAnswer, HttpHeaders } from '../http-policy.js';

export interface LoginAnswer {
  readonly status: number;
  /** Reason phrase of the status line. */
  readonly reason: string;
  /** Content-Type of the body, when it has one Besu names. */
  readonly contentType?: string;
  readonly body: string;
}

/** Checks a username and password; `busy` when the login pool cannot take more work now. */
export type LoginCheck = (username: string, password: string) => Promise<LoginCheckResult | 'busy'>;

export const LOGIN_BAD_REQUEST: LoginAnswer = {
  status: 400,
  reason: 'Bad Request',
  body: 'Authentication failed: username and password are required.',
};
export const LOGIN_REFUSED: LoginAnswer = {
  status: 401,
  reason: 'Unauthorized',
  body: 'Authentication failed: the username or password is incorrect.',
};
/** Besu's answer with authentication off, or without credentials to check (public-key mode). */
export const LOGIN_NOT_ENABLED: LoginAnswer = { status: 400, reason: 'Authentication not enabled', body: '' };
/** A body that is not JSON, or JSON but not an object: Besu's handler throws, Vert.x answers 500. */
export const LOGIN_MALFORMED: LoginAnswer = { status: 500, reason: 'Internal Server Error', body: '' };
/**
 * More logins waiting than the login pool queues (Basalt's bound; Besu queues without one): refused at
 * once rather than held open.
 */
export const LOGIN_BUSY: LoginAnswer = {
  status: 503,
  reason: 'Service Unavailable',
  body: 'Authentication failed: too many logins in progress, try again later.',
};

/**
 * Vert.x reads the members with `JsonObject.getString`, which turns any other JSON value into its text
 * (`1234` → "1234"); absent and null are missing.
 */
function credentialText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export async function answerLogin(body: string, check: LoginCheck, issue: TokenIssuer): Promise<LoginAnswer> {
  if (body.trim() === '') return LOGIN_BAD_REQUEST;
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch {
    return LOGIN_MALFORMED;
  }
  if (request === null) return LOGIN_BAD_REQUEST;
  if (typeof request !== 'object' || Array.isArray(request)) return LOGIN_MALFORMED;
  const username = credentialText((request as Record<string, unknown>).username);
  const password = credentialText((request as Record<string, unknown>).password);
  if (username === undefined || password === undefined) return LOGIN_BAD_REQUEST;

  const result = await check(username, password);
  if (result === 'busy') return LOGIN_BUSY;
  if ('refused' in result) return LOGIN_REFUSED;
  const token = await issue(result.accepted);
  return { status: 200, reason: 'OK', contentType: 'application/json', body: JSON.stringify({ token }) };
}

const LOGIN_FAILED_ANSWER: HttpAnswer = { kind: 'answer', status: 500, reason: 'Internal Server Error', headers: [], body: '', closeConnection: false };

/**
 * `POST /login` as an HTTP answer for a transport to write: the service's login (`undefined`: not
 * enabled) given the body, or 500, logged, should the login itself fail. `headers` (CORS) come first.
 */
export async function loginHttpAnswer(login: ((body: string) => Promise<LoginAnswer>) | undefined, body: string, log: Logger, headers: HttpHeaders = []): Promise<HttpAnswer> {
  let answer: LoginAnswer;
  try {
    answer = login === undefined ? LOGIN_NOT_ENABLED : await login(body);
  } catch (err) {
    log.error('Login failed', err);
    return LOGIN_FAILED_ANSWER;
  }
  return {
    kind: 'answer',
    status: answer.status,
    reason: answer.reason,
    headers: answer.contentType === undefined ? headers : [...headers, ['content-type', answer.contentType]],
    body: answer.body,
    closeConnection: false,
  };
}
