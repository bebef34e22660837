// Resolution of the node options (spec §11.1–11.3, §12.3): command line > environment (`BASALT_*`) > TOML
// config file > default, each value converted by its option's kind, then Besu's cross-option rules.
// Pure apart from reading the config file through the injected `readFile`.

import { readFileSync } from 'node:fs';
import { parseCommandLine, labelOf, unmatchedArgumentsError, type ParsedCommandLine } from './args.js';
import { authenticationWarnings, checkAuthenticationOptions } from './authentication-options.js';
import { CliUsageError } from './errors.js';
import { envVarName, OPTION_SPECS, type NodeOptions, type OptionKey, type OptionSpec } from './options.js';
import { readTomlConfig, type RawValue, type ReadFile } from './toml.js';

export type Environment = Readonly<Record<string, string | undefined>>;

export type Invocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly options: NodeOptions };

const readFileUtf8: ReadFile = (path) => readFileSync(path, 'utf8');

const CONFIG_FILE_SPEC = specFor('configFile');
const CONFIG_FILE_ENV = envVarName('--config-file');

function specFor(key: OptionKey): OptionSpec {
  const spec = OPTION_SPECS.find((candidate) => candidate.row.key === key);
  if (spec === undefined) throw new Error(`no option with key ${key}`);
  return spec;
}

function convertRaw(spec: OptionSpec, raw: RawValue): unknown {
  const kind = spec.row.kind;
  const label = labelOf(spec);
  if (kind.shape === 'list') {
    const entries = typeof raw === 'string' ? raw.split(kind.separator) : raw;
    return kind.convert(entries, label);
  }
  if (typeof raw !== 'string') throw new Error(`list value given for single-value option ${spec.longestName}`);
  return kind.convert(raw, label);
}

/** The first of the option's environment variables that is set (Besu checks every alias in order). */
function fromEnvironment(spec: OptionSpec, env: Environment): string | undefined {
  for (const name of spec.envNames) {
    const value = env[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

function configFilePath(commandLine: ParsedCommandLine, env: Environment): string | undefined {
  const fromCommandLine = commandLine.values.get(CONFIG_FILE_SPEC) as string | undefined;
  const fromEnv = env[CONFIG_FILE_ENV];
  if (fromCommandLine !== undefined && fromEnv !== undefined) {
    // Besu's format arguments are in this order, giving this odd but verbatim wording.
    throw new CliUsageError(
      `Both ${CONFIG_FILE_ENV}=--config-file and ${fromEnv} [${fromCommandLine}] specified. Please specify only one.`,
    );
  }
  return fromCommandLine ?? fromEnv;
}

function portClash(ports: readonly number[]): CliUsageError | undefined {
  const seen = new Set<number>();
  for (const port of ports) {
    if (port <= 0) continue;
    if (seen.has(port)) {
      return new CliUsageError(`Port number '${port}' has been specified multiple times. Please review the supplied configuration.`);
    }
    seen.add(port);
  }
  return undefined;
}

/** Besu's checks and adjustments that involve more than one option. */
function applyCrossOptionRules(values: Map<OptionKey, unknown>, specified: ReadonlySet<OptionKey>): void {
  const get = <T>(key: OptionKey): T => values.get(key) as T;

  if (specified.has('network') && get<string | undefined>('genesisFile') !== undefined) {
    throw new CliUsageError(
      '--network option and --genesis-file option can\'t be used at the same time.  Please refer to CLI reference for more details about this constraint.',
    );
  }
  // A custom genesis is its own network; otherwise the named network defaults to mainnet.
  if (get<string | undefined>('genesisFile') === undefined && get<string | undefined>('network') === undefined) {
    values.set('network', 'mainnet');
  }

  // §6.1: the WebSocket service listens where the node says it is, unless told otherwise.
  if (!specified.has('rpcWsHost')) values.set('rpcWsHost', get<string>('p2pHost'));

  const enabledPorts = [
    ...(get<boolean>('p2pEnabled') ? [get<number>('p2pPort')] : []),
    ...(get<boolean>('rpcHttpEnabled') ? [get<number>('rpcHttpPort')] : []),
    ...(get<boolean>('rpcWsEnabled') ? [get<number>('rpcWsPort')] : []),
    ...(get<boolean>('graphqlHttpEnabled') ? [get<number>('graphqlHttpPort')] : []),
    ...(get<boolean>('metricsEnabled') ? [get<number>('metricsPort')] : []),
  ];
  const clash = portClash(enabledPorts);
  if (clash !== undefined) throw clash;

  // §12.3: the pool's minimum follows a lower --min-gas-price unless set; set higher than it is an error.
  const minGasPrice = get<bigint>('minGasPrice');
  if (specified.has('txPoolMinGasPrice')) {
    if (get<bigint>('txPoolMinGasPrice') > minGasPrice) {
      throw new CliUsageError('tx-pool-min-gas-price cannot be greater than the value of min-gas-price');
    }
  } else if (minGasPrice < get<bigint>('txPoolMinGasPrice')) {
    values.set('txPoolMinGasPrice', minGasPrice);
  }
  // §12.2: no replacement price bump on a free-gas network unless asked for.
  if (minGasPrice === 0n && !specified.has('txPoolPriceBump')) values.set('txPoolPriceBump', 0);

  // §12.3: each implementation's options are refused with the other, listing the ones given.
  const layered = get<string>('txPool') === 'LAYERED';
  const misplaced = (layered ? SEQUENCED_POOL_OPTIONS : LAYERED_POOL_OPTIONS).filter((key) => specified.has(key));
  if (misplaced.length > 0) {
    const names = misplaced.map((key) => specFor(key).row.names[0]).join(', ');
    throw new CliUsageError(
      layered
        ? `Could not use legacy or sequenced transaction pool options with layered implementation [${names}]`
        : `Could not use layered transaction pool options with legacy or sequenced implementation [${names}]`,
    );
  }
  if (!layered) {
    throw new CliUsageError(
      `--tx-pool=${get<string>('txPool')} is not supported: Basalt implements the LAYERED transaction pool only`,
    );
  }
}

const LAYERED_POOL_OPTIONS: readonly OptionKey[] = [
  'txPoolLayerMaxCapacity', 'txPoolMaxPrioritized', 'txPoolMaxPrioritizedByType', 'txPoolMaxFutureBySender',
];
const SEQUENCED_POOL_OPTIONS: readonly OptionKey[] = ['txPoolRetentionHours', 'txPoolLimitByAccountPercentage', 'txPoolMaxSize'];

/** Resolves the node options from a parsed command line, the environment and the config file. */
function resolveParsed(commandLine: ParsedCommandLine, env: Environment, readFile: ReadFile): NodeOptions {
  if (commandLine.unmatched.length > 0) throw unmatchedArgumentsError(commandLine.unmatched);

  const configPath = configFilePath(commandLine, env);
  const fromToml = configPath === undefined ? new Map<OptionSpec, RawValue>() : readTomlConfig(configPath, readFile);

  const values = new Map<OptionKey, unknown>();
  const specified = new Set<OptionKey>();
  for (const spec of OPTION_SPECS) {
    const { key } = spec.row;
    if (commandLine.values.has(spec)) {
      values.set(key, commandLine.values.get(spec));
      specified.add(key);
      continue;
    }
    const envValue = fromEnvironment(spec, env);
    const tomlValue = fromToml.get(spec);
    if (envValue !== undefined) {
      values.set(key, convertRaw(spec, envValue));
      specified.add(key);
    } else if (tomlValue !== undefined) {
      values.set(key, convertRaw(spec, tomlValue));
      specified.add(key);
    } else {
      const fallback: unknown = spec.row.default;
      values.set(key, typeof fallback === 'function' ? (fallback as () => unknown)() : fallback);
    }
  }

  applyCrossOptionRules(values, specified);
  // The map holds exactly one value of the row's type per key (checked by each kind's conversion).
  const options = Object.fromEntries(values) as Omit<NodeOptions, 'specified'>;
  return Object.freeze({ ...options, specified });
}

/**
 * What the command line asks for: help, the version, or running the node with resolved options.
 * Throws CliUsageError (Besu's message text) for any parameter error.
 */
export function resolveInvocation(argv: readonly string[], env: Environment, readFile: ReadFile = readFileUtf8): Invocation {
  const commandLine = parseCommandLine(argv);
  // As in picocli, a help or version request wins over unknown words but not over malformed values.
  if (commandLine.helpRequested) return { kind: 'help' };
  if (commandLine.versionRequested) return { kind: 'version' };
  const options = resolveParsed(commandLine, env, readFile);
  // Checks Besu makes before running the node only (not for subcommands such as `blocks import`).
  checkAuthenticationOptions(options, readFile);
  return { kind: 'run', options };
}

/**
 * Resolves the node options from the command line (without the program name), the environment and the
 * TOML config file. `--help`/`--version` are accepted and ignored here (see resolveInvocation).
 * Throws CliUsageError (Besu's message text) for any parameter error.
 */
export function resolveOptions(argv: readonly string[], env: Environment, readFile: ReadFile = readFileUtf8): NodeOptions {
  return resolveParsed(parseCommandLine(argv), env, readFile);
}

/** Start-up warnings for options given that have no effect: Besu's, for options whose service is disabled. */
export function dependencyWarnings(options: NodeOptions): string[] {
  return [...disabledServiceWarnings(options), ...authenticationWarnings(options)];
}

function disabledServiceWarnings(options: NodeOptions): string[] {
  const groups: { readonly enabledBy: string; readonly enabled: boolean; readonly dependents: readonly OptionKey[] }[] = [
    {
      enabledBy: '--rpc-http-enabled',
      enabled: options.rpcHttpEnabled,
      dependents: [
        'rpcHttpApi', 'rpcHttpCorsOrigins', 'rpcHttpHost', 'rpcHttpPort', 'rpcHttpMaxActiveConnections',
        'rpcHttpMaxBatchSize', 'rpcHttpMaxRequestContentLength', 'rpcHttpApiMethodsNoAuth',
        'rpcHttpAuthenticationEnabled', 'rpcHttpAuthenticationCredentialsFile', 'rpcHttpAuthenticationJwtPublicKeyFile',
      ],
    },
    {
      // The worker threads serve WebSocket too, and GraphQL unless it has threads of its own.
      enabledBy: '--rpc-http-enabled',
      enabled: options.rpcHttpEnabled || options.rpcWsEnabled || (options.graphqlHttpEnabled && options.graphqlHttpWorkers === 0),
      dependents: ['rpcHttpWorkers'],
    },
    {
      enabledBy: '--rpc-ws-enabled',
      enabled: options.rpcWsEnabled,
      dependents: [
        'rpcWsApi', 'rpcWsApiMethodsNoAuth', 'rpcWsHost', 'rpcWsPort', 'rpcWsMaxFrameSize', 'rpcWsMaxActiveConnections',
        'rpcWsAuthenticationEnabled', 'rpcWsAuthenticationCredentialsFile', 'rpcWsAuthenticationJwtPublicKeyFile',
      ],
    },
    {
      enabledBy: '--graphql-http-enabled',
      enabled: options.graphqlHttpEnabled,
      dependents: ['graphqlHttpCorsOrigins', 'graphqlHttpHost', 'graphqlHttpPort', 'graphqlHttpWorkers', 'graphqlMaxQueryComplexity', 'graphqlMaxQueryDepth'],
    },
    {
      enabledBy: '--metrics-enabled',
      enabled: options.metricsEnabled,
      dependents: ['metricsHost', 'metricsPort'],
    },
    {
      enabledBy: '--p2p-enabled',
      enabled: options.p2pEnabled,
      dependents: ['bootnodes', 'discoveryEnabled', 'maxPeers', 'p2pHost', 'p2pPort'],
    },
  ];
  return groups.flatMap(({ enabledBy, enabled, dependents }) => {
    const ignored = dependents.filter((key) => options.specified.has(key)).map((key) => specFor(key).row.names[0]);
    return enabled || ignored.length === 0
      ? []
      : [`${ignored.join(', ')} has been ignored because ${enabledBy} was not defined on the command line.`];
  });
}
