// Besu's checks of the JSON-RPC authentication options (spec rpc-auth-cli.md §8.1–8.2), made when the node
// is asked to run: parameter errors with Besu's wording (exit 2), and the warning for an algorithm given
// without a public key file. The key file itself is read when the node starts (supervisor/authentication.ts).

import type { JwtAlgorithmName } from '../../shared/auth/jwt-algorithms.js';
import { checkCredentialsFile, CredentialsFileError, type CredentialsService } from '../../shared/auth/credentials.js';
import { isBesuMethodName } from '../../shared/rpc/besu-method-names.js';
import { CliUsageError } from './errors.js';
import type { NodeOptions, OptionKey } from './options.js';
import type { ReadFile } from './toml.js';

/** One service's authentication options, and how Besu's messages name them. */
export interface ServiceAuthenticationOptions {
  readonly service: CredentialsService;
  /** How the "Unable to authenticate" message names the endpoint. */
  readonly endpoint: string;
  readonly enabled: boolean;
  readonly credentialsFile: string | undefined;
  readonly publicKeyFile: string | undefined;
  readonly algorithm: JwtAlgorithmName;
  readonly algorithmGiven: boolean;
  readonly noAuthMethods: readonly string[];
  /** The names Besu's messages use for the no-auth and algorithm options. */
  readonly noAuthOptionName: string;
  readonly algorithmOptionName: string;
  readonly publicKeyOptionName: string;
}

function given(options: NodeOptions, key: OptionKey): boolean {
  return options.specified.has(key);
}

/** The HTTP service's authentication options. */
export function httpAuthenticationOptions(options: NodeOptions): ServiceAuthenticationOptions {
  return {
    service: 'HTTP',
    endpoint: 'JSON-RPC HTTP endpoint',
    enabled: options.rpcHttpAuthenticationEnabled,
    credentialsFile: options.rpcHttpAuthenticationCredentialsFile,
    publicKeyFile: options.rpcHttpAuthenticationJwtPublicKeyFile,
    algorithm: options.rpcHttpAuthenticationJwtAlgorithm,
    algorithmGiven: given(options, 'rpcHttpAuthenticationJwtAlgorithm'),
    noAuthMethods: options.rpcHttpApiMethodsNoAuth,
    noAuthOptionName: '--rpc-http-api-methods-no-auth',
    algorithmOptionName: '--rpc-http-authentication-jwt-algorithm',
    // Besu's warning names the option without its `-jwt` (a name it does not accept).
    publicKeyOptionName: '--rpc-http-authentication-public-key-file',
  };
}

/** The WebSocket service's authentication options. */
export function wsAuthenticationOptions(options: NodeOptions): ServiceAuthenticationOptions {
  return {
    service: 'WS',
    endpoint: 'JSON-RPC WebSocket endpoint',
    enabled: options.rpcWsAuthenticationEnabled,
    credentialsFile: options.rpcWsAuthenticationCredentialsFile,
    publicKeyFile: options.rpcWsAuthenticationJwtPublicKeyFile,
    algorithm: options.rpcWsAuthenticationJwtAlgorithm,
    algorithmGiven: given(options, 'rpcWsAuthenticationJwtAlgorithm'),
    noAuthMethods: options.rpcWsApiMethodsNoAuth,
    noAuthOptionName: '--rpc-ws-api-methods-no-auth',
    algorithmOptionName: '--rpc-ws-authentication-jwt-algorithm',
    publicKeyOptionName: '--rpc-ws-authentication-public-key-file',
  };
}

/** Every service's authentication options, in the order Besu checks them (HTTP, then WebSocket). */
export function authenticationOptionsOf(options: NodeOptions): ServiceAuthenticationOptions[] {
  return [httpAuthenticationOptions(options), wsAuthenticationOptions(options)];
}

/** Besu's parameter checks, in its order; throws CliUsageError. */
export function checkAuthenticationOptions(options: NodeOptions, readFile: ReadFile): void {
  for (const service of authenticationOptionsOf(options)) checkService(service, readFile);
}

function checkService(service: ServiceAuthenticationOptions, readFile: ReadFile): void {
  if (!service.noAuthMethods.every(isBesuMethodName)) {
    throw new CliUsageError(`Invalid value for option '${service.noAuthOptionName}', options must be valid RPC methods`);
  }
  if (!service.enabled) return;
  if (service.credentialsFile !== undefined) {
    try {
      checkCredentialsFile(service.credentialsFile, service.service, readFile);
    } catch (error) {
      if (error instanceof CredentialsFileError) throw new CliUsageError(error.message);
      throw error;
    }
  } else if (service.publicKeyFile === undefined) {
    throw new CliUsageError(
      `Unable to authenticate ${service.endpoint} without a supplied credentials file or authentication public key file`,
    );
  }
}

/** Start-up warnings: an algorithm given without a public key file is ignored (Besu's wording). */
export function authenticationWarnings(options: NodeOptions): string[] {
  return authenticationOptionsOf(options).flatMap((service) => {
    const warnings: string[] = [];
    if (service.enabled && service.algorithmGiven && service.publicKeyFile === undefined) {
      warnings.push(`${service.algorithmOptionName} has been ignored because ${service.publicKeyOptionName} was not defined on the command line.`);
    }
    if (service.enabled && service.credentialsFile !== undefined && service.publicKeyFile !== undefined) {
      warnings.push(
        `Both a credentials file and a public key file are set for the ${service.endpoint}: tokens are verified with the public key, ` +
          'and /login, which would have no key to sign with, answers 400 Authentication not enabled.',
      );
    }
    return warnings;
  });
}
