/**
 * What a data path holds, laid out as Besu lays out its own (qbft-and-p2p.md §9.4), so that Besu's guides,
 * scripts and backup habits find each thing where they look for it:
 *
 *   <data-path>/database   the RocksDB database (opened by the chain actor only)
 *   <data-path>/log-index  the log index's own RocksDB database (opened by the log index actor only;
 *                          derived from the chain, rebuilt when removed)
 *   <data-path>/key        the node key, created with mode 0600 on first start when absent
 *   <data-path>/key.pub    its public key (the node id), rewritten whenever it does not match the key
 *
 * The main thread (keys), the chain thread (database) and the log index need these names; this is their one home.
 */
import { join } from 'node:path';

export const DATABASE_FOLDER = 'database';
export const LOG_INDEX_FOLDER = 'log-index';
export const NODE_KEY_FILE = 'key';
export const PUBLIC_KEY_FILE = 'key.pub';

export function databasePath(dataPath: string): string {
  return join(dataPath, DATABASE_FOLDER);
}

export function logIndexPath(dataPath: string): string {
  return join(dataPath, LOG_INDEX_FOLDER);
}

export function nodeKeyPath(dataPath: string): string {
  return join(dataPath, NODE_KEY_FILE);
}

export function publicKeyPath(dataPath: string): string {
  return join(dataPath, PUBLIC_KEY_FILE);
}
