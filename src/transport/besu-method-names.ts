/**
 * Every JSON-RPC method name Besu knows (spec rpc-auth-cli.md §3, including the names-only lists of
 * §3.9–3.11). It only classifies a name we do not serve: a Besu name answers -32604 "Method not
 * enabled", any other name -32601 "Method not found". Which methods Basalt serves is decided by the
 * registry, not here.
 */

const ETH = [
  'eth_accounts',
  'eth_blobBaseFee',
  'eth_blockNumber',
  'eth_call',
  'eth_chainId',
  'eth_coinbase',
  'eth_config',
  'eth_createAccessList',
  'eth_estimateGas',
  'eth_feeHistory',
  'eth_gasPrice',
  'eth_getBalance',
  'eth_getBlockAccessList',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getCode',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'eth_getLogs',
  'eth_getMinerDataByBlockHash',
  'eth_getMinerDataByBlockNumber',
  'eth_getProof',
  'eth_getStorageAt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionCount',
  'eth_getTransactionReceipt',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
  'eth_getWork',
  'eth_hashrate',
  'eth_maxPriorityFeePerGas',
  'eth_mining',
  'eth_newBlockFilter',
  'eth_newFilter',
  'eth_newPendingTransactionFilter',
  'eth_protocolVersion',
  'eth_sendRawTransaction',
  'eth_sendTransaction',
  'eth_simulateV1',
  'eth_submitHashrate',
  'eth_submitWork',
  'eth_subscribe',
  'eth_syncing',
  'eth_uninstallFilter',
  'eth_unsubscribe',
];

const NET = ['net_enode', 'net_listening', 'net_peerCount', 'net_services', 'net_version'];

const WEB3 = ['web3_clientVersion', 'web3_sha3'];

const ADMIN = [
  'admin_addPeer',
  'admin_changeLogLevel',
  'admin_generateLogBloomCache',
  'admin_logsRemoveCache',
  'admin_logsRepairCache',
  'admin_nodeInfo',
  'admin_peers',
  'admin_removePeer',
];

const TXPOOL = [
  'txpool_besuPendingTransactions',
  'txpool_besuStatistics',
  'txpool_besuTransactions',
  'txpool_contentFrom',
  'txpool_status',
];

const MINER = [
  'miner_changeTargetGasLimit',
  'miner_getExtraData',
  'miner_getMinGasPrice',
  'miner_getMinPriorityFee',
  'miner_setCoinbase',
  'miner_setEtherbase',
  'miner_setExtraData',
  'miner_setMinGasPrice',
  'miner_setMinPriorityFee',
  'miner_start',
  'miner_stop',
];

const QBFT = [
  'qbft_discardValidatorVote',
  'qbft_getPendingVotes',
  'qbft_getRequestTimeoutSeconds',
  'qbft_getSignerMetrics',
  'qbft_getValidatorsByBlockHash',
  'qbft_getValidatorsByBlockNumber',
  'qbft_proposeValidatorVote',
];

const IBFT = [
  'ibft_discardValidatorVote',
  'ibft_getPendingVotes',
  'ibft_getSignerMetrics',
  'ibft_getValidatorsByBlockHash',
  'ibft_getValidatorsByBlockNumber',
  'ibft_proposeValidatorVote',
];

const PLUGINS = ['plugins_reloadPluginConfig'];

const DEBUG = [
  'debug_accountAt',
  'debug_accountRange',
  'debug_batchSendRawTransaction',
  'debug_getBadBlocks',
  'debug_getRawBlock',
  'debug_getRawHeader',
  'debug_getRawReceipts',
  'debug_getRawTransaction',
  'debug_metrics',
  'debug_replayBlock',
  'debug_resyncWorldState',
  'debug_setHead',
  'debug_standardTraceBadBlockToFile',
  'debug_standardTraceBlockToFile',
  'debug_storageRangeAt',
  'debug_traceBlock',
  'debug_traceBlockByHash',
  'debug_traceBlockByNumber',
  'debug_traceCall',
  'debug_traceTransaction',
];

const TRACE = [
  'trace_block',
  'trace_call',
  'trace_callMany',
  'trace_filter',
  'trace_get',
  'trace_rawTransaction',
  'trace_replayBlockTransactions',
  'trace_transaction',
];

const PERM = [
  'perm_addAccountsToAllowlist',
  'perm_addAccountsToWhitelist',
  'perm_addNodesToAllowlist',
  'perm_addNodesToWhitelist',
  'perm_getAccountsAllowlist',
  'perm_getAccountsWhitelist',
  'perm_getNodesAllowlist',
  'perm_getNodesWhitelist',
  'perm_reloadPermissionsFromFile',
  'perm_removeAccountsFromAllowlist',
  'perm_removeNodesFromAllowlist',
];

/** `engine_<name>V<from..to>` for each versioned Engine API method. */
function versioned(name: string, from: number, to: number): string[] {
  const names: string[] = [];
  for (let v = from; v <= to; v++) names.push(`engine_${name}V${v}`);
  return names;
}

const ENGINE = [
  ...versioned('getBlobs', 1, 3),
  ...versioned('getPayload', 1, 6),
  ...versioned('newPayload', 1, 5),
  ...versioned('forkchoiceUpdated', 1, 4),
  ...versioned('getPayloadBodiesByHash', 1, 2),
  ...versioned('getPayloadBodiesByRange', 1, 2),
  'engine_exchangeTransitionConfigurationV1',
  'engine_getClientVersionV1',
  'engine_exchangeCapabilities',
  'engine_preparePayload_debug',
];

const OTHERS = ['rpc_modules', 'testing_buildBlockV1'];

export const BESU_METHOD_NAMES: ReadonlySet<string> = new Set([
  ...ETH,
  ...NET,
  ...WEB3,
  ...ADMIN,
  ...TXPOOL,
  ...MINER,
  ...QBFT,
  ...IBFT,
  ...PLUGINS,
  ...DEBUG,
  ...TRACE,
  ...PERM,
  ...ENGINE,
  ...OTHERS,
]);

/** True when Besu has a method of this exact (case-sensitive) name. */
export function isBesuMethodName(name: string): boolean {
  return BESU_METHOD_NAMES.has(name);
}
