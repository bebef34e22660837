/**
 * Logs as JSON-RPC results, with Besu's member order (spec rpc-auth-cli.md §4.4, §4.5). Apart from
 * format.ts so that the log index and the transports format logs without loading @ethereumjs/tx.
 */
import type { RawLog } from '../ethereum/chain-records.js';
import { toData, toQuantity } from './encoding.js';
import type { JsonObject } from './types.js';

/** Where a log sits: its transaction and block, and its index within the block. */
export interface LogLocation {
  blockHash: Uint8Array;
  blockNumber: bigint;
  blockTimestamp: bigint;
  txHash: Uint8Array;
  txIndex: number;
  /** Index of the log within the block. */
  logIndex: number;
  /** Only subscriptions on a re-org ever say true. */
  removed?: boolean;
}

/** A log inside a receipt (§4.4): address, topics, data, then the location members. */
export function formatReceiptLog(log: RawLog, loc: LogLocation): JsonObject {
  const [address, topics, data] = log;
  return {
    address: toData(address),
    topics: topics.map(toData),
    data: toData(data),
    blockNumber: toQuantity(loc.blockNumber),
    transactionHash: toData(loc.txHash),
    transactionIndex: toQuantity(loc.txIndex),
    blockHash: toData(loc.blockHash),
    blockTimestamp: toQuantity(loc.blockTimestamp),
    logIndex: toQuantity(loc.logIndex),
    removed: loc.removed ?? false,
  };
}

/** A log from eth_getLogs / filters / subscriptions (§4.5): a different member order. */
export function formatFilterLog(log: RawLog, loc: LogLocation): JsonObject {
  const [address, topics, data] = log;
  return {
    logIndex: toQuantity(loc.logIndex),
    removed: loc.removed ?? false,
    blockNumber: toQuantity(loc.blockNumber),
    blockHash: toData(loc.blockHash),
    blockTimestamp: toQuantity(loc.blockTimestamp),
    transactionHash: toData(loc.txHash),
    transactionIndex: toQuantity(loc.txIndex),
    address: toData(address),
    data: toData(data),
    topics: topics.map(toData),
  };
}
