/**
 * Besu's JSON-RPC method names, for the options that must name real ones
 * (`--rpc-http-api-methods-no-auth`, spec rpc-auth-cli.md §8.1): the methods Basalt serves (its registry)
 * and the names Besu knows that Basalt does not serve (spec §3, plus Besu's Clique methods).
 */
import { lookupMethod } from './registry.js';

/** Besu method names absent from Basalt's registry. */
export const UNSERVED_BESU_METHOD_NAMES: ReadonlySet<string> = new Set([
  'eth_getBlockAccessList', 'eth_coinbase',
  'txpool_status', 'txpool_contentFrom',
  'miner_changeTargetGasLimit', 'miner_getMinGasPrice', 'miner_setMinGasPrice', 'miner_getMinPriorityFee',
  'miner_setMinPriorityFee', 'miner_getExtraData', 'miner_setExtraData',
  'admin_generateLogBloomCache', 'admin_logsRepairCache', 'admin_logsRemoveCache',
  'plugins_reloadPluginConfig',
  'ibft_getValidatorsByBlockNumber', 'ibft_getValidatorsByBlockHash', 'ibft_proposeValidatorVote',
  'ibft_discardValidatorVote', 'ibft_getPendingVotes', 'ibft_getSignerMetrics',
  'clique_discard', 'clique_getSigners', 'clique_getSignersAtHash', 'clique_propose', 'clique_proposals',
  'clique_getSignerMetrics',
  'debug_accountAt', 'debug_accountRange', 'debug_batchSendRawTransaction', 'debug_getBadBlocks',
  'debug_metrics', 'debug_replayBlock', 'debug_resyncWorldState', 'debug_setHead',
  'debug_standardTraceBadBlockToFile', 'debug_standardTraceBlockToFile', 'debug_storageRangeAt',
  'trace_block', 'trace_call', 'trace_callMany', 'trace_filter', 'trace_get', 'trace_rawTransaction',
  'trace_replayBlockTransactions', 'trace_transaction',
  'perm_addAccountsToAllowlist', 'perm_addAccountsToWhitelist', 'perm_addNodesToAllowlist',
  'perm_addNodesToWhitelist', 'perm_getAccountsAllowlist', 'perm_getAccountsWhitelist',
  'perm_getNodesAllowlist', 'perm_getNodesWhitelist', 'perm_reloadPermissionsFromFile',
  'perm_removeAccountsFromAllowlist', 'perm_removeNodesFromAllowlist',
  'engine_getBlobsV1', 'engine_getBlobsV2', 'engine_getBlobsV3', 'engine_getPayloadV1',
  'engine_getPayloadV2', 'engine_getPayloadV3', 'engine_getPayloadV4', 'engine_getPayloadV5',
  'engine_getPayloadV6', 'engine_newPayloadV1', 'engine_newPayloadV2', 'engine_newPayloadV3',
  'engine_newPayloadV4', 'engine_newPayloadV5', 'engine_forkchoiceUpdatedV1', 'engine_forkchoiceUpdatedV2',
  'engine_forkchoiceUpdatedV3', 'engine_forkchoiceUpdatedV4', 'engine_exchangeTransitionConfigurationV1',
  'engine_getClientVersionV1', 'engine_getPayloadBodiesByHashV1', 'engine_getPayloadBodiesByHashV2',
  'engine_getPayloadBodiesByRangeV1', 'engine_getPayloadBodiesByRangeV2', 'engine_exchangeCapabilities',
  'engine_preparePayload_debug',
  'testing_buildBlockV1',
]);

export function isBesuMethodName(name: string): boolean {
  return lookupMethod(name) !== undefined || UNSERVED_BESU_METHOD_NAMES.has(name);
}
