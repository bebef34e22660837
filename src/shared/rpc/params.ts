/**
 * Parsers for JSON-RPC parameters, following Besu's (Jackson + Tuweni) acceptance rules.
 *
 * They run in the transport thread: each turns one raw JSON value into a structured-clone friendly
 * `Wire` value (bigint, Uint8Array, plain objects) or throws an `RpcError` carrying the method's
 * invalid-params variant, so malformed input never reaches an actor. All result shapes are type
 * aliases (not interfaces) so that they stay assignable to `Wire`.
 */
import { RpcError, RpcErrors } from './errors.js';
import type { RpcErrorObject } from './types.js';
import { PENDING_TX_FIELDS } from './pending-filter.js';
import type { PendingTxFilter } from './pending-filter.js';

// ---------------------------------------------------------------------------------------------
// Result types
// ---------------------------------------------------------------------------------------------

export type BlockTagName = 'earliest' | 'latest' | 'pending' | 'finalized' | 'safe';

/** A block named by tag or number (Besu `BlockParameter`). */
export type BlockTag = { kind: 'tag'; tag: BlockTagName } | { kind: 'number'; number: bigint };

/** A block named by hash (EIP-1898). `requireCanonical` defaults to false. */
export type BlockHashRef = { kind: 'hash'; hash: Uint8Array; requireCanonical: boolean };

/** A block named by tag, number or hash (Besu `BlockParameterOrBlockHash`). */
export type BlockRef = BlockTag | BlockHashRef;

export type AccessListEntry = { address: Uint8Array; storageKeys: Uint8Array[] };

/** A signed EIP-7702 authorization tuple. */
export type AuthorizationEntry = {
  chainId: bigint;
  address: Uint8Array;
  nonce: bigint;
  yParity: bigint;
  r: bigint;
  s: bigint;
};

/**
 * The call object of eth_call / eth_estimateGas (§3.1 "Call object fields"). Absent fields are
 * undefined; `to` absent means contract creation. `input` holds `input` or `data` (they must be
 * equal when both are given). `gasPrice` is dropped when 1559 fee fields are present.
 */
export type CallRequest = {
  from?: Uint8Array;
  to?: Uint8Array;
  gas?: bigint;
  gasPrice?: bigint;
  maxPriorityFeePerGas?: bigint;
  maxFeePerGas?: bigint;
  maxFeePerBlobGas?: bigint;
  value?: bigint;
  input?: Uint8Array;
  accessList?: AccessListEntry[];
  blobVersionedHashes?: Uint8Array[];
  nonce?: bigint;
  chainId?: bigint;
  authorizationList?: AuthorizationEntry[];
  /** Forces the balance check even without a gas price. */
  strict?: boolean;
};

/** One account of an eth_call/eth_estimateGas state override set. */
export type AccountOverride = {
  address: Uint8Array;
  balance?: bigint;
  nonce?: bigint;
  code?: Uint8Array;
  /** Replaces the whole storage: [slot, value] pairs, both 32-byte words. */
  state?: [slot: Uint8Array, value: Uint8Array][];
  /** Patches individual slots. */
  stateDiff?: [slot: Uint8Array, value: Uint8Array][];
  /** Present (possibly null) only when the request had the key. */
  movePrecompileToAddress?: Uint8Array | null;
};

// ---------------------------------------------------------------------------------------------
// Hex decoding
// ---------------------------------------------------------------------------------------------

const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[65 + i] = 10 + i;
  NIBBLE[97 + i] = 10 + i;
}

function nibbleAt(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? NIBBLE[code]! : -1;
}

function stripHexPrefix(text: string): string {
  return text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text;
}

/**
 * Decodes hex digits (no prefix) into a Uint8Array that owns its memory. Odd length is left-padded
 * with a zero nibble when `allowOdd`, rejected otherwise. Returns undefined on any non-hex character.
 */
function decodeHexDigits(digits: string, allowOdd: boolean): Uint8Array | undefined {
  if (digits.length % 2 === 1) {
    if (!allowOdd) return undefined;
    digits = '0' + digits;
  }
  // Node's decoder stops at the first invalid character, so a short result means bad input.
  const decoded = Buffer.from(digits, 'hex');
  if (decoded.length * 2 !== digits.length) return undefined;
  // Small Buffers are views into a shared 8 KiB pool that a structured clone would copy whole.
  const ownsMemory = decoded.byteOffset === 0 && decoded.buffer.byteLength === decoded.length;
  return ownsMemory ? new Uint8Array(decoded.buffer, 0, decoded.length) : new Uint8Array(decoded);
}

function leftPad(bytes: Uint8Array, size: number): Uint8Array {
  if (bytes.length === size) return bytes;
  const padded = new Uint8Array(size);
  padded.set(bytes, size - bytes.length);
  return padded;
}

function isHexDigits(digits: string): boolean {
  for (let i = 0; i < digits.length; i++) if (nibbleAt(digits, i) < 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Number decoding
// ---------------------------------------------------------------------------------------------

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const UINT256_MAX = 2n ** 256n - 1n;

const DIGITS_BY_RADIX: Record<8 | 10 | 16, RegExp> = {
  8: /^[0-7]+$/,
  10: /^[0-9]+$/,
  16: /^[0-9a-fA-F]+$/,
};

/**
 * Significant digits of the longest signed 64-bit magnitude (2^63) per radix. Longer numbers are out
 * of range whatever they say, and are refused before BigInt, whose parsing of a long string takes
 * time quadratic in its length (a 10 MB number would hold a transport thread for minutes).
 */
const MAX_LONG_DIGITS: Record<8 | 10 | 16, number> = { 8: 22, 10: 19, 16: 16 };

/**
 * Java `Long.decode`: optional sign, then `0x`/`0X`/`#` (hex), a leading `0` (octal) or decimal.
 * Returns undefined where Java throws NumberFormatException (bad digits, sign after the radix
 * prefix, out of the signed 64-bit range).
 */
export function javaLongDecode(text: string): bigint | undefined {
  let index = 0;
  let negative = false;
  if (text.startsWith('-')) {
    negative = true;
    index = 1;
  } else if (text.startsWith('+')) {
    index = 1;
  }
  let radix: 8 | 10 | 16 = 10;
  if (text.startsWith('0x', index) || text.startsWith('0X', index)) {
    radix = 16;
    index += 2;
  } else if (text.startsWith('#', index)) {
    radix = 16;
    index += 1;
  } else if (text.startsWith('0', index) && text.length > index + 1) {
    radix = 8;
    index += 1;
  }
  const digits = text.slice(index);
  if (!DIGITS_BY_RADIX[radix].test(digits)) return undefined;
  const significant = digits.replace(/^0+(?=.)/, '');
  if (significant.length > MAX_LONG_DIGITS[radix]) return undefined;
  const prefix = radix === 16 ? '0x' : radix === 8 ? '0o' : '';
  const magnitude = BigInt(prefix + significant);
  const value = negative ? -magnitude : magnitude;
  return value < LONG_MIN || value > LONG_MAX ? undefined : value;
}

function fail(def: RpcErrorObject): never {
  throw new RpcError(def);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Scalar parsers
// ---------------------------------------------------------------------------------------------

const BLOCK_TAGS: ReadonlySet<string> = new Set(['earliest', 'latest', 'pending', 'finalized', 'safe']);

/**
 * A block tag or number (Besu `BlockParameter`). Tags are case-insensitive; numbers follow Java
 * `Long.decode` (`0x10`, `16`, `#10`, `020` octal); a JSON integer is read as its decimal text.
 * Malformed input fails with `err`; a negative number always fails with "Invalid block number params".
 */
export function parseBlockTag(raw: unknown, err: RpcErrorObject = RpcErrors.INVALID_BLOCK_NUMBER_PARAMS): BlockTag {
  let text: string;
  if (typeof raw === 'string') {
    const lower = raw.toLowerCase();
    if (BLOCK_TAGS.has(lower)) return { kind: 'tag', tag: lower as BlockTagName };
    text = raw;
  } else if (typeof raw === 'number' && Number.isSafeInteger(raw)) {
    text = String(raw);
  } else {
    return fail(err);
  }
  const number = javaLongDecode(text);
  if (number === undefined) return fail(err);
  if (number < 0n) return fail(RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
  return { kind: 'number', number };
}

const HASH_STRING = /^0x[0-9a-fA-F]{64}$/;

/**
 * A block tag, number or hash (Besu `BlockParameterOrBlockHash`): a `0x` + 64 hex string is a hash
 * (requireCanonical false); an EIP-1898 object `{blockHash, requireCanonical?}` or `{blockNumber}`;
 * anything else is parsed as by {@link parseBlockTag}. Missing, null or malformed input fails with
 * `err` (default "Invalid block param (block not found)").
 */
export function parseBlockRef(raw: unknown, err: RpcErrorObject = RpcErrors.INVALID_BLOCK_PARAMS): BlockRef {
  if (typeof raw === 'string' && HASH_STRING.test(raw)) {
    return { kind: 'hash', hash: decodeHexDigits(raw.slice(2), false)!, requireCanonical: false };
  }
  if (isPlainObject(raw)) {
    const hasHash = raw.blockHash !== undefined && raw.blockHash !== null;
    const hasNumber = raw.blockNumber !== undefined && raw.blockNumber !== null;
    if (hasHash === hasNumber) return fail(err);
    if (hasNumber) return parseBlockTag(raw.blockNumber, err);
    const requireCanonical = raw.requireCanonical ?? false;
    if (typeof requireCanonical !== 'boolean') return fail(err);
    return { kind: 'hash', hash: parseHash(raw.blockHash, err), requireCanonical };
  }
  return parseBlockTag(raw, err);
}

/**
 * An address, parsed leniently like Tuweni `fromHexStringLenient(str, 20)`: `0x` optional, odd
 * length and shorter values left-padded with zeros. More than 20 bytes fails.
 */
export function parseAddress(raw: unknown, err: RpcErrorObject = RpcErrors.INVALID_ADDRESS_PARAMS): Uint8Array {
  if (typeof raw !== 'string') return fail(err);
  const digits = stripHexPrefix(raw);
  // More than 20 bytes fails anyway: a giant string is refused without decoding it.
  if (digits.length > 40) return fail(err);
  const bytes = decodeHexDigits(digits, true);
  if (bytes === undefined) return fail(err);
  return leftPad(bytes, 20);
}

/** A 32-byte hash: exactly 64 hex digits, `0x` optional. */
export function parseHash(raw: unknown, err: RpcErrorObject): Uint8Array {
  if (typeof raw !== 'string') return fail(err);
  const digits = stripHexPrefix(raw);
  if (digits.length !== 64) return fail(err);
  return decodeHexDigits(digits, false) ?? fail(err);
}

/**
 * A 256-bit unsigned quantity parsed like Tuweni `UInt256.fromHexString` (used by Besu for `Wei`
 * and slot positions): `0x` optional, leading zeros allowed, at most 32 bytes, `0x` alone is zero.
 */
export function parseQuantity(raw: unknown, err: RpcErrorObject): bigint {
  if (typeof raw !== 'string') return fail(err);
  const digits = stripHexPrefix(raw);
  if (!isHexDigits(digits)) return fail(err);
  const significant = digits.replace(/^0+/, '');
  if (significant.length > 64) return fail(err);
  return significant.length === 0 ? 0n : BigInt('0x' + significant);
}

/**
 * A non-negative 64-bit value parsed like Besu `UnsignedLongParameter` (Java `Long.decode`, so
 * `0x5208` and `21000` both work); a non-negative JSON integer is accepted as is.
 */
export function parseUnsignedLong(raw: unknown, err: RpcErrorObject): bigint {
  let value: bigint | undefined;
  if (typeof raw === 'string') value = javaLongDecode(raw);
  else if (typeof raw === 'number' && Number.isSafeInteger(raw)) value = BigInt(raw);
  if (value === undefined || value < 0n) return fail(err);
  return value;
}

/** Byte data parsed like Tuweni `Bytes.fromHexString`: `0x` optional, even length. */
export function parseData(raw: unknown, err: RpcErrorObject): Uint8Array {
  if (typeof raw !== 'string') return fail(err);
  return decodeHexDigits(stripHexPrefix(raw), false) ?? fail(err);
}

/**
 * A boolean as Jackson coerces it: JSON true/false, or the strings "true"/"false" in the three
 * cases Jackson accepts ("true", "True", "TRUE").
 */
export function parseBoolean(raw: unknown, err: RpcErrorObject): boolean {
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true' || raw === 'True' || raw === 'TRUE') return true;
  if (raw === 'false' || raw === 'False' || raw === 'FALSE') return false;
  return fail(err);
}

/**
 * web3_sha3 input: `""` or a `0x`-prefixed hex string; odd length is left-padded (Tuweni lenient).
 * Anything else is "Invalid data params".
 */
export function parseSha3Input(raw: unknown): Uint8Array {
  const err = RpcErrors.INVALID_DATA_PARAMS;
  if (typeof raw !== 'string') return fail(err);
  if (raw === '') return new Uint8Array(0);
  if (!raw.startsWith('0x')) return fail(err);
  return decodeHexDigits(raw.slice(2), true) ?? fail(err);
}

/**
 * The raw transaction of eth_sendRawTransaction as bytes. A non-string is "Invalid transaction params
 * (missing or incorrect)"; undecodable hex is "Invalid params" (as an undecodable RLP is, later, in
 * the pool).
 */
export function parseRawTransaction(raw: unknown): Uint8Array {
  if (typeof raw !== 'string') return fail(RpcErrors.INVALID_TRANSACTION_PARAMS);
  return decodeHexDigits(stripHexPrefix(raw), false) ?? fail(RpcErrors.INVALID_PARAMS);
}

// ---------------------------------------------------------------------------------------------
// Call object and state overrides
// ---------------------------------------------------------------------------------------------

/** Reads an optional member: absent and null are both "not given". */
function optional<T>(object: Record<string, unknown>, key: string, parse: (raw: unknown) => T): T | undefined {
  const raw = object[key];
  return raw === undefined || raw === null ? undefined : parse(raw);
}

function parseArray<T>(raw: unknown, err: RpcErrorObject, parseItem: (item: unknown) => T): T[] {
  if (!Array.isArray(raw)) return fail(err);
  return raw.map(parseItem);
}

function parseAccessList(raw: unknown, err: RpcErrorObject): AccessListEntry[] {
  return parseArray(raw, err, (entry) => {
    if (!isPlainObject(entry)) return fail(err);
    return {
      address: parseAddress(entry.address, err),
      storageKeys: optional(entry, 'storageKeys', (keys) => parseArray(keys, err, (key) => parseHash(key, err))) ?? [],
    };
  });
}

function parseAuthorizationList(raw: unknown, err: RpcErrorObject): AuthorizationEntry[] {
  return parseArray(raw, err, (entry) => {
    if (!isPlainObject(entry)) return fail(err);
    return {
      chainId: parseQuantity(entry.chainId, err),
      address: parseAddress(entry.address, err),
      nonce: parseUnsignedLong(entry.nonce, err),
      yParity: parseQuantity(entry.yParity, err),
      r: parseQuantity(entry.r, err),
      s: parseQuantity(entry.s, err),
    };
  });
}

/**
 * The eth_call / eth_estimateGas call object. Unknown members are ignored; `data` and `input` may
 * both be given only when equal; `gasPrice` is ignored when `maxFeePerGas` or
 * `maxPriorityFeePerGas` is present. Every failure is `err` (default "Invalid call params").
 */
export function parseCallRequest(raw: unknown, err: RpcErrorObject = RpcErrors.INVALID_CALL_PARAMS): CallRequest {
  if (!isPlainObject(raw)) return fail(err);
  const quantity = (value: unknown) => parseQuantity(value, err);
  const unsignedLong = (value: unknown) => parseUnsignedLong(value, err);
  const address = (value: unknown) => parseAddress(value, err);

  const data = optional(raw, 'data', (value) => parseData(value, err));
  const input = optional(raw, 'input', (value) => parseData(value, err));
  if (data !== undefined && input !== undefined && !bytesEqual(data, input)) return fail(err);

  const maxPriorityFeePerGas = optional(raw, 'maxPriorityFeePerGas', quantity);
  const maxFeePerGas = optional(raw, 'maxFeePerGas', quantity);
  const gasPrice = optional(raw, 'gasPrice', quantity);
  const strict = optional(raw, 'strict', (value) => parseBoolean(value, err));

  const call: CallRequest = {};
  const from = optional(raw, 'from', address);
  if (from !== undefined) call.from = from;
  const to = optional(raw, 'to', address);
  if (to !== undefined) call.to = to;
  const gas = optional(raw, 'gas', unsignedLong);
  if (gas !== undefined) call.gas = gas;
  if (gasPrice !== undefined && maxFeePerGas === undefined && maxPriorityFeePerGas === undefined) {
    call.gasPrice = gasPrice;
  }
  if (maxPriorityFeePerGas !== undefined) call.maxPriorityFeePerGas = maxPriorityFeePerGas;
  if (maxFeePerGas !== undefined) call.maxFeePerGas = maxFeePerGas;
  const maxFeePerBlobGas = optional(raw, 'maxFeePerBlobGas', quantity);
  if (maxFeePerBlobGas !== undefined) call.maxFeePerBlobGas = maxFeePerBlobGas;
  const value = optional(raw, 'value', quantity);
  if (value !== undefined) call.value = value;
  const payload = input ?? data;
  if (payload !== undefined) call.input = payload;
  const accessList = optional(raw, 'accessList', (list) => parseAccessList(list, err));
  if (accessList !== undefined) call.accessList = accessList;
  const blobVersionedHashes = optional(raw, 'blobVersionedHashes', (list) =>
    parseArray(list, err, (hash) => parseHash(hash, err)),
  );
  if (blobVersionedHashes !== undefined) call.blobVersionedHashes = blobVersionedHashes;
  const nonce = optional(raw, 'nonce', unsignedLong);
  if (nonce !== undefined) call.nonce = nonce;
  const chainId = optional(raw, 'chainId', quantity);
  if (chainId !== undefined) call.chainId = chainId;
  const authorizationList = optional(raw, 'authorizationList', (list) => parseAuthorizationList(list, err));
  if (authorizationList !== undefined) call.authorizationList = authorizationList;
  if (strict !== undefined) call.strict = strict;
  return call;
}

function parseStorageMap(raw: unknown, err: RpcErrorObject): [Uint8Array, Uint8Array][] {
  if (!isPlainObject(raw)) return fail(err);
  return Object.entries(raw).map(([slot, value]): [Uint8Array, Uint8Array] => [
    toWord(parseQuantity(slot, err)),
    toWord(parseQuantity(value, err)),
  ]);
}

function toWord(value: bigint): Uint8Array {
  return decodeHexDigits(value.toString(16).padStart(64, '0'), false)!;
}

/**
 * The optional state override set (third param of eth_call / eth_estimateGas): an object keyed by
 * address (lenient) with `balance`, `nonce`, `code`, `state` | `stateDiff`, `movePrecompileToAddress`.
 * Absent or null → undefined. Any malformed member fails with `err`.
 */
export function parseStateOverrides(
  raw: unknown,
  err: RpcErrorObject = RpcErrors.INVALID_CALL_PARAMS,
): AccountOverride[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isPlainObject(raw)) return fail(err);
  return Object.entries(raw).map(([addressText, overrideRaw]) => {
    if (!isPlainObject(overrideRaw)) return fail(err);
    const override: AccountOverride = { address: parseAddress(addressText, err) };
    const balance = optional(overrideRaw, 'balance', (value) => parseQuantity(value, err));
    if (balance !== undefined) override.balance = balance;
    const nonce = optional(overrideRaw, 'nonce', (value) => parseUnsignedLong(value, err));
    if (nonce !== undefined) override.nonce = nonce;
    const code = optional(overrideRaw, 'code', (value) => parseData(value, err));
    if (code !== undefined) override.code = code;
    const state = optional(overrideRaw, 'state', (value) => parseStorageMap(value, err));
    const stateDiff = optional(overrideRaw, 'stateDiff', (value) => parseStorageMap(value, err));
    if (state !== undefined && stateDiff !== undefined) return fail(err);
    if (state !== undefined) override.state = state;
    if (stateDiff !== undefined) override.stateDiff = stateDiff;
    if ('movePrecompileToAddress' in overrideRaw) {
      override.movePrecompileToAddress = optional(overrideRaw, 'movePrecompileToAddress', (value) =>
        parseAddress(value, err),
      ) ?? null;
    }
    return override;
  });
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Block indexes, log filters, fee history, proofs
// ---------------------------------------------------------------------------------------------

const INT_MAX = 2n ** 31n - 1n;

/**
 * A non-negative 32-bit index (Besu `UnsignedIntParameter`: `Integer.decode` of the string, so
 * `0x1`, `1` and `#1` work, `0x0L` and anything beyond 2^31-1 fail). A JSON integer is accepted.
 */
export function parseUnsignedInt(raw: unknown, err: RpcErrorObject): number {
  let value: bigint | undefined;
  if (typeof raw === 'string') value = javaLongDecode(raw);
  else if (typeof raw === 'number' && Number.isSafeInteger(raw)) value = BigInt(raw);
  if (value === undefined || value < 0n || value > INT_MAX) return fail(err);
  return Number(value);
}

/** One position of a log filter's topics: null matches anything, else any of the listed topics. */
/**
 * One topic position of a log filter: `null` (a bare null) constrains nothing, not even that the log
 * has a topic there; a list needs a topic there, one of the list's unless the list is empty (it held
 * only nulls, or nothing).
 */
export type TopicFilter = Uint8Array[] | null;

/** A log filter (eth_getLogs, eth_newFilter): by block range or by block hash. */
export type LogFilter = {
  fromBlock: BlockTag;
  toBlock: BlockTag;
  blockHash?: Uint8Array;
  /** Empty: any address. */
  addresses: Uint8Array[];
  topics: TopicFilter[];
};

function parseTopicPosition(raw: unknown, err: RpcErrorObject): TopicFilter {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') return [parseHash(raw, err)];
  if (!Array.isArray(raw)) return fail(err);
  // A null among the alternatives matches any topic; unlike a bare null position, a list still needs
  // the log to have a topic there (Besu's fixture eth_getLogs_failTopicPosition): `[]` says so.
  const topics = raw.filter((topic) => topic !== null).map((topic) => parseHash(topic, err));
  return topics.length < raw.length ? [] : topics;
}

/**
 * The filter object of eth_getLogs / eth_newFilter (spec §5): `fromBlock`/`toBlock` (default
 * `latest`), `address` (one or a list), `topics`, `blockHash` (alias `blockhash`), which excludes a
 * block range. Every failure is "Invalid filter params".
 */
export function parseLogFilter(raw: unknown): LogFilter {
  const err = RpcErrors.INVALID_FILTER_PARAMS;
  if (!isPlainObject(raw)) return fail(err);
  const blockHashRaw = raw.blockHash ?? raw.blockhash;
  const hasRange = (raw.fromBlock !== undefined && raw.fromBlock !== null) || (raw.toBlock !== undefined && raw.toBlock !== null);
  const latest: BlockTag = { kind: 'tag', tag: 'latest' };
  const filter: LogFilter = {
    fromBlock: raw.fromBlock === undefined || raw.fromBlock === null ? latest : parseBlockTag(raw.fromBlock, err),
    toBlock: raw.toBlock === undefined || raw.toBlock === null ? latest : parseBlockTag(raw.toBlock, err),
    addresses: [],
    topics: [],
  };
  if (blockHashRaw !== undefined && blockHashRaw !== null) {
    if (hasRange) return fail(err);
    filter.blockHash = parseHash(blockHashRaw, err);
  }
  const address = raw.address;
  if (typeof address === 'string') filter.addresses = [parseAddress(address, err)];
  else if (Array.isArray(address)) filter.addresses = address.map((entry) => parseAddress(entry, err));
  else if (address !== undefined && address !== null) return fail(err);
  const topics = raw.topics;
  if (typeof topics === 'string') filter.topics = [[parseHash(topics, err)]];
  else if (Array.isArray(topics)) filter.topics = topics.map((position) => parseTopicPosition(position, err));
  else if (topics !== undefined && topics !== null) return fail(err);
  return filter;
}

/**
 * A filter id: a quantity of at most 32 hex digits. Ids that cannot exist (too long, malformed)
 * are still accepted as ids, which Basalt then does not know (Besu answers "Filter not found").
 */
export function parseFilterId(raw: unknown): string {
  if (typeof raw !== 'string') return fail(RpcErrors.INVALID_FILTER_PARAMS);
  return raw.toLowerCase();
}

/** eth_feeHistory block count: a JSON integer or a number string (hex or decimal), 1..1024. */
export function parseBlockCount(raw: unknown): number {
  const err = RpcErrors.INVALID_BLOCK_COUNT_PARAMS;
  let value: bigint | undefined;
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) value = BigInt(raw);
  else if (typeof raw === 'string') value = javaLongDecode(raw);
  if (value === undefined || value < 1n || value > 1024n) return fail(err);
  return Number(value);
}

/** eth_feeHistory reward percentiles: at most 100 numbers in 0..100 (Besu does not require them sorted). */
export function parseRewardPercentiles(raw: unknown): number[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const err = RpcErrors.INVALID_REWARD_PERCENTILES_PARAMS;
  if (!Array.isArray(raw) || raw.length > 100) return fail(err);
  return raw.map((value) => (typeof value === 'number' && value >= 0 && value <= 100 ? value : fail(err)));
}

/** eth_getProof storage keys: a list of 32-byte words given as quantities (leading zeros optional). */
export function parseStorageKeys(raw: unknown): Uint8Array[] {
  const err = RpcErrors.INVALID_STORAGE_KEYS_PARAMS;
  if (!Array.isArray(raw)) return fail(err);
  return raw.map((key) => toWord(parseQuantity(key, err)));
}

/** An enode URL string (admin_addPeer / admin_removePeer); anything else is "Invalid enode params". */
export function parseEnode(raw: unknown): string {
  if (typeof raw !== 'string') return fail(RpcErrors.INVALID_ENODE_PARAMS);
  return raw;
}

/**
 * The filter object of txpool_besuPendingTransactions: `{"<field>": {"<operator>": "<value>"}}`,
 * one operator per field, operators case-insensitive; `from` takes only `eq`, `to` only `eq` or
 * `action`, and `action` only `to`. Every violation is Besu's -32602 "Invalid filter params".
 */
export function parsePendingTxFilters(raw: unknown): PendingTxFilter[] {
  if (raw === undefined || raw === null) return [];
  if (!isPlainObject(raw)) return fail(RpcErrors.INVALID_PENDING_TRANSACTIONS_PARAMS);
  const filters: PendingTxFilter[] = [];
  for (const field of PENDING_TX_FIELDS) {
    const spec = raw[field];
    if (spec === undefined || spec === null) continue;
    if (!isPlainObject(spec)) return fail(RpcErrors.INVALID_PENDING_TRANSACTIONS_PARAMS);
    const entries = Object.entries(spec);
    if (entries.length === 0) continue;
    if (entries.length > 1) return fail(RpcErrors.INVALID_FILTER_PARAMS); // Besu: Only one operator per filter type allowed
    const [name, value] = entries[0]!;
    const operator = name.toLowerCase();
    if (operator !== 'eq' && operator !== 'gt' && operator !== 'lt' && operator !== 'action') {
      return fail(RpcErrors.INVALID_FILTER_PARAMS); // Besu: Unknown field expected one of `eq`, `gt`, `lt`, `action`
    }
    if (field === 'from' && operator !== 'eq') {
      return fail(RpcErrors.INVALID_FILTER_PARAMS); // Besu: The `from` filter only supports the `eq` operator
    }
    if (field === 'to' && operator !== 'eq' && operator !== 'action') {
      return fail(RpcErrors.INVALID_FILTER_PARAMS); // Besu: The `to` filter only supports the `eq` or `action` operator
    }
    if (field !== 'to' && operator === 'action') {
      return fail(RpcErrors.INVALID_FILTER_PARAMS); // Besu: The operator `action` is only supported by the `to` filter
    }
    if (field === 'to' && operator === 'action') filters.push({ field, operator });
    else if (field === 'from' || field === 'to') filters.push({ field, operator: 'eq', address: parseAddress(value, RpcErrors.INVALID_FILTER_PARAMS) });
    else filters.push({ field, operator: operator as 'eq' | 'gt' | 'lt', quantity: parseFilterQuantity(value) });
  }
  return filters;
}

/** A filter value: `0x` hex or decimal digits (Besu decodes both). */
function parseFilterQuantity(raw: unknown): bigint {
  if (typeof raw === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(raw)) return BigInt(raw);
  if (typeof raw === 'string' && /^[0-9]{1,78}$/.test(raw)) return BigInt(raw);
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) return BigInt(raw);
  return fail(RpcErrors.INVALID_FILTER_PARAMS);
}
