/**
 * The authentication of each JSON-RPC service, made once at start-up for all its transport threads
 * (spec rpc-auth-cli.md §8.1): in public-key mode the key file's first PEM block, checked against the
 * algorithm; in credentials mode a fresh RSA-2048 key pair, so tokens die with the process and a token of
 * one service is refused by the other.
 */
import { generateKeyPair as generateKeyPairCallback } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import type { AuthenticationConfig } from '../../shared/auth/authentication-config.js';
import { checkKeyForAlgorithm, loadVerificationKey, VerificationKeyError } from '../../shared/auth/verification-key.js';
import type { ServiceAuthenticationOptions } from '../cli/authentication-options.js';
import { StartupError } from './network.js';

const generateKeyPair = promisify(generateKeyPairCallback);

/** The service's authentication, or undefined when it is off; throws StartupError for an unusable key file. */
export async function prepareAuthentication(options: ServiceAuthenticationOptions): Promise<AuthenticationConfig | undefined> {
  if (!options.enabled) return undefined;
  const noAuthMethods = [...options.noAuthMethods];
  if (options.publicKeyFile !== undefined) {
    try {
      return { noAuthMethods, verificationKey: loadVerificationKey(options.publicKeyFile, options.algorithm, (path) => readFileSync(path, 'utf8')) };
    } catch (error) {
      if (error instanceof VerificationKeyError) throw new StartupError(error.message);
      throw error;
    }
  }
  // Validated at parse time: with neither file the options were refused.
  const credentialsFile = options.credentialsFile!;
  const { publicKey, privateKey } = await generateKeyPair('rsa', { modulusLength: 2048 });
  return {
    noAuthMethods,
    verificationKey: checkKeyForAlgorithm(publicKey, 'RS256'),
    login: { credentialsFile, signingKey: new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' })) },
  };
}

/** One line for the start-up log: the mode, the algorithm and the no-auth methods. */
export function describeAuthentication(config: AuthenticationConfig): string {
  const key = config.verificationKey;
  const mode = config.login === undefined
    ? `tokens verified with the ${key.algorithm} public key${key.curve === undefined ? '' : ` (${key.curve})`}`
    : `credentials file ${config.login.credentialsFile}, tokens signed by /login with a key generated at start (RS256)`;
  const open = config.noAuthMethods.length === 0 ? 'no method without a token' : `without a token: ${config.noAuthMethods.join(', ')}`;
  return `${mode}; ${open}`;
}
