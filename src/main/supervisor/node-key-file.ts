/**
 * The node key the options name, as Besu finds it (qbft-and-p2p.md §9.4): `--node-private-key-file`, which
 * must exist; otherwise `<data-path>/key`, created on first start when absent. The dev network, whose
 * genesis names one validator, runs with that validator's key unless a key file is given.
 *
 * Beside `<data-path>/key` Basalt keeps `<data-path>/key.pub`, the public key (the node id from which the
 * enode and the validator address derive) in the format `operator generate-blockchain-config` writes, so
 * an operator can read it without running anything.
 */
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync, writeFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { utils as secp256k1 } from '@noble/secp256k1';
import type { NodeOptions } from '../cli/options.js';
import { nodeIdOf } from '../../shared/ethereum/node-id.js';
import { loadDevNetwork } from '../../shared/ethereum/genesis.js';
import { formatNodeKey, NodeKeyFileError, readNodeKeyFile } from '../../shared/ethereum/node-key.js';
import { addressFromPublicKey } from '../../shared/qbft/seal.js';
import { nodeKeyPath, publicKeyPath } from '../../shared/util/data-path.js';
import { StartupError } from './network.js';

export type NodeKeyOptions = Pick<NodeOptions, 'dataPath' | 'genesisFile' | 'network' | 'nodePrivateKeyFile'>;

/** The node's private key; creates `<data-path>/key` (and the data path) when that is the key and it is absent. */
export function nodeKeyOf(options: NodeKeyOptions): Uint8Array {
  if (options.nodePrivateKeyFile !== undefined) {
    const path = options.nodePrivateKeyFile;
    if (!existsSync(path)) throw new StartupError(`Private key file doesn't exist: ${path}`);
    return readKeyFile(path);
  }
  if (!options.genesisFile && options.network?.toLowerCase() === 'dev') return loadDevNetwork().validatorKey;
  return dataPathKey(resolvePath(options.dataPath));
}

/** `0x` + the 128 hex digits of the node id, as in a `key.pub` file. */
export function formatPublicKey(nodeKey: Uint8Array): string {
  return `0x${Buffer.from(nodeIdOf(nodeKey)).toString('hex')}`;
}

/** `0x` + the 40 hex digits of the key's address: the validator address in a QBFT extraData. */
export function formatAddress(nodeKey: Uint8Array): string {
  return `0x${Buffer.from(addressFromPublicKey(nodeIdOf(nodeKey))).toString('hex')}`;
}

/** Creates `<path>` with `content`, mode 0600, unless it exists; false when it did. Never a half-written file. */
export function createPrivateFile(path: string, content: string): boolean {
  // Written whole under a temporary name, then linked into place: link() fails when the name exists, so a
  // key another process has just created is never replaced, and a crash never leaves a truncated key.
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(temporary);
  }
}

function dataPathKey(dataPath: string): Uint8Array {
  const path = nodeKeyPath(dataPath);
  mkdirSync(dataPath, { recursive: true });
  if (!existsSync(path)) createPrivateFile(path, formatNodeKey(secp256k1.randomSecretKey()));
  const key = readKeyFile(path);
  const publicKey = formatPublicKey(key);
  const pubPath = publicKeyPath(dataPath);
  if (!existsSync(pubPath) || readFileSync(pubPath, 'utf8').trim().toLowerCase() !== publicKey) writeFileSync(pubPath, publicKey);
  return key;
}

function readKeyFile(path: string): Uint8Array {
  try {
    return readNodeKeyFile(path);
  } catch (err) {
    throw err instanceof NodeKeyFileError ? new StartupError(err.message) : err;
  }
}
