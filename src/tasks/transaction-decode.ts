/**
 * Stateless validation of a raw transaction, as `eth_sendRawTransaction` and transaction gossip need it:
 * decode the pooled encoding, check everything that does not depend on chain state, and recover the
 * sender. Pure and thread-agnostic — it runs inside a piscina worker (see decode-task.ts).
 *
 * Checks run in Besu's admission order (rpc-auth-cli.md §12.1–12.2): undecodable → chain id → signature
 * → type allowed at the fork → EIP-7825 gas cap → initcode size → priority fee ≤ max fee → intrinsic gas.
 * To honour that order, the fields and the signing hash are taken from the RLP directly; the
 * ethereumjs transaction is only built once chain id, signature and type are known to be fine, for its
 * structural validation and intrinsic-gas arithmetic.
 */
import type { Common } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import {
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createBlob4844TxFromBytesArray,
  createEOACode7702TxFromBytesArray,
  createLegacyTxFromBytesArray,
} from '@ethereumjs/tx';
import { MAX_INTEGER, MAX_UINT64, SECP256K1_ORDER, SECP256K1_ORDER_DIV_2, bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { bytesToBigInt } from '../shared/util/bytes.js';
import { keccak256 as keccak_256 } from '../shared/ethereum/keccak.js';
import { encodeRlp } from '../shared/ethereum/rlp-encode.js';
import { sha256 } from '@noble/hashes/sha2.js';
import secp256k1 from 'secp256k1';

import { txCommonFor as commonFor } from '../shared/ethereum/tx-common.js';
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import type { AccessListEntry, AuthorizationEntry, DecodedTx, TxRules, TxType } from '../shared/ethereum/decoded-tx.js';

type RlpValue = Uint8Array | RlpValue[];


/** Where each field sits in the RLP list of a transaction type (signature fields are always the last three). */
interface Layout {
  length: number;
  chainId?: number;
  nonce: number;
  gasPrice?: number;
  maxPriorityFeePerGas?: number;
  maxFeePerGas?: number;
  gasLimit: number;
  to: number;
  value: number;
  data: number;
  accessList?: number;
  maxFeePerBlobGas?: number;
  blobVersionedHashes?: number;
  authorizationList?: number;
}

const LAYOUTS: Record<TxType, Layout> = {
  0: { length: 9, nonce: 0, gasPrice: 1, gasLimit: 2, to: 3, value: 4, data: 5 },
  1: { length: 11, chainId: 0, nonce: 1, gasPrice: 2, gasLimit: 3, to: 4, value: 5, data: 6, accessList: 7 },
  2: {
    length: 12,
    chainId: 0,
    nonce: 1,
    maxPriorityFeePerGas: 2,
    maxFeePerGas: 3,
    gasLimit: 4,
    to: 5,
    value: 6,
    data: 7,
    accessList: 8,
  },
  3: {
    length: 14,
    chainId: 0,
    nonce: 1,
    maxPriorityFeePerGas: 2,
    maxFeePerGas: 3,
    gasLimit: 4,
    to: 5,
    value: 6,
    data: 7,
    accessList: 8,
    maxFeePerBlobGas: 9,
    blobVersionedHashes: 10,
  },
  4: {
    length: 13,
    chainId: 0,
    nonce: 1,
    maxPriorityFeePerGas: 2,
    maxFeePerGas: 3,
    gasLimit: 4,
    to: 5,
    value: 6,
    data: 7,
    accessList: 8,
    authorizationList: 9,
  },
};

/** Rejections of malformed input all read `-32602 Invalid params`; the reason is kept for logs only. */
function undecodable(reason: string): RpcError {
  const err = new RpcError(RpcErrors.INVALID_PARAMS);
  err.cause = reason;
  return err;
}

/**
 * An RLP scalar as Besu reads it: a byte string without leading zeros, at most `maxBytes` long
 * (8 for nonce and gas — Java longs — and 32 for 256-bit quantities).
 */
function scalar(values: RlpValue[], index: number, name: string, maxBytes = 32): bigint {
  const item = values[index];
  if (!(item instanceof Uint8Array)) throw undecodable(`${name} is a list`);
  if (item.length > 0 && item[0] === 0) throw undecodable(`${name} has leading zeros`);
  if (item.length > maxBytes) throw undecodable(`${name} is longer than ${maxBytes} bytes`);
  return item.length === 0 ? 0n : bytesToBigInt(item);
}

function bytesAt(values: RlpValue[], index: number, name: string): Uint8Array {
  const item = values[index];
  if (!(item instanceof Uint8Array)) throw undecodable(`${name} is a list`);
  return item;
}

function listAt(values: RlpValue[], index: number, name: string): RlpValue[] {
  const item = values[index];
  if (!Array.isArray(item)) throw undecodable(`${name} is not a list`);
  return item;
}

function accessListAt(values: RlpValue[], index: number): AccessListEntry[] {
  return listAt(values, index, 'accessList').map((entry) => {
    if (!Array.isArray(entry) || entry.length !== 2) throw undecodable('access list entry is not [address, keys]');
    const [address, keys] = entry;
    if (!(address instanceof Uint8Array) || address.length !== 20) throw undecodable('access list address');
    if (!Array.isArray(keys)) throw undecodable('access list storage keys');
    const storageKeys = keys.map((key) => {
      if (!(key instanceof Uint8Array) || key.length !== 32) throw undecodable('access list storage key');
      return key;
    });
    return { address, storageKeys };
  });
}

function authorizationListAt(values: RlpValue[], index: number): AuthorizationEntry[] {
  return listAt(values, index, 'authorizationList').map((entry) => {
    if (!Array.isArray(entry) || entry.length !== 6) throw undecodable('authorization is not a 6-item list');
    const address = bytesAt(entry, 1, 'authorization address');
    if (address.length !== 20) throw undecodable('authorization address length');
    return {
      chainId: scalar(entry, 0, 'authorization chainId'),
      address,
      nonce: scalar(entry, 2, 'authorization nonce', 8),
      yParity: Number(scalar(entry, 3, 'authorization yParity', 1)),
      r: scalar(entry, 4, 'authorization r'),
      s: scalar(entry, 5, 'authorization s'),
    };
  });
}

/** A transaction's decoded fields before anything is checked against the chain rules. */
interface ParsedTx {
  type: TxType;
  values: RlpValue[];
  /** The list the hash and signing hash are computed over (the tx payload, without a blob wrapper). */
  hashedEncoding: Uint8Array;
  hasBlobWrapper: boolean;
  /**
   * The network wrapper's sidecar: its version (0: EIP-4844, one proof per blob; 1: EIP-7594, the
   * proofs of each blob's 128 cells), blobs, commitments and proofs.
   */
  sidecar?: { version: number; blobs: Uint8Array[]; commitments: Uint8Array[]; proofs: Uint8Array[] };
}

function parseEnvelope(raw: Uint8Array): ParsedTx {
  if (raw.length === 0) throw undecodable('empty input');
  const first = raw[0]!;
  let decoded: RlpValue;
  try {
    decoded = RLP.decode(first >= 0xc0 ? raw : raw.subarray(1)) as RlpValue;
  } catch (err) {
    throw undecodable(err instanceof Error ? err.message : 'bad RLP');
  }
  if (!Array.isArray(decoded)) throw undecodable('transaction is not an RLP list');
  if (first >= 0xc0) return { type: 0, values: decoded, hashedEncoding: raw, hasBlobWrapper: false };
  if (first < 1 || first > 4) throw undecodable(`unknown transaction type ${first}`);
  const type = first as TxType;
  if (type !== 3) return { type, values: decoded, hashedEncoding: raw, hasBlobWrapper: false };
  // A blob transaction is pooled with its network wrapper: [tx, blobs, commitments, proofs] (version 0)
  // or [tx, version, blobs, commitments, cell proofs] (EIP-7594); the bare form is only valid inside
  // blocks, so Besu rejects it as undecodable here.
  if (!Array.isArray(decoded[0])) throw undecodable('blob transaction without network wrapper');
  if (decoded.length !== 4 && decoded.length !== 5) throw undecodable('blob network wrapper length');
  const body = decoded[0];
  const hashedEncoding = new Uint8Array([3, ...RLP.encode(body as Uint8Array[])]);
  const parts = decoded.length === 5 ? decoded.slice(2) : decoded.slice(1);
  // A version that is not a byte string reads as one no fork accepts.
  const version = decoded.length === 4 ? 0 : decoded[1] instanceof Uint8Array ? Number(bytesToBigInt(decoded[1])) : -1;
  if (!parts.every((part) => Array.isArray(part) && part.every((item) => item instanceof Uint8Array))) {
    throw undecodable('blob network wrapper parts');
  }
  const [blobs, commitments, proofs] = parts as Uint8Array[][];
  return { type, values: body, hashedEncoding, hasBlobWrapper: true, sidecar: { version, blobs: blobs!, commitments: commitments!, proofs: proofs! } };
}

function signingHash(parsed: ParsedTx, legacyChainId: bigint | undefined): Uint8Array {
  const unsigned = parsed.values.slice(0, -3) as Uint8Array[];
  if (parsed.type !== 0) return keccak_256(encodeRlp(unsigned, parsed.type));
  // EIP-155: the chain id and two empty items stand in for v, r, s.
  if (legacyChainId !== undefined) unsigned.push(bigIntToUnpaddedBytes(legacyChainId), new Uint8Array(), new Uint8Array());
  return keccak_256(encodeRlp(unsigned));
}

/** `r` and `s` as they came (at most 32 bytes each, checked in range), right-aligned in a 64-byte signature. */
function recoverPublicKey(hash: Uint8Array, r: Uint8Array, s: Uint8Array, recoveryId: number): Uint8Array {
  const signature = new Uint8Array(64);
  signature.set(r, 32 - r.length);
  signature.set(s, 64 - s.length);
  try {
    return secp256k1.ecdsaRecover(signature, recoveryId, hash, false).subarray(1);
  } catch {
    throw new RpcError(RpcErrors.INVALID_SIGNATURE);
  }
}

type BytesArrayOf<F extends (values: never, opts: never) => unknown> = Parameters<F>[0];

/** Builds the ethereumjs transaction for structural validation and intrinsic gas. */
function buildEthereumjsTx(type: TxType, values: RlpValue[], common: Common): { getMinimumGasLimit(): bigint } {
  const opts = { common };
  switch (type) {
    case 0:
      return createLegacyTxFromBytesArray(values as BytesArrayOf<typeof createLegacyTxFromBytesArray>, opts);
    case 1:
      return createAccessList2930TxFromBytesArray(
        values as BytesArrayOf<typeof createAccessList2930TxFromBytesArray>,
        opts,
      );
    case 2:
      return create1559FeeMarketTxFromBytesArray(values as BytesArrayOf<typeof create1559FeeMarketTxFromBytesArray>, opts);
    case 4:
      return createEOACode7702TxFromBytesArray(values as BytesArrayOf<typeof createEOACode7702TxFromBytesArray>, opts);
    case 3:
      return createBlob4844TxFromBytesArray(values as BytesArrayOf<typeof createBlob4844TxFromBytesArray>, opts);
  }
}

/**
 * The minimum gas limit of a transaction (intrinsic gas, and EIP-7623's calldata floor where active) as
 * the library computes it from a transaction it builds; throws `undecodable` where building fails.
 */
export function libraryMinimumGasLimit(type: TxType, values: RlpValue[], common: Common): bigint {
  try {
    return buildEthereumjsTx(type, values, common).getMinimumGasLimit();
  } catch (err) {
    throw undecodable(err instanceof Error ? err.message : 'invalid transaction fields');
  }
}

/** The fields of a decoded transaction that its minimum gas limit and the remaining checks read. */
export interface GasFields {
  type: TxType;
  nonce: bigint;
  gasLimit: bigint;
  /** gasPrice (legacy) or maxFeePerGas (EIP-1559). */
  feeCap: bigint;
  /** Empty for a contract creation. */
  to: Uint8Array;
  data: Uint8Array;
  accessList: AccessListEntry[] | undefined;
}

/**
 * The forks whose rules `minimumGasLimit` restates for legacy and EIP-1559 transactions: later forks
 * bring EIPs that price a transaction otherwise (EIP-2780's recipient and value costs, EIP-7976's
 * calldata, EIP-7981's access lists, EIP-8037's authorizations), so there the library decides.
 */
const RESTATED_FORKS = new Set([
  'chainstart', 'homestead', 'dao', 'tangerineWhistle', 'spuriousDragon', 'byzantium', 'constantinople', 'petersburg',
  'istanbul', 'muirGlacier', 'berlin', 'london', 'arrowGlacier', 'grayGlacier', 'mergeNetsplitBlock', 'paris',
  'shanghai', 'cancun', 'prague', 'osaka',
]);

/** A fork's prices of a transaction's parts, read from the library's parameters once per Common. */
interface GasPrices {
  base: bigint;
  /** Contract creation's surcharge (from Homestead; none before). */
  creation: bigint;
  zeroByte: bigint;
  nonZeroByte: bigint;
  /** EIP-3860, per 32-byte word of initcode. */
  initCodeWord: bigint | undefined;
  /** EIP-2930. */
  accessListAddress: bigint | undefined;
  accessListKey: bigint | undefined;
  /** EIP-7623, per calldata token. */
  floorPerToken: bigint | undefined;
}

const gasPricesByCommon = new WeakMap<Common, GasPrices>();

function gasPricesOf(common: Common): GasPrices {
  let prices = gasPricesByCommon.get(common);
  if (prices === undefined) {
    prices = {
      base: common.param('txGas'),
      creation: common.gteHardfork('homestead') ? common.param('txCreationGas') : 0n,
      zeroByte: common.param('txDataZeroGas'),
      nonZeroByte: common.param('txDataNonZeroGas'),
      initCodeWord: common.isActivatedEIP(3860) ? common.param('initCodeWordGas') : undefined,
      accessListAddress: common.isActivatedEIP(2930) ? common.param('accessListAddressGas') : undefined,
      accessListKey: common.isActivatedEIP(2930) ? common.param('accessListStorageKeyGas') : undefined,
      floorPerToken: common.isActivatedEIP(7623) ? common.param('totalCostFloorPerToken') : undefined,
    };
    gasPricesByCommon.set(common, prices);
  }
  return prices;
}

/**
 * What `libraryMinimumGasLimit` answers for a legacy or EIP-1559 transaction at a fork up to Osaka,
 * without building the library's transaction; `undefined` for other types and later forks. Building
 * it was ~20 of the decode thread's ~100 µs per transaction (the library converts every field again),
 * and its code, compiled anew by every decode thread, slowed a fresh node's first transactions most.
 * The fork's prices are the library's parameters; the formula is the library's (legacy.ts
 * getIntrinsicGas and getDataGas, eip2930.ts, intrinsic.ts getMinimumGasLimit), and so are the two
 * checks its construction makes that the decoder has not made before it: the nonce below 2⁶⁴ − 1
 * (EIP-2681) and the fee cap times the gas limit within 256 bits. A test holds both paths to the same
 * answers.
 */
export function minimumGasLimit(tx: GasFields, common: Common): bigint | undefined {
  if ((tx.type !== 0 && tx.type !== 2) || !RESTATED_FORKS.has(common.hardfork())) return undefined;
  if (tx.nonce >= MAX_UINT64) throw undecodable('nonce cannot equal or exceed 2^64-1');
  if (tx.feeCap * tx.gasLimit > MAX_INTEGER) throw undecodable('gas limit * fee cap cannot exceed 2^256-1');
  const prices = gasPricesOf(common);
  const { data } = tx;
  let nonZero = 0;
  for (let i = 0; i < data.length; i++) if (data[i] !== 0) nonZero++;
  const zero = data.length - nonZero;
  let gas = prices.base + BigInt(zero) * prices.zeroByte + BigInt(nonZero) * prices.nonZeroByte;
  if (tx.to.length === 0) {
    gas += prices.creation;
    if (prices.initCodeWord !== undefined) gas += prices.initCodeWord * BigInt(Math.ceil(data.length / 32));
  }
  if (tx.type === 2 && tx.accessList !== undefined && tx.accessList.length > 0) {
    let keys = 0;
    for (const entry of tx.accessList) keys += entry.storageKeys.length;
    gas += BigInt(tx.accessList.length) * prices.accessListAddress! + BigInt(keys) * prices.accessListKey!;
  }
  if (prices.floorPerToken === undefined) return gas;
  const floor = prices.base + prices.floorPerToken * BigInt(zero + 4 * nonZero);
  return floor > gas ? floor : gas;
}

/** Copies a view so that cloning it to another thread does not drag along its whole backing buffer. */
function compact(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

/**
 * Decodes and statelessly validates a pooled transaction encoding; throws `RpcError` with Besu's code
 * and message for the first failing check.
 */
export function decodeRawTransaction(raw: Uint8Array, rules: TxRules, kzg?: BlobVerifier): DecodedTx {
  const parsed = parseEnvelope(raw);
  const { type, values } = parsed;
  const layout = LAYOUTS[type];
  if (values.length !== layout.length) throw undecodable(`type ${type} needs ${layout.length} fields`);

  // Shape of every field, as Besu's decoder enforces it.
  const nonce = scalar(values, layout.nonce, 'nonce', 8);
  const gasLimit = scalar(values, layout.gasLimit, 'gasLimit', 8);
  const gasPrice = layout.gasPrice === undefined ? undefined : scalar(values, layout.gasPrice, 'gasPrice');
  const maxPriorityFeePerGas =
    layout.maxPriorityFeePerGas === undefined
      ? undefined
      : scalar(values, layout.maxPriorityFeePerGas, 'maxPriorityFeePerGas');
  const maxFeePerGas =
    layout.maxFeePerGas === undefined ? undefined : scalar(values, layout.maxFeePerGas, 'maxFeePerGas');
  const toBytes = bytesAt(values, layout.to, 'to');
  if (toBytes.length !== 0 && toBytes.length !== 20) throw undecodable('to is not an address');
  const value = scalar(values, layout.value, 'value');
  const data = bytesAt(values, layout.data, 'data');
  const accessList = layout.accessList === undefined ? undefined : accessListAt(values, layout.accessList);
  const authorizationList =
    layout.authorizationList === undefined ? undefined : authorizationListAt(values, layout.authorizationList);
  const maxFeePerBlobGas =
    layout.maxFeePerBlobGas === undefined ? undefined : scalar(values, layout.maxFeePerBlobGas, 'maxFeePerBlobGas');
  const blobVersionedHashes =
    layout.blobVersionedHashes === undefined ? undefined : listAt(values, layout.blobVersionedHashes, 'blobVersionedHashes');
  const v = scalar(values, layout.length - 3, 'v');
  const r = scalar(values, layout.length - 2, 'r');
  const s = scalar(values, layout.length - 1, 's');
  // Besu builds its signature object while decoding; out-of-range parts fail decoding, not validation.
  if (r === 0n || r >= SECP256K1_ORDER || s === 0n || s >= SECP256K1_ORDER) throw undecodable('r or s out of range');

  let chainId: bigint | undefined;
  let recoveryId: number;
  if (type === 0) {
    if (v === 27n || v === 28n) {
      recoveryId = Number(v - 27n);
    } else if (v >= 37n) {
      chainId = (v - 35n) >> 1n;
      recoveryId = Number(v - 35n - chainId * 2n);
    } else {
      throw undecodable(`unsupported legacy v ${v}`);
    }
  } else {
    chainId = scalar(values, layout.chainId!, 'chainId');
    if (v > 1n) throw undecodable('y-parity is not 0 or 1');
    recoveryId = Number(v);
  }

  if (chainId !== undefined && chainId !== rules.chainId) throw new RpcError(RpcErrors.WRONG_CHAIN_ID);

  if (s > SECP256K1_ORDER_DIV_2) throw new RpcError(RpcErrors.INVALID_SIGNATURE);
  const senderPublicKey = recoverPublicKey(signingHash(parsed, type === 0 ? chainId : undefined), values[layout.length - 2] as Uint8Array, values[layout.length - 1] as Uint8Array, recoveryId);
  const sender = keccak_256(senderPublicKey).slice(12);

  if (!rules.allowedTypes.includes(type)) throw new RpcError(RpcErrors.INVALID_TRANSACTION_TYPE);
  if (authorizationList !== undefined) checkAuthorizations(authorizationList);
  const common = commonFor(rules.chainId, rules.hardfork);
  if (parsed.sidecar) verifyBlobSidecar(parsed.sidecar, blobVersionedHashes ?? [], common.isActivatedEIP(7594) ? 1 : 0, kzg);

  if (common.isActivatedEIP(7825) && gasLimit > common.param('maxTransactionGasLimit')) {
    throw new RpcError(RpcErrors.TX_GAS_LIMIT_CAP_EXCEEDED);
  }
  if (toBytes.length === 0 && common.isActivatedEIP(3860) && BigInt(data.length) > common.param('maxInitCodeSize')) {
    // Besu has no RPC mapping for INITCODE_TOO_LARGE, so it surfaces as a plain internal error.
    throw new RpcError(RpcErrors.INTERNAL_ERROR);
  }
  if (maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined && maxPriorityFeePerGas > maxFeePerGas) {
    throw new RpcError(RpcErrors.MAX_PRIORITY_FEE_PER_GAS_EXCEEDS_MAX_FEE_PER_GAS);
  }

  const intrinsicGas =
    minimumGasLimit({ type, nonce, gasLimit, feeCap: gasPrice ?? maxFeePerGas!, to: toBytes, data, accessList }, common) ??
    libraryMinimumGasLimit(type, values, common);
  if (gasLimit < intrinsicGas) throw new RpcError(RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT);

  const decoded: DecodedTx = {
    hash: keccak_256(parsed.hashedEncoding),
    raw,
    type,
    nonce,
    gasLimit,
    value,
    data,
    v,
    r,
    s,
    yParity: recoveryId === 1 ? 1 : 0,
    sender,
    senderPublicKey: senderPublicKey.slice(),
    intrinsicGas,
  };
  if (chainId !== undefined) decoded.chainId = chainId;
  if (gasPrice !== undefined) decoded.gasPrice = gasPrice;
  if (maxPriorityFeePerGas !== undefined) decoded.maxPriorityFeePerGas = maxPriorityFeePerGas;
  if (maxFeePerGas !== undefined) decoded.maxFeePerGas = maxFeePerGas;
  if (toBytes.length === 20) decoded.to = toBytes;
  if (accessList !== undefined) decoded.accessList = accessList;
  if (authorizationList !== undefined) decoded.authorizationList = authorizationList;
  if (maxFeePerBlobGas !== undefined) decoded.maxFeePerBlobGas = maxFeePerBlobGas;
  // Bytes: building the ethereumjs transaction above checked each hash (32 bytes, KZG version).
  if (blobVersionedHashes !== undefined) decoded.blobVersionedHashes = blobVersionedHashes as Uint8Array[];
  if (parsed.hasBlobWrapper) decoded.canonical = parsed.hashedEncoding;
  // Either way the encoding is copied at most once, into a buffer no larger than the transaction's.
  if (type !== 3) return withOneBuffer(decoded);
  decoded.raw = compact(raw);
  return decoded;
}

/**
 * The transaction with its byte strings (encoding, hash, recipient, calldata, sender, public key)
 * copied into one buffer, each a view of it. A decoded transaction reaches the pool thread by
 * structured clone, which gives each typed array with a buffer of its own a new ArrayBuffer there,
 * each with its own off-heap allocation and the bookkeeping V8 keeps for it: six per pooled
 * transaction, more memory than its bytes. Views of one buffer cross as one buffer. Blob transactions
 * keep their arrays: their canonical form is a view of the encoding already, and a copy of the
 * encoding would copy the blobs.
 */
function withOneBuffer(tx: DecodedTx): DecodedTx {
  const { raw, hash, data, sender, senderPublicKey, to } = tx;
  const buffer = new Uint8Array(raw.length + hash.length + data.length + sender.length + senderPublicKey.length + (to?.length ?? 0));
  let offset = 0;
  const place = (bytes: Uint8Array): Uint8Array => {
    buffer.set(bytes, offset);
    offset += bytes.length;
    return buffer.subarray(offset - bytes.length, offset);
  };
  tx.raw = place(raw);
  tx.hash = place(hash);
  tx.data = place(data);
  tx.sender = place(sender);
  tx.senderPublicKey = place(senderPublicKey);
  if (to !== undefined) tx.to = place(to);
  return tx;
}

/**
 * Besu's pool checks of an EIP-7702 authorization list: it must not be empty (Besu's
 * EMPTY_CODE_DELEGATION, which its RPC layer has no code for: an internal error), and each signature
 * must be canonical (s at most half the curve order, y-parity 0 or 1: INVALID_SIGNATURE). Whether an
 * authority's signature recovers, and its nonce and chain id, are checked at execution, where a bad
 * authorization is skipped rather than failing the transaction.
 */
function checkAuthorizations(list: AuthorizationEntry[]): void {
  if (list.length === 0) throw new RpcError(RpcErrors.INTERNAL_ERROR);
  for (const authorization of list) {
    if (authorization.s > SECP256K1_ORDER_DIV_2 || authorization.yParity > 1) throw new RpcError(RpcErrors.INVALID_SIGNATURE);
  }
}

/** The part of a KZG library the pool needs: checking blobs against their commitments and proofs. */
export interface BlobVerifier {
  verifyBlobProofBatch(blobs: string[], commitments: string[], proofs: string[]): boolean;
  /** EIP-7594: the 128 cells of a blob's extension, whose proofs a version 1 wrapper carries. */
  computeCells(blob: string): string[];
  verifyCellKzgProofBatch(commitments: string[], cellIndices: number[], cells: string[], proofs: string[]): boolean;
}

/** Cells per extended blob (EIP-7594). */
const CELLS_PER_BLOB = 128;

/**
 * A pooled blob transaction carries its blobs: each must match its versioned hash (0x01 ‖ sha256 of
 * the commitment, minus its first byte) and its proofs. The wrapper version must be the one the fork
 * takes, as in Besu: version 0 (a KZG proof per blob) before Osaka, version 1 (EIP-7594: a proof per
 * cell of the extended blob) from Osaka on; the other is refused like a blob that fails its proof.
 * Without a KZG library nothing is admitted.
 */
function verifyBlobSidecar(sidecar: NonNullable<ParsedTx['sidecar']>, versionedHashes: RlpValue[], acceptedVersion: number, kzg: BlobVerifier | undefined): void {
  const { version, blobs, commitments, proofs } = sidecar;
  const fail = () => new RpcError(RpcErrors.BLOB_KZG_VALIDATION_FAILED);
  if (version !== acceptedVersion || kzg === undefined) throw fail();
  const count = versionedHashes.length;
  const proofsPerBlob = version === 1 ? CELLS_PER_BLOB : 1;
  if (count === 0 || blobs.length !== count || commitments.length !== count || proofs.length !== count * proofsPerBlob) throw fail();
  for (let i = 0; i < count; i++) {
    const hash = versionedHashes[i] as Uint8Array;
    const expected = sha256(commitments[i]!);
    expected[0] = 0x01;
    if (!(hash instanceof Uint8Array) || Buffer.compare(Buffer.from(hash), Buffer.from(expected)) !== 0) throw fail();
  }
  const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
  let valid: boolean;
  try {
    if (version === 0) {
      valid = kzg.verifyBlobProofBatch(blobs.map(hex), commitments.map(hex), proofs.map(hex));
    } else {
      // Every cell of every blob, with its blob's commitment and its index within the blob.
      const cells = blobs.flatMap((blob) => kzg.computeCells(hex(blob)));
      const cellCommitments = commitments.flatMap((commitment) => Array<string>(CELLS_PER_BLOB).fill(hex(commitment)));
      const indices = blobs.flatMap(() => Array.from({ length: CELLS_PER_BLOB }, (_, i) => i));
      valid = kzg.verifyCellKzgProofBatch(cellCommitments, indices, cells, proofs.map(hex));
    }
  } catch {
    // kzg-wasm throws on malformed input (a blob of the wrong size, a point not on the curve).
    valid = false;
  }
  if (!valid) throw fail();
}
