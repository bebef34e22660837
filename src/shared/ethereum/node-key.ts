/**
 * Besu's node key file (qbft-and-p2p.md §9.4), read and written here only: `--node-private-key-file`,
 * `<data-path>/key` and the dev validator's `genesis/dev-validator.key`.
 *
 * Content: the 32-byte private key as 64 hex digits, `0x` optional, surrounded by any whitespace (a
 * trailing newline is fine). Basalt writes `0x` + 64 lowercase hex digits without a newline, as Besu.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A key file that is not in Besu's format; the message names the file but never its content. */
export class NodeKeyFileError extends Error {}

const KEY_FILE = /^(?:0[xX])?([0-9a-fA-F]{64})$/;

/**
 * The order of secp256k1's group: a private key is a number from 1 to n - 1. Checked here rather than
 * with @noble/secp256k1, which every thread would then load with the genesis (the dev network's key).
 */
const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The private key in a key file's text; `source` names the file in the error. */
export function parseNodeKey(text: string, source: string): Uint8Array {
  const match = KEY_FILE.exec(text.trim());
  if (match === null) {
    throw new NodeKeyFileError(`Private key cannot be loaded from file ${source}: expected 64 hex digits (0x optional) and nothing else`);
  }
  const key = Uint8Array.from(Buffer.from(match[1]!, 'hex'));
  const value = BigInt(`0x${match[1]!}`);
  if (value === 0n || value >= SECP256K1_ORDER) {
    throw new NodeKeyFileError(`Private key cannot be loaded from file ${source}: not a secp256k1 private key (zero, or not below the curve order)`);
  }
  return key;
}

/** Reads and parses a key file; a missing or unreadable file throws the file system's error. */
export function readNodeKeyFile(path: string | URL): Uint8Array {
  return parseNodeKey(readFileSync(path, 'utf8'), path instanceof URL ? fileURLToPath(path) : path);
}

/** A key file's content as Besu writes it. */
export function formatNodeKey(key: Uint8Array): string {
  return `0x${Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('hex')}`;
}
