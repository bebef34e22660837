import type { RpcErrorObject } from './types.js';

/**
 * The one catalogue of JSON-RPC error codes and messages (Besu's RpcErrorType). Every actor and
 * transport takes its errors from here so that a given failure reads the same on every transport.
 * Messages are verbatim: clients match on them.
 */
export const RpcErrors = {
  // Standard / transport
  PARSE_ERROR: { code: -32700, message: 'Parse error' },
  INVALID_REQUEST: { code: -32600, message: 'Invalid Request' },
  METHOD_NOT_FOUND: { code: -32601, message: 'Method not found' },
  INVALID_PARAMS: { code: -32602, message: 'Invalid params' },
  INTERNAL_ERROR: { code: -32603, message: 'Internal error' },
  TIMEOUT_EXPIRED: { code: -32603, message: 'Timeout expired' },
  METHOD_NOT_ENABLED: { code: -32604, message: 'Method not enabled' },
  ETH_SEND_TX_NOT_AVAILABLE: {
    code: -32604,
    message:
      'The method eth_sendTransaction is not supported. Use eth_sendRawTransaction to send a signed transaction to Besu.',
  },
  UNAUTHORIZED: { code: -40100, message: 'Unauthorized' },
  TX_POOL_DISABLED: {
    code: -32002,
    message: 'Transaction pool not enabled. (Either txpool explicitly disabled, or node not yet in sync).',
  },
  EXCEEDS_RPC_MAX_BATCH_SIZE: { code: -32005, message: 'Number of requests exceeds max batch size' },

  // Invalid-params variants (-32602)
  INVALID_ACCOUNT_PARAMS: { code: -32602, message: 'Invalid account params' },
  INVALID_ADDRESS_PARAMS: { code: -32602, message: 'Invalid address params' },
  INVALID_BLOCK_PARAMS: { code: -32602, message: 'Invalid block param (block not found)' },
  INVALID_BLOCK_COUNT_PARAMS: { code: -32602, message: 'Invalid block count params' },
  INVALID_BLOCK_HASH_PARAMS: { code: -32602, message: 'Invalid block hash params' },
  INVALID_BLOCK_INDEX_PARAMS: { code: -32602, message: 'Invalid block index params' },
  INVALID_BLOCK_NUMBER_PARAMS: { code: -32602, message: 'Invalid block number params' },
  INVALID_CALL_PARAMS: { code: -32602, message: 'Invalid call params' },
  INVALID_DATA_PARAMS: { code: -32602, message: 'Invalid data params' },
  INVALID_ENODE_PARAMS: { code: -32602, message: 'Invalid enode params' },
  INVALID_FILTER_PARAMS: { code: -32602, message: 'Invalid filter params' },
  INVALID_RETURN_COMPLETE_TRANSACTION_PARAMS: {
    code: -32602,
    message: 'Invalid return complete transaction params',
  },
  INVALID_LOG_LEVEL_PARAMS: { code: -32602, message: 'Invalid log level params (missing or incorrect)' },
  INVALID_PARAM_COUNT: { code: -32602, message: 'Invalid number of params' },
  INVALID_POSITION_PARAMS: { code: -32602, message: 'Invalid position params' },
  INVALID_REWARD_PERCENTILES_PARAMS: { code: -32602, message: 'Invalid reward percentiles params' },
  INVALID_STORAGE_KEYS_PARAMS: { code: -32602, message: 'Invalid storage keys params' },
  INVALID_TRANSACTION_PARAMS: { code: -32602, message: 'Invalid transaction params (missing or incorrect)' },
  INVALID_TRANSACTION_HASH_PARAMS: { code: -32602, message: 'Invalid transaction hash params' },
  INVALID_TRANSACTION_INDEX_PARAMS: { code: -32602, message: 'Invalid transaction index params' },
  INVALID_TRANSACTION_LIMIT_PARAMS: { code: -32602, message: 'Invalid transaction limit params' },
  INVALID_TRANSACTION_TYPE: { code: -32602, message: 'Invalid transaction type' },
  INVALID_VOTE_TYPE_PARAMS: { code: -32602, message: 'Invalid vote type params' },
  INVALID_PENDING_TRANSACTIONS_PARAMS: { code: -32602, message: 'Invalid pending transactions params' },
  INVALID_TRANSACTION_ID_PARAMS: { code: -32602, message: 'Invalid transaction id params' },
  INVALID_TRANSACTION_TRACE_PARAMS: { code: -32602, message: 'Invalid transaction trace params' },
  INVALID_LOG_FILTER_PARAMS: { code: -32602, message: 'Invalid log filter params' },

  // Transaction / execution
  KNOWN_TRANSACTION: { code: -32000, message: 'Known transaction' },
  REPLACEMENT_UNDERPRICED: { code: -32000, message: 'Replacement transaction underpriced' },
  NONCE_TOO_LOW: { code: -32001, message: 'Nonce too low' },
  NONCE_TOO_HIGH: { code: -32006, message: 'Nonce too high' },
  NONCE_TOO_FAR_IN_FUTURE: {
    code: -32000,
    message: 'Transaction nonce is too distant from current sender nonce',
  },
  INVALID_SIGNATURE: { code: -32002, message: 'Invalid signature' },
  INTRINSIC_GAS_EXCEEDS_LIMIT: { code: -32003, message: 'Intrinsic gas exceeds gas limit' },
  UPFRONT_COST_EXCEEDS_BALANCE: { code: -32004, message: 'Upfront cost exceeds account balance' },
  EXCEEDS_BLOCK_GAS_LIMIT: { code: -32005, message: 'Transaction gas limit exceeds block gas limit' },
  TX_GAS_LIMIT_CAP_EXCEEDED: { code: -32005, message: 'Transaction gas limit cap exceeded' },
  EXCEEDS_RPC_MAX_LOGS_RANGE: { code: -32005, message: 'Requested range exceeds maximum RPC range limit' },
  TX_SENDER_NOT_AUTHORIZED: { code: -32007, message: 'Sender account not authorized to send transactions' },
  INITIAL_SYNC_IN_PROGRESS: { code: -32008, message: 'Initial sync is still in progress' },
  GAS_PRICE_TOO_LOW: { code: -32009, message: 'Gas price below configured minimum gas price' },
  GAS_PRICE_BELOW_CURRENT_BASE_FEE: { code: -32009, message: 'Gas price below current base fee' },
  WRONG_CHAIN_ID: { code: -32000, message: 'Wrong chainId' },
  CHAIN_ID_NOT_SUPPORTED: { code: -32000, message: 'ChainId not supported' },
  CHAIN_ID_REQUIRED: { code: -32000, message: 'ChainId is required' },
  TX_FEECAP_EXCEEDED: { code: -32000, message: 'Transaction fee cap exceeded' },
  MAX_PRIORITY_FEE_PER_GAS_EXCEEDS_MAX_FEE_PER_GAS: {
    code: -32000,
    message: 'Max priority fee per gas exceeds max fee per gas',
  },
  EXECUTION_HALTED: {
    code: -32000,
    message: 'Transaction processing could not be completed due to an exception',
  },
  REVERT_ERROR: { code: 3, message: 'Execution reverted' },
  UNKNOWN_INTERNAL_ERROR: { code: -32603, message: 'Unknown internal error' },
  BLOB_KZG_VALIDATION_FAILED: { code: -32603, message: 'blobs failed kzg validation' },
  TOTAL_BLOB_GAS_TOO_HIGH: { code: -32000, message: 'Total blob gas too high' },
  BLOB_GAS_PRICE_BELOW_CURRENT_BLOB_BASE_FEE: { code: -32009, message: 'blob gas price below current blob base fee' },
  TRANSACTION_NOT_FOUND: { code: -32000, message: 'Transaction not found' },

  // eth_simulateV1 (execution-apis codes; Besu's texts where it has them)
  SIMULATE_NONCE_TOO_LOW: { code: -38010, message: 'Nonce too low' },
  SIMULATE_NONCE_TOO_HIGH: { code: -38011, message: 'Nonce too high' },
  SIMULATE_BASE_FEE_TOO_LOW: { code: -38012, message: 'Gas price below current base fee' },
  SIMULATE_INTRINSIC_GAS: { code: -38013, message: 'Intrinsic gas exceeds gas limit' },
  SIMULATE_INSUFFICIENT_FUNDS: { code: -38014, message: 'Upfront cost exceeds account balance' },
  SIMULATE_BLOCK_GAS_LIMIT_EXCEEDED: { code: -38015, message: 'Block gas limit exceeded by the block\'s transactions' },
  SIMULATE_BLOCK_NUMBERS_NOT_ASCENDING: { code: -38020, message: 'Block numbers are not ascending' },
  SIMULATE_TIMESTAMPS_NOT_ASCENDING: { code: -38021, message: 'Timestamps are not ascending' },
  SIMULATE_PRECOMPILE_SELF_REFERENCE: { code: -38022, message: 'MovePrecompileToAddress referenced itself in replacement' },
  SIMULATE_PRECOMPILE_DUPLICATE: { code: -38023, message: 'Multiple MovePrecompileToAddress referencing the same address to replace' },
  SIMULATE_SENDER_NOT_EOA: { code: -38024, message: 'Sender is not an EOA' },
  SIMULATE_INIT_CODE_TOO_LARGE: { code: -38025, message: 'Max init code size exceeded' },
  SIMULATE_TOO_MANY_BLOCKS: { code: -38026, message: 'Too many block calls' },
  SIMULATE_VM_ERROR: { code: -32015, message: 'VM execution error' },

  // Block / state / resource
  BLOCK_NOT_FOUND: { code: -32000, message: 'Block not found' },
  UNKNOWN_BLOCK: { code: -39001, message: 'Unknown block' },
  WORLD_STATE_UNAVAILABLE: { code: -32000, message: 'World state unavailable' },
  FILTER_NOT_FOUND: { code: -32000, message: 'Filter not found' },
  LOGS_FILTER_NOT_FOUND: { code: -32000, message: 'Logs filter not found' },
  /** The log index is still reading blocks from the chain (a rebuild) and did not reach the head in time. */
  LOG_INDEX_BEHIND: { code: -32000, message: 'Log index is catching up with the chain' },
  SUBSCRIPTION_NOT_FOUND: { code: -32000, message: 'Subscription not found' },
  INVALID_INPUT: { code: -32000, message: 'Invalid input' },
  PARENT_BLOCK_NOT_FOUND: { code: -32000, message: 'Parent block not found' },

  // P2P / admin
  P2P_DISABLED: { code: -32000, message: 'P2P has been disabled. This functionality is not available' },
  P2P_NETWORK_NOT_RUNNING: { code: -32000, message: 'P2P network is not running' },
  CANT_CONNECT_TO_LOCAL_PEER: { code: -32100, message: 'Cannot add local node as peer.' },
  ENODE_ID_INVALID: {
    code: -32000,
    message: "Invalid node ID: node ID must have exactly 128 hexadecimal characters and should not include any '0x' hex prefix.",
  },
  DNS_NOT_ENABLED: { code: -32100, message: 'Enode DNS support is disabled' },
} as const satisfies Record<string, RpcErrorObject>;

export type RpcErrorName = keyof typeof RpcErrors;

/**
 * An error that a method handler throws to answer with a catalogued JSON-RPC error. It is turned into
 * a plain `{code, message, data?}` before it crosses a thread, so the class never needs to clone.
 */
export class RpcError extends Error {
  readonly code: number;
  readonly data?: string;

  constructor(def: RpcErrorObject, data?: string, detail?: string) {
    super(detail === undefined ? def.message : `${def.message} (${detail})`);
    this.code = def.code;
    if (data !== undefined) this.data = data;
  }

  toObject(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * More logs than `--rpc-max-logs-count` (Basalt's own limit: Besu has none). Code -32005 as for the
 * range limit; the wording is the one log-fetching tools already recognise to split a range.
 */
export function logsCountExceeded(limit: number): RpcErrorObject {
  return { code: -32005, message: `query returned more than ${limit} results` };
}

/** Maps anything a handler threw to the error object a client sees; unknown failures are -32603. */
export function toRpcErrorObject(err: unknown): RpcErrorObject {
  if (err instanceof RpcError) return err.toObject();
  return { code: RpcErrors.INTERNAL_ERROR.code, message: RpcErrors.INTERNAL_ERROR.message };
}
