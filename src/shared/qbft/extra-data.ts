/**
 * QBFT header extraData codec (qbft-and-p2p.md §2.1–2.3).
 *
 * extraData = RLP([vanity, validators, vote, round, seals]). Decoding follows Besu's strict rules so
 * that a header Besu rejects is rejected here too; encoding is canonical, and the hash variants are
 * always computed from the re-encoded structure, never from the received bytes.
 */
import { RLP } from '@ethereumjs/rlp';
import type { NestedUint8Array } from '@ethereumjs/rlp';

export interface BftVote {
  /** 20-byte address the vote is about. */
  recipient: Uint8Array;
  /** true = vote to add the recipient, false = vote to drop it. */
  add: boolean;
}

export interface BftExtraData {
  vanity: Uint8Array;
  /** 20-byte validator addresses, in the order they appear in the header. */
  validators: Uint8Array[];
  vote?: BftVote;
  /** The round the block was proposed/committed in (a signed 32-bit value, as Besu reads it). */
  round: number;
  /** 65-byte commit seals r||s||v. */
  seals: Uint8Array[];
}

/** Thrown for any extraData that Besu would refuse to decode. */
export class BftExtraDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BftExtraDataError';
  }
}

const ADDRESS_LENGTH = 20;
const SEAL_LENGTH = 65;
const VANITY_LENGTH = 32;
const VOTE_ADD = 0xff;
const VOTE_DROP_LEGACY = 0x00;
/** secp256k1 group order. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const EMPTY = new Uint8Array(0);

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/**
 * Round as Besu writes it: minimal big-endian scalar. A negative round (only reachable by decoding
 * a 4-byte value with the top bit set) is widened to a 64-bit two's-complement value, which is what
 * Besu's int-to-long scalar writer produces.
 */
function encodeRound(round: number): Uint8Array {
  if (!Number.isInteger(round) || round < -0x80000000 || round > 0x7fffffff) {
    throw new RangeError(`QBFT round must be a 32-bit integer, got ${round}`);
  }
  let value = round >= 0 ? BigInt(round) : BigInt.asUintN(64, BigInt(round));
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn));
    value >>= 8n;
  }
  return Uint8Array.from(bytes);
}

function encodeVote(vote: BftVote | undefined): NestedUint8Array {
  if (vote === undefined) return [];
  return [vote.recipient, vote.add ? Uint8Array.of(VOTE_ADD) : EMPTY];
}

function encodeParts(d: BftExtraData, round: number, seals: Uint8Array[]): Uint8Array {
  for (const validator of d.validators) {
    if (validator.length !== ADDRESS_LENGTH) {
      throw new RangeError(`validator address must be 20 bytes, got ${validator.length}`);
    }
  }
  if (d.vote !== undefined && d.vote.recipient.length !== ADDRESS_LENGTH) {
    throw new RangeError(`vote recipient must be 20 bytes, got ${d.vote.recipient.length}`);
  }
  return RLP.encode([d.vanity, d.validators, encodeVote(d.vote), encodeRound(round), seals]);
}

/** Full extraData as carried in a (possibly sealed) header. */
export function encodeExtraData(d: BftExtraData): Uint8Array {
  return encodeParts(d, d.round, d.seals);
}

/** extraData used for the block hash: round forced to 0, seals emptied (§2.5). */
export function encodeForOnChainHash(d: BftExtraData): Uint8Array {
  return encodeParts(d, 0, []);
}

/** extraData used for the committed-seal hash / proposal digest of `round`: seals emptied (§2.5). */
export function encodeForCommittedSealHash(d: BftExtraData, round: number): Uint8Array {
  return encodeParts(d, round, []);
}

/**
 * Genesis extraData: 32 zero bytes of vanity, the validators in the order given (Besu's tools do not
 * sort), no vote, round 0, no seals.
 */
export function genesisExtraData(validators: Uint8Array[]): Uint8Array {
  return encodeExtraData({ vanity: new Uint8Array(VANITY_LENGTH), validators, round: 0, seals: [] });
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

function expectBytes(item: Uint8Array | NestedUint8Array, what: string): Uint8Array {
  if (item instanceof Uint8Array) return item;
  throw new BftExtraDataError(`invalid QBFT extraData: ${what} must be a byte string, got a list`);
}

function expectList(item: Uint8Array | NestedUint8Array, what: string): NestedUint8Array {
  if (Array.isArray(item)) return item;
  throw new BftExtraDataError(`invalid QBFT extraData: ${what} must be a list, got a byte string`);
}

function expectAddress(item: Uint8Array | NestedUint8Array, what: string): Uint8Array {
  const bytes = expectBytes(item, what);
  if (bytes.length !== ADDRESS_LENGTH) {
    throw new BftExtraDataError(`invalid QBFT extraData: ${what} must be 20 bytes, got ${bytes.length}`);
  }
  return bytes;
}

function decodeVote(item: Uint8Array | NestedUint8Array): BftVote | undefined {
  const list = expectList(item, 'vote');
  if (list.length === 0) return undefined;
  if (list.length !== 2) {
    throw new BftExtraDataError(`invalid QBFT extraData: vote must have 2 items, got ${list.length}`);
  }
  const recipient = expectAddress(list[0], 'vote recipient');
  const type = expectBytes(list[1], 'vote type');
  if (type.length === 0) return { recipient, add: false };
  if (type.length === 1 && type[0] === VOTE_ADD) return { recipient, add: true };
  // A single 0x00 byte is Besu's legacy DROP: accepted on decode, never written.
  if (type.length === 1 && type[0] === VOTE_DROP_LEGACY) return { recipient, add: false };
  throw new BftExtraDataError(
    `invalid QBFT extraData: vote type must be 0xff (add) or empty (drop), got 0x${hex(type)}`,
  );
}

/** Besu's strict int scalar: at most 4 bytes, no leading zero byte, read as a signed 32-bit int. */
function decodeRound(item: Uint8Array | NestedUint8Array): number {
  const bytes = expectBytes(item, 'round');
  if (bytes.length > 4) {
    throw new BftExtraDataError(`invalid QBFT extraData: round scalar too long (${bytes.length} bytes, max 4)`);
  }
  if (bytes.length > 0 && bytes[0] === 0) {
    throw new BftExtraDataError(`invalid QBFT extraData: round scalar 0x${hex(bytes)} has leading zeros`);
  }
  let value = 0;
  for (const b of bytes) value = value * 256 + b;
  return value | 0;
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + hex(bytes));
}

/** Besu's signature decoder: 65 bytes, r and s in [1, n-1], v in {0, 1}. */
function decodeSeal(item: Uint8Array | NestedUint8Array, index: number): Uint8Array {
  const seal = expectBytes(item, `seal ${index}`);
  if (seal.length !== SEAL_LENGTH) {
    throw new BftExtraDataError(`invalid QBFT extraData: seal ${index} must be 65 bytes, got ${seal.length}`);
  }
  const r = bytesToBigInt(seal.subarray(0, 32));
  const s = bytesToBigInt(seal.subarray(32, 64));
  const v = seal[64];
  if (r < 1n || r >= SECP256K1_N) {
    throw new BftExtraDataError(`invalid QBFT extraData: seal ${index} has r outside [1, n-1]`);
  }
  if (s < 1n || s >= SECP256K1_N) {
    throw new BftExtraDataError(`invalid QBFT extraData: seal ${index} has s outside [1, n-1]`);
  }
  if (v !== 0 && v !== 1) {
    throw new BftExtraDataError(`invalid QBFT extraData: seal ${index} has recovery id ${v}, expected 0 or 1`);
  }
  return seal;
}

/** Decode header extraData; throws BftExtraDataError for anything Besu's decoder rejects. */
export function decodeExtraData(bytes: Uint8Array): BftExtraData {
  if (bytes.length === 0) {
    throw new BftExtraDataError('Invalid Bytes supplied - Bft Extra Data required.');
  }
  let decoded: Uint8Array | NestedUint8Array;
  try {
    decoded = RLP.decode(bytes);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new BftExtraDataError(`invalid QBFT extraData: malformed RLP (${reason})`);
  }
  const items = expectList(decoded, 'extraData');
  // Items after the seals are ignored, as Besu leaves the outer list leniently.
  if (items.length < 5) {
    throw new BftExtraDataError(`invalid QBFT extraData: expected 5 items, got ${items.length}`);
  }
  const vanity = expectBytes(items[0], 'vanity');
  const validators = expectList(items[1], 'validators').map((v, i) => expectAddress(v, `validator ${i}`));
  const vote = decodeVote(items[2]);
  const round = decodeRound(items[3]);
  const seals = expectList(items[4], 'seals').map((s, i) => decodeSeal(s, i));
  return vote === undefined ? { vanity, validators, round, seals } : { vanity, validators, vote, round, seals };
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
