/**
 * Authentication of one JSON-RPC service on one transport thread, built from the configuration the
 * supervisor made at start-up: the token cache (Authenticator) and, in credentials mode, `/login` with
 * its login pool and token issuer.
 */
import type { AuthenticationConfig } from '../../shared/auth/authentication-config.js';
import { TaskPool } from '../../shared/util/task-pool.js';
import type { Logger } from '../../shared/util/log.js';
import type credentialsLogin from '../../../workers/tasks/credentials-login.task.js';
import { Authenticator } from './authenticator.js';
import { answerLogin, LOGIN_NOT_ENABLED, type LoginAnswer, type LoginCheck } from './login.js';
import { createTokenIssuer } from './token-issuer.js';
import { createTokenVerifier } from './token-verifier.js';

/**
 * Logins a transport thread lets wait for the login pool at once; more are answered 503. At tens of
 * milliseconds of bcrypt each, the last of them waits a few seconds.
 */
export const MAX_PENDING_LOGINS = 64;

export interface ServiceAuthentication {
  readonly authenticator: Authenticator;
  /** The answer to a `POST /login` with this body. */
  login(body: string): Promise<LoginAnswer>;
  close(): Promise<void>;
}

export function createServiceAuthentication(config: AuthenticationConfig, log: Logger): ServiceAuthentication {
  const authenticator = new Authenticator(createTokenVerifier(config.verificationKey), config.noAuthMethods);
  const loginConfig = config.login;
  if (loginConfig === undefined) {
    return { authenticator, login: async () => LOGIN_NOT_ENABLED, close: async () => undefined };
  }

  // One thread per transport thread, started by the first login and retired after a minute without one.
  let pool: TaskPool<typeof credentialsLogin> | undefined;
  let pending = 0;
  const check: LoginCheck = async (username, password) => {
    if (pending >= MAX_PENDING_LOGINS) return 'busy';
    pending++;
    try {
      pool ??= new TaskPool(new URL('../../../workers/tasks/credentials-login.task.js', import.meta.url), {
        minThreads: 0,
        maxThreads: 1,
        idleTimeout: 60_000,
      });
      const result = await pool.run({ credentialsFile: loginConfig.credentialsFile, username, password });
      if ('refused' in result) log.debug(`Login refused for user ${JSON.stringify(username)}: ${result.refused}`);
      if ('refused' in result && result.refused === 'credentials file unreadable') {
        log.warn(`The credentials file ${loginConfig.credentialsFile} cannot be read or parsed: every login is refused`);
      }
      return result;
    } finally {
      pending--;
    }
  };
  const issue = createTokenIssuer(loginConfig.signingKey);
  return {
    authenticator,
    login: (body) => answerLogin(body, check, issue),
    close: async () => {
      await pool?.destroy();
      pool = undefined;
    },
  };
}
