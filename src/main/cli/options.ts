// THE table of node options. Each row gives Besu's names, the value kind, the default and the key in the
// resolved `NodeOptions`; the environment variable (`BASALT_` + upper snake case of each long name) and the
// TOML keys (each long name without dashes) are derived from the names, and `NodeOptions` is derived from
// the rows — adding an option is adding one row.

import { availableParallelism } from 'node:os';
import {
  apiList,
  bigInteger,
  bigLong,
  booleanFlag,
  booleanWithOptionalValue,
  booleanWithRequiredValue,
  corsOrigins,
  enumeration,
  file,
  fraction,
  hexBytes,
  host,
  hostAllowlist,
  int,
  type Kind,
  logLevel,
  long,
  metricCategoryList,
  path,
  percentage,
  port,
  stringList,
  text,
  transactionTypeLimits,
  wei,
} from './kinds.js';
import { API_GROUPS } from '../../shared/rpc/api-groups.js';
import { JWT_ALGORITHM_NAMES } from '../../shared/auth/jwt-algorithms.js';
import { METRIC_CATEGORIES } from '../metrics/categories.js';

export type { LogLevel } from './kinds.js';
export { LOG_LEVELS } from './kinds.js';

export const ENV_PREFIX = 'BASALT_';

export const NETWORKS = [
  'mainnet', 'sepolia', 'holesky', 'hoodi', 'ephemery', 'linea_mainnet', 'linea_sepolia', 'lukso', 'dev',
  'future_eips', 'experimental_eips',
] as const;
/** Named networks Besu knows; Basalt itself only runs `dev` (and custom genesis files). */
export type NetworkName = (typeof NETWORKS)[number];

/** `--Xhttp-engine`: `auto` picks uWebSockets.js when it loads (src/main/supervisor/http-engine.ts); `uws` and `node` force one. */
export const HTTP_ENGINE_SETTINGS = ['auto', 'uws', 'node'] as const;
export type HttpEngineSetting = (typeof HTTP_ENGINE_SETTINGS)[number];

export const TX_POOL_IMPLEMENTATIONS = ['LAYERED', 'SEQUENCED', 'LEGACY'] as const;

export interface OptionRow<K extends string, T, HasDefault extends boolean> {
  /** Long names first (`--name`), then aliases; a single-dash short name (`-l`) may follow. */
  readonly names: readonly [`--${string}`, ...string[]];
  readonly key: K;
  readonly kind: Kind<T>;
  readonly description: string;
  readonly hasDefault: HasDefault;
  /** A value, or a function computing it when it is needed (e.g. from the machine's CPU count). */
  readonly default: HasDefault extends true ? T | (() => T) : undefined;
  /** How the default is shown in help when it is not a plain value. */
  readonly defaultText?: string;
  /** Besu's hidden (`--X...` experimental) options: accepted everywhere, not listed in help. */
  readonly hidden?: boolean;
}

interface RowSpec<K extends string, T> {
  readonly names: readonly [`--${string}`, ...string[]];
  readonly key: K;
  readonly kind: Kind<T>;
  readonly description: string;
  readonly defaultText?: string;
  readonly hidden?: boolean;
}

/** An option that always has a value (given or default). */
function option<const K extends string, T>(
  spec: RowSpec<K, T> & { readonly default: NoInfer<T> | (() => NoInfer<T>) },
): OptionRow<K, T, true> {
  return { ...spec, hasDefault: true };
}

/** An option that is `undefined` unless given. */
function optionalOption<const K extends string, T>(spec: RowSpec<K, T>): OptionRow<K, T, false> {
  return { ...spec, hasDefault: false, default: undefined };
}

export const NODE_OPTIONS = [
  // --- Node, data, network -----------------------------------------------------------------------------
  optionalOption({
    names: ['--config-file'],
    key: 'configFile',
    kind: file,
    description: 'TOML config file',
  }),
  option({
    names: ['--data-path'],
    key: 'dataPath',
    kind: path,
    default: './build/data',
    description: 'The path to Basalt data directory',
  }),
  optionalOption({
    names: ['--genesis-file'],
    key: 'genesisFile',
    kind: file,
    description: 'Genesis file for your custom network (cannot be used with --network)',
  }),
  // No plain default: with --genesis-file the network is the custom one (undefined); otherwise `mainnet`.
  optionalOption({
    names: ['--network'],
    key: 'network',
    kind: enumeration(NETWORKS, { paramLabel: '<NETWORK>', lenientSeparators: true }),
    defaultText: 'MAINNET',
    description: `Synchronize against the indicated network: ${NETWORKS.map((n) => n.toUpperCase()).join(', ')}`,
  }),
  optionalOption({
    names: ['--network-id'],
    key: 'networkId',
    kind: bigInteger,
    defaultText: 'the chain ID in the genesis file',
    description: 'P2P network identifier',
  }),
  // Undefined unless given: the node picks `<data-path>/key` (or the dev network's validator key).
  optionalOption({
    names: ['--node-private-key-file'],
    key: 'nodePrivateKeyFile',
    kind: path,
    defaultText: '<data-path>/key',
    description: 'The node\'s private key file',
  }),
  optionalOption({
    names: ['--identity'],
    key: 'identity',
    kind: text(),
    description: 'Identification for this node in the Client ID',
  }),
  option({
    names: ['--logging', '-l'],
    key: 'logging',
    kind: logLevel,
    default: 'INFO',
    description: 'Logging verbosity levels: OFF, ERROR, WARN, INFO, DEBUG, TRACE, ALL',
  }),
  option({
    names: ['--revert-reason-enabled'],
    key: 'revertReasonEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Enable passing the revert reason back through TransactionReceipts (revertReason in eth_getTransactionReceipt and eth_getBlockReceipts of reverted transactions)',
  }),

  // --- JSON-RPC over HTTP ------------------------------------------------------------------------------
  option({
    names: ['--rpc-http-enabled'],
    key: 'rpcHttpEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Set to start the JSON-RPC HTTP service',
  }),
  option({
    names: ['--rpc-http-host'],
    key: 'rpcHttpHost',
    kind: host,
    default: '127.0.0.1',
    description: 'Host for JSON-RPC HTTP to listen on',
  }),
  option({
    names: ['--rpc-http-port'],
    key: 'rpcHttpPort',
    kind: port,
    default: 8545,
    description: 'Port for JSON-RPC HTTP to listen on',
  }),
  option({
    names: ['--rpc-http-api', '--rpc-http-apis'],
    key: 'rpcHttpApi',
    kind: apiList,
    default: ['ETH', 'NET', 'WEB3'],
    description: `Comma separated list of APIs to enable on JSON-RPC HTTP service, from ${API_GROUPS.join(', ')}`,
  }),
  option({
    names: ['--rpc-http-cors-origins'],
    key: 'rpcHttpCorsOrigins',
    kind: corsOrigins,
    default: [],
    defaultText: 'none',
    description: 'Comma separated origin domain URLs (regular expressions) for CORS validation; all or * for any, none for none',
  }),
  option({
    names: ['--host-allowlist'],
    key: 'hostAllowlist',
    kind: hostAllowlist,
    default: ['localhost', '127.0.0.1'],
    description: 'Comma separated list of hostnames to allow for RPC access, or * (all) to accept any host, or none',
  }),
  option({
    names: ['--rpc-http-max-batch-size'],
    key: 'rpcHttpMaxBatchSize',
    kind: int(),
    default: 1024,
    description: 'Specifies the maximum number of requests in a single RPC batch request via RPC. -1 specifies no limit',
  }),
  option({
    names: ['--rpc-http-max-request-content-length'],
    key: 'rpcHttpMaxRequestContentLength',
    kind: long(),
    default: 134217728,
    description: 'Specifies the maximum request content length',
  }),
  // Besu's default is 80. Here a limit is enforced only when given: uWebSockets.js 20.30 cannot count
  // connections, so a limit puts a relay on the main thread in front of every connection, which costs
  // a third of the small-request throughput and caps it at one core (http-connection-guard.ts).
  optionalOption({
    names: ['--rpc-http-max-active-connections'],
    key: 'rpcHttpMaxActiveConnections',
    kind: int(),
    defaultText: 'unlimited',
    description: 'Maximum number of HTTP connections allowed for JSON-RPC; further connections are closed',
  }),
  option({
    names: ['--rpc-http-workers'],
    key: 'rpcHttpWorkers',
    kind: int({ min: 1 }),
    default: () => availableParallelism(),
    defaultText: 'number of CPUs',
    description: 'Number of worker threads serving JSON-RPC HTTP and WebSocket (Basalt)',
  }),
  option({
    names: ['--Xstate-reader-threads'],
    key: 'stateReaderThreads',
    kind: int({ min: 0 }),
    // Half the cores: the others serve HTTP, build blocks and run the pool; 0 leaves every read on the chain thread.
    default: () => Math.max(1, Math.floor(availableParallelism() / 2)),
    defaultText: 'half the number of CPUs, at least 1',
    hidden: true,
    description: 'Number of threads answering eth_call, eth_estimateGas, eth_getBalance, eth_getCode and eth_getStorageAt beside the chain thread; 0 answers them on the chain thread (Basalt)',
  }),
  option({
    names: ['--Xhttp-engine'],
    key: 'httpEngine',
    kind: enumeration(HTTP_ENGINE_SETTINGS, { paramLabel: '<ENGINE>' }),
    default: 'auto',
    hidden: true,
    description: 'What serves the JSON-RPC HTTP, WebSocket and GraphQL ports: AUTO (uWebSockets.js where its native build loads, else node:http and ws), UWS, or NODE (Basalt)',
  }),
  option({
    names: ['--json-pretty-print-enabled'],
    key: 'jsonPrettyPrintEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Enable JSON pretty print format',
  }),
  option({
    names: ['--rpc-http-authentication-enabled'],
    key: 'rpcHttpAuthenticationEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Require authentication for the JSON-RPC HTTP service',
  }),
  optionalOption({
    names: ['--rpc-http-authentication-credentials-file'],
    key: 'rpcHttpAuthenticationCredentialsFile',
    kind: file,
    description: 'Storage file for JSON-RPC HTTP authentication credentials',
  }),
  optionalOption({
    names: ['--rpc-http-authentication-jwt-public-key-file'],
    key: 'rpcHttpAuthenticationJwtPublicKeyFile',
    kind: file,
    description: 'JWT public key file for JSON-RPC HTTP authentication',
  }),
  option({
    names: ['--rpc-http-authentication-jwt-algorithm'],
    key: 'rpcHttpAuthenticationJwtAlgorithm',
    kind: enumeration(JWT_ALGORITHM_NAMES, { paramLabel: '<ALGORITHM>' }),
    default: 'RS256',
    description: 'Encryption algorithm used for HTTP JWT public key. Possible values are RS256, RS384, RS512, ES256, ES384, ES512 (ES256 also verifies secp256k1 keys)',
  }),
  option({
    names: ['--rpc-http-api-method-no-auth', '--rpc-http-api-methods-no-auth'],
    key: 'rpcHttpApiMethodsNoAuth',
    kind: stringList({ paramLabel: '<api name>', separator: / ?, ?/ }),
    default: [],
    defaultText: 'none',
    description: 'Comma separated list of API methods to exclude from RPC authentication services, RPC APIs must be enabled',
  }),
  option({
    names: ['--rpc-max-logs-range'],
    key: 'rpcMaxLogsRange',
    kind: long(),
    default: 5000,
    description: 'Specifies the maximum number of blocks to retrieve logs from via RPC. Must be >=0. 0 specifies no limit',
  }),
  option({
    // Basalt's own: Besu has no cap on the logs of one answer.
    names: ['--rpc-max-logs-count'],
    key: 'rpcMaxLogsCount',
    kind: int({ min: 0 }),
    default: 10000,
    description:
      'Specifies the maximum number of logs returned by one eth_getLogs, eth_getFilterLogs or eth_getFilterChanges call. Must be >=0. 0 specifies no limit',
  }),
  option({
    names: ['--rpc-gas-cap'],
    key: 'rpcGasCap',
    kind: bigLong(),
    default: 100000000n,
    description: 'Specifies the gasLimit cap for transaction simulation RPC methods. Must be >=0. 0 specifies no limit',
  }),

  // --- JSON-RPC over WebSocket (served by the same worker threads as HTTP) and IPC ---------------------
  option({
    names: ['--rpc-ws-enabled'],
    key: 'rpcWsEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Set to start the JSON-RPC WebSocket service',
  }),
  option({
    names: ['--rpc-ws-host'],
    key: 'rpcWsHost',
    kind: host,
    // Replaced by the --p2p-host value unless given (resolve.ts), as in Besu.
    default: '127.0.0.1',
    defaultText: 'the --p2p-host value',
    description: 'Host for JSON-RPC WebSocket service to listen on',
  }),
  option({
    names: ['--rpc-ws-port'],
    key: 'rpcWsPort',
    kind: port,
    default: 8546,
    description: 'Port for JSON-RPC WebSocket service to listen on',
  }),
  option({
    names: ['--rpc-ws-api', '--rpc-ws-apis'],
    key: 'rpcWsApi',
    kind: apiList,
    default: ['ETH', 'NET', 'WEB3'],
    description: `Comma separated list of APIs to enable on JSON-RPC WebSocket service, from ${API_GROUPS.join(', ')} (eth_subscribe and eth_unsubscribe are always served)`,
  }),
  option({
    names: ['--rpc-ws-max-active-connections'],
    key: 'rpcWsMaxActiveConnections',
    kind: int(),
    default: 80,
    description: 'Maximum number of WebSocket connections allowed for JSON-RPC; further connections are closed',
  }),
  option({
    names: ['--rpc-ws-max-frame-size'],
    key: 'rpcWsMaxFrameSize',
    kind: int({ min: 1 }),
    default: 1048576,
    description: 'Maximum size in bytes for JSON-RPC WebSocket frames; a message may span 4 frames, a larger one closes the connection (Basalt applies the limit to the message, 4 times this size)',
  }),
  option({
    names: ['--rpc-ws-authentication-enabled'],
    key: 'rpcWsAuthenticationEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Require authentication for the JSON-RPC WebSocket service',
  }),
  optionalOption({
    names: ['--rpc-ws-authentication-credentials-file'],
    key: 'rpcWsAuthenticationCredentialsFile',
    kind: file,
    description: 'Storage file for JSON-RPC WebSocket authentication credentials',
  }),
  optionalOption({
    names: ['--rpc-ws-authentication-jwt-public-key-file'],
    key: 'rpcWsAuthenticationJwtPublicKeyFile',
    kind: file,
    description: 'JWT public key file for JSON-RPC WebSocket authentication',
  }),
  option({
    names: ['--rpc-ws-authentication-jwt-algorithm'],
    key: 'rpcWsAuthenticationJwtAlgorithm',
    kind: enumeration(JWT_ALGORITHM_NAMES, { paramLabel: '<ALGORITHM>' }),
    default: 'RS256',
    description: 'Encryption algorithm used for Websockets JWT public key. Possible values are RS256, RS384, RS512, ES256, ES384, ES512 (ES256 also verifies secp256k1 keys)',
  }),
  option({
    names: ['--rpc-ws-api-methods-no-auth', '--rpc-ws-api-method-no-auth'],
    key: 'rpcWsApiMethodsNoAuth',
    kind: stringList({ paramLabel: '<api name>', separator: / ?, ?/ }),
    default: [],
    defaultText: 'none',
    description: 'Comma separated list of RPC methods to exclude from RPC authentication services, RPC APIs must be enabled',
  }),
  option({
    names: ['--Xrpc-ipc-enabled'],
    key: 'rpcIpcEnabled',
    kind: booleanFlag,
    default: false,
    hidden: true,
    description: 'Set to start the JSON-RPC IPC service',
  }),
  optionalOption({
    names: ['--Xrpc-ipc-path'],
    key: 'rpcIpcPath',
    kind: path,
    defaultText: '<data-path>/node.ipc',
    hidden: true,
    description: 'IPC socket/pipe file',
  }),
  option({
    names: ['--Xrpc-ipc-api', '--Xrpc-ipc-apis'],
    key: 'rpcIpcApi',
    kind: apiList,
    default: ['ETH', 'NET', 'WEB3'],
    hidden: true,
    description: `Comma separated list of APIs to enable on JSON-RPC IPC service, from ${API_GROUPS.join(', ')} (ENGINE is left out)`,
  }),

  // --- GraphQL over HTTP (EIP-1767) ------------------------------------------------------------------
  option({
    names: ['--graphql-http-enabled'],
    key: 'graphqlHttpEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Set to start the GraphQL HTTP service',
  }),
  option({
    names: ['--graphql-http-host'],
    key: 'graphqlHttpHost',
    kind: host,
    default: '127.0.0.1',
    description: 'Host for GraphQL HTTP to listen on',
  }),
  option({
    names: ['--graphql-http-port'],
    key: 'graphqlHttpPort',
    kind: port,
    default: 8547,
    description: 'Port for GraphQL HTTP to listen on',
  }),
  option({
    names: ['--graphql-http-cors-origins'],
    key: 'graphqlHttpCorsOrigins',
    kind: corsOrigins,
    default: [],
    defaultText: 'none',
    description: 'Comma separated origin domain URLs (regular expressions) for CORS validation; all or * for any, none for none',
  }),
  option({
    names: ['--graphql-http-workers'],
    key: 'graphqlHttpWorkers',
    kind: int({ min: 0 }),
    default: 0,
    description: 'Worker threads serving GraphQL HTTP alone; 0 to serve it from the JSON-RPC HTTP workers (Basalt)',
  }),
  option({
    names: ['--graphql-max-query-complexity'],
    key: 'graphqlMaxQueryComplexity',
    kind: int({ min: 1 }),
    default: 200,
    description: 'Maximum complexity of a GraphQL query: each field selected counts 1, Transaction.block and __Type.fields 100 (Basalt; Besu\'s fixed limit is 200)',
  }),
  option({
    names: ['--graphql-max-query-depth'],
    key: 'graphqlMaxQueryDepth',
    kind: int({ min: 0 }),
    default: 0,
    description: 'Maximum nesting of fields in a GraphQL query; 0 for no limit, as Besu (Basalt)',
  }),

  // --- Block production --------------------------------------------------------------------------------
  // No --miner-enabled / --miner-coinbase: Besu dropped them with proof-of-work mining, so it refuses them
  // as unknown options (exit 2); QBFT validators produce blocks without them. See REMOVED_BESU_OPTIONS.
  optionalOption({
    names: ['--miner-extra-data'],
    key: 'minerExtraData',
    kind: hexBytes(32),
    defaultText: '"basalt <version>" bytes',
    description: 'A hex string representing the (32) bytes to be included in the extra data field of a mined block',
  }),
  option({
    names: ['--Xqbft-enable-early-round-change'],
    key: 'qbftEarlyRoundChange',
    kind: booleanWithOptionalValue,
    default: false,
    hidden: true,
    description: 'Enable early round change upon receiving f+1 valid future round change messages from different validators (experimental)',
  }),
  option({
    names: ['--min-gas-price'],
    key: 'minGasPrice',
    kind: wei,
    default: 1000n,
    description: 'Minimum price (in Wei) offered by a transaction for it to be included in a mined block',
  }),
  option({
    names: ['--min-priority-fee'],
    key: 'minPriorityFee',
    kind: wei,
    default: 0n,
    description: 'Minimum priority fee per gas (in Wei) offered by a transaction for it to be included in a block',
  }),
  optionalOption({
    names: ['--target-gas-limit'],
    key: 'targetGasLimit',
    kind: bigLong(),
    description: 'Sets target gas limit per block. If set, each block\'s gas limit will approach this setting over time (by at most parent/1024 - 1 per block, never below 5000)',
  }),

  // --- Transaction pool --------------------------------------------------------------------------------
  // Computed defaults below depend on whether they were given; resolve.ts applies §12.3's forcing rules.
  option({
    names: ['--tx-pool-price-bump'],
    key: 'txPoolPriceBump',
    kind: percentage,
    default: 10,
    description: 'Price bump percentage to replace an already existing transaction',
  }),
  option({
    names: ['--tx-pool-min-gas-price'],
    key: 'txPoolMinGasPrice',
    kind: wei,
    default: 1000n,
    description: 'Transactions with gas price (in Wei) lower than this minimum will not be accepted into the txpool (not to be confused with min-gas-price, that is applied on block creation)',
  }),
  option({
    names: ['--tx-pool-blob-price-bump'],
    key: 'txPoolBlobPriceBump',
    kind: percentage,
    default: 100,
    description: 'Blob price bump percentage to replace an already existing transaction blob tx',
  }),
  option({
    names: ['--tx-pool'],
    key: 'txPool',
    kind: enumeration(TX_POOL_IMPLEMENTATIONS, { paramLabel: '<IMPLEMENTATION>' }),
    default: 'LAYERED',
    description: 'The Transaction Pool implementation to use (Basalt implements LAYERED only; SEQUENCED and LEGACY are refused at start-up)',
  }),
  // Layered pool options (resolve.ts refuses them with a sequenced pool, as Besu does).
  option({
    names: ['--tx-pool-layer-max-capacity'],
    key: 'txPoolLayerMaxCapacity',
    kind: long(),
    default: 25_000_000,
    description: 'Max amount of memory space, in bytes, that any layer within the transaction pool could occupy',
  }),
  option({
    names: ['--tx-pool-max-prioritized'],
    key: 'txPoolMaxPrioritized',
    kind: int(),
    default: 4000,
    description: 'Max number of pending transactions that are prioritized and thus kept sorted',
  }),
  option({
    names: ['--tx-pool-max-prioritized-by-type'],
    key: 'txPoolMaxPrioritizedByType',
    kind: transactionTypeLimits,
    default: { 3: 72 },
    defaultText: 'BLOB=72',
    description: 'Max number of pending transactions, of a specific type, that are prioritized and thus kept sorted',
  }),
  option({
    names: ['--tx-pool-max-future-by-sender'],
    key: 'txPoolMaxFutureBySender',
    kind: int(),
    default: 200,
    description: 'Max number of future pending transactions allowed for a single sender',
  }),
  // Sequenced pool options: accepted so that using them gets Besu's error (Basalt has no sequenced pool).
  option({
    names: ['--tx-pool-retention-hours'],
    key: 'txPoolRetentionHours',
    kind: int(),
    default: 13,
    description: 'Maximum retention period of pending transactions in hours (sequenced pool only)',
  }),
  option({
    names: ['--tx-pool-limit-by-account-percentage'],
    key: 'txPoolLimitByAccountPercentage',
    kind: fraction,
    default: 0.001,
    description: 'Maximum portion of the transaction pool which a single account may occupy with future transactions (sequenced pool only)',
  }),
  option({
    names: ['--tx-pool-max-size'],
    key: 'txPoolMaxSize',
    kind: int(),
    default: 4096,
    description: 'Maximum number of pending transactions that will be kept in the transaction pool (sequenced pool only)',
  }),
  option({
    names: ['--rpc-tx-feecap'],
    key: 'rpcTxFeecap',
    kind: wei,
    default: 1000000000000000000n,
    description: 'Maximum transaction fees (in Wei) accepted for transaction submitted through RPC',
  }),
  option({
    names: ['--tx-pool-no-local-priority'],
    key: 'txPoolNoLocalPriority',
    kind: booleanWithOptionalValue,
    default: false,
    description: 'Set to true if senders of transactions sent via RPC should not have priority',
  }),
  option({
    names: ['--strict-tx-replay-protection-enabled'],
    key: 'strictTxReplayProtectionEnabled',
    kind: booleanWithOptionalValue,
    default: false,
    description: 'Require transactions submitted via JSON-RPC to use replay protection in accordance with EIP-155',
  }),

  // --- P2P ---------------------------------------------------------------------------------------------
  option({
    names: ['--p2p-enabled'],
    key: 'p2pEnabled',
    kind: booleanWithRequiredValue,
    default: true,
    description: 'Enable P2P functionality',
  }),
  option({
    names: ['--p2p-host'],
    key: 'p2pHost',
    kind: host,
    default: '127.0.0.1',
    description: 'IP address this node advertises to its peers',
  }),
  option({
    names: ['--p2p-interface'],
    key: 'p2pInterface',
    kind: host,
    default: '0.0.0.0',
    description: 'The network interface address on which this node listens for P2P communication',
  }),
  option({
    names: ['--p2p-port'],
    key: 'p2pPort',
    kind: port,
    default: 30303,
    description: 'Port on which to listen for P2P communication',
  }),
  option({
    names: ['--discovery-enabled'],
    key: 'discoveryEnabled',
    kind: booleanWithRequiredValue,
    default: true,
    description: 'Enable P2P discovery (discovery v4 over UDP on --p2p-port, seeded with --bootnodes; bootnodes are also dialled directly either way)',
  }),
  // Undefined = the network's own list (none for a custom genesis); an empty list = explicitly none.
  optionalOption({
    names: ['--bootnodes'],
    key: 'bootnodes',
    kind: stringList({ paramLabel: '<enode://id@host:port>', allowsNoValue: true }),
    defaultText: 'the network\'s bootnodes',
    description: 'Comma separated enode URLs for P2P discovery bootstrap',
  }),
  option({
    names: ['--max-peers', '--p2p-peer-upper-bound'],
    key: 'maxPeers',
    kind: int(),
    default: 25,
    description: 'Maximum P2P connections that can be established',
  }),

  // --- Metrics (Prometheus) ----------------------------------------------------------------------------
  option({
    names: ['--metrics-enabled'],
    key: 'metricsEnabled',
    kind: booleanFlag,
    default: false,
    description: 'Set to start the metrics exporter',
  }),
  option({
    names: ['--metrics-host'],
    key: 'metricsHost',
    kind: host,
    default: '127.0.0.1',
    description: 'Host for the metrics exporter to listen on',
  }),
  option({
    names: ['--metrics-port'],
    key: 'metricsPort',
    kind: port,
    default: 9545,
    description: 'Port for the metrics exporter to listen on',
  }),
  option({
    names: ['--metrics-category', '--metrics-categories'],
    key: 'metricsCategory',
    kind: metricCategoryList,
    default: METRIC_CATEGORIES,
    defaultText: 'all categories',
    description: `Comma separated list of categories to track metrics for, from ${METRIC_CATEGORIES.join(', ')}`,
  }),
] as const;

/**
 * Options older Besu versions had and this one refuses like any unknown option (spec §11.4: "there is no
 * --miner-enabled/--miner-coinbase in this version"). Named in `--help` so that an operator coming from an
 * older Besu learns why; never accepted.
 */
export const REMOVED_BESU_OPTIONS: readonly { readonly name: string; readonly why: string }[] = [
  { name: '--miner-enabled', why: 'QBFT validators produce blocks without it' },
  { name: '--miner-coinbase', why: 'a QBFT block\'s coinbase is its proposer; rewards go to the genesis miningbeneficiary' },
];

export type NodeOptionRow = (typeof NODE_OPTIONS)[number];
export type OptionKey = NodeOptionRow['key'];

type ValueOfRow<R> = R extends OptionRow<string, infer T, infer HasDefault> ? (HasDefault extends true ? T : T | undefined) : never;

/** The resolved options the node runs with: one field per table row, plus which options were given. */
export type NodeOptions = { readonly [R in NodeOptionRow as R['key']]: ValueOfRow<R> } & {
  /** Options given on the command line, in the environment or in the config file (not defaulted). */
  readonly specified: ReadonlySet<OptionKey>;
};

/** The options of the table with their derived names, in the table's order. */
export interface OptionSpec {
  readonly row: NodeOptionRow;
  readonly longNames: readonly string[];
  readonly shortNames: readonly string[];
  /** picocli names an option by its longest name in its own messages. */
  readonly longestName: string;
  readonly envNames: readonly string[];
  readonly tomlKeys: readonly string[];
}

export function envVarName(longName: string): string {
  return ENV_PREFIX + longName.replace(/^--/, '').toUpperCase().replace(/-/g, '_');
}

function describeRow(row: NodeOptionRow): OptionSpec {
  const longNames = row.names.filter((name) => name.startsWith('--'));
  const shortNames = row.names.filter((name) => !name.startsWith('--'));
  const longestName = row.names.reduce((longest, name) => (name.length > longest.length ? name : longest));
  return {
    row,
    longNames,
    shortNames,
    longestName,
    envNames: longNames.map(envVarName),
    tomlKeys: longNames.map((name) => name.slice(2)),
  };
}

export const OPTION_SPECS: readonly OptionSpec[] = NODE_OPTIONS.map(describeRow);

/** Every name (long, alias, short) → its option. */
export const OPTIONS_BY_NAME: ReadonlyMap<string, OptionSpec> = new Map(
  OPTION_SPECS.flatMap((spec) => spec.row.names.map((name) => [name, spec] as const)),
);

/** Every TOML key → its option. */
export const OPTIONS_BY_TOML_KEY: ReadonlyMap<string, OptionSpec> = new Map(
  OPTION_SPECS.flatMap((spec) => spec.tomlKeys.map((key) => [key, spec] as const)),
);
