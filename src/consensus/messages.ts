/**
 * The four QBFT messages of the `istanbul/100` sub-protocol: payloads, signed wrappers and
 * justifications (qbft-and-p2p.md §4.2–4.5, §12.1).
 *
 * Every payload travels signed: `[payload, signature]`, the signature over
 * `keccak(RLP([code, payload]))` with no prefix. Proposal and RoundChange changed shape in Besu 26.1
 * (a block-access-list slot, always `0x80` on QBFT chains): we send the current 4-item forms and
 * accept the ≤25.12 3-item forms too. A legacy Proposal is verified over its payload exactly as
 * received, since re-encoding it in the new form changes the signed hash.
 *
 * Decoding recovers every author, so a decoded message is always attributable; whether the author
 * may send it is for the state machine to decide.
 */
import { RLP } from '@ethereumjs/rlp';
import { encodeRlp } from '../shared/ethereum/rlp-encode.js';
import type { RlpInput } from '../shared/ethereum/rlp-encode.js';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { keccak_256 as nobleKeccak256 } from '@noble/hashes/sha3.js';

import { QbftBlock, QbftBlockError } from '../shared/qbft/block.js';
import { BftExtraDataError } from '../shared/qbft/extra-data.js';
import { recoverSealSigner, signHash } from '../shared/qbft/seal.js';

export const MessageCode = {
  PROPOSAL: 0x12,
  PREPARE: 0x13,
  COMMIT: 0x14,
  ROUND_CHANGE: 0x15,
} as const;
export type MessageCodeValue = (typeof MessageCode)[keyof typeof MessageCode];

export function isMessageCode(code: number): code is MessageCodeValue {
  return code >= MessageCode.PROPOSAL && code <= MessageCode.ROUND_CHANGE;
}

export interface PreparePayload {
  height: bigint;
  round: number;
  /** Committed-seal hash of the proposed block at `round`. */
  digest: Uint8Array;
}

export interface CommitPayload extends PreparePayload {
  /** 65-byte signature over `digest` (the commit seal that goes into the block). */
  commitSeal: Uint8Array;
}

export interface PreparedRoundMetadata {
  preparedRound: number;
  /** Committed-seal hash of the prepared block at `preparedRound`. */
  preparedBlockHash: Uint8Array;
}

export interface RoundChangePayload {
  height: bigint;
  /** The round the author wants to move to. */
  round: number;
  prepared?: PreparedRoundMetadata;
}

export interface ProposalPayload {
  height: bigint;
  round: number;
  block: QbftBlock;
}

/** A payload with its signature and the author recovered from it. */
export interface Signed<P> {
  readonly payload: P;
  readonly signature: Uint8Array;
  readonly author: Uint8Array;
  /** The payload's RLP values, embedded unchanged wherever the signed payload is re-sent. */
  readonly payloadValues: readonly RlpInput[];
}

interface MessageBase {
  /** The exact bytes of the message's devp2p data: what is gossiped and de-duplicated. */
  readonly data: Uint8Array;
}

export interface PrepareMessage extends MessageBase {
  readonly code: typeof MessageCode.PREPARE;
  readonly signed: Signed<PreparePayload>;
}

export interface CommitMessage extends MessageBase {
  readonly code: typeof MessageCode.COMMIT;
  readonly signed: Signed<CommitPayload>;
}

export interface RoundChangeMessage extends MessageBase {
  readonly code: typeof MessageCode.ROUND_CHANGE;
  readonly signed: Signed<RoundChangePayload>;
  /** The block of the author's latest prepared certificate, at its prepared round. */
  readonly preparedBlock?: QbftBlock;
  /** The prepares of that certificate. */
  readonly prepares: readonly Signed<PreparePayload>[];
  /** Received in the ≤25.12 form (no block-access-list slot). */
  readonly legacyForm: boolean;
}

export interface ProposalMessage extends MessageBase {
  readonly code: typeof MessageCode.PROPOSAL;
  readonly signed: Signed<ProposalPayload>;
  /** Round-change payloads that justify a proposal for round > 0. */
  readonly roundChanges: readonly Signed<RoundChangePayload>[];
  /** Prepares of the best prepared certificate among those round changes. */
  readonly prepares: readonly Signed<PreparePayload>[];
  /** Received in the ≤25.12 form (3-item payload, no block-access-list slot). */
  readonly legacyForm: boolean;
}

export type QbftMessage = PrepareMessage | CommitMessage | RoundChangeMessage | ProposalMessage;

/** Height, round and author of any message. */
export function messageHeight(message: QbftMessage): bigint {
  return message.signed.payload.height;
}
export function messageRound(message: QbftMessage): number {
  return message.signed.payload.round;
}
export function messageAuthor(message: QbftMessage): Uint8Array {
  return message.signed.author;
}

/** Thrown for message bytes Besu would fail to decode (the message is dropped). */
export class QbftMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QbftMessageError';
  }
}

// ---------------------------------------------------------------------------------------------
// Scalars (Besu's strict RLP scalars)
// ---------------------------------------------------------------------------------------------

const EMPTY = new Uint8Array(0);
const SIGNATURE_LENGTH = 65;
const HASH_LENGTH = 32;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;

function encodeScalar(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError(`scalar must not be negative, got ${value}`);
  if (value === 0n) return EMPTY;
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = '0' + hex;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** A round as Besu writes an int: a minimal scalar (rounds are never negative when we write them). */
function encodeRound(round: number): Uint8Array {
  if (!Number.isInteger(round) || round < 0 || round > 0x7fffffff) throw new RangeError(`round must be a non-negative 32-bit integer, got ${round}`);
  return encodeScalar(BigInt(round));
}

function expectBytes(item: Uint8Array | NestedUint8Array | undefined, what: string): Uint8Array {
  if (item instanceof Uint8Array) return item;
  throw new QbftMessageError(`${what} must be a byte string`);
}

function expectList(item: Uint8Array | NestedUint8Array | undefined, what: string, length?: number): NestedUint8Array {
  if (!Array.isArray(item)) throw new QbftMessageError(`${what} must be a list`);
  if (length !== undefined && item.length !== length) {
    throw new QbftMessageError(`${what} must have ${length} items, got ${item.length}`);
  }
  return item;
}

function decodeScalarBytes(item: Uint8Array | NestedUint8Array | undefined, what: string, maxBytes: number): Uint8Array {
  const bytes = expectBytes(item, what);
  if (bytes.length > maxBytes) throw new QbftMessageError(`${what} scalar longer than ${maxBytes} bytes`);
  if (bytes.length > 0 && bytes[0] === 0) throw new QbftMessageError(`${what} scalar has leading zeros`);
  return bytes;
}

/** A long scalar (heights): at most 8 bytes, read as unsigned. */
function decodeHeight(item: Uint8Array | NestedUint8Array | undefined): bigint {
  const bytes = decodeScalarBytes(item, 'height', 8);
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return value;
}

/** An int scalar (rounds): at most 4 bytes, read as a signed 32-bit value like Besu does. */
function decodeRound(item: Uint8Array | NestedUint8Array | undefined, what = 'round'): number {
  const bytes = decodeScalarBytes(item, what, 4);
  let value = 0;
  for (const b of bytes) value = value * 256 + b;
  return value | 0;
}

function decodeHash(item: Uint8Array | NestedUint8Array | undefined, what: string): Uint8Array {
  const bytes = expectBytes(item, what);
  if (bytes.length !== HASH_LENGTH) throw new QbftMessageError(`${what} must be 32 bytes, got ${bytes.length}`);
  return bytes;
}

function bigIntOf(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + Buffer.from(bytes).toString('hex'));
}

/**
 * Besu's signature decoding rules: 65 bytes, r and s in [1, n-1], v in {0, 1}; a message signature
 * with a high s is refused (`requireLowS` for the outer signature; commit seals are checked by the
 * extraData decoder rules instead).
 */
function decodeSignature(item: Uint8Array | NestedUint8Array | undefined, what: string, requireLowS: boolean): Uint8Array {
  const signature = expectBytes(item, what);
  if (signature.length !== SIGNATURE_LENGTH) {
    throw new QbftMessageError(`${what} must be 65 bytes, got ${signature.length}`);
  }
  const r = bigIntOf(signature.subarray(0, 32));
  const s = bigIntOf(signature.subarray(32, 64));
  if (r < 1n || r >= SECP256K1_N) throw new QbftMessageError(`${what} has r outside [1, n-1]`);
  if (s < 1n || s >= SECP256K1_N) throw new QbftMessageError(`${what} has s outside [1, n-1]`);
  if (requireLowS && s > HALF_N) throw new QbftMessageError(`${what} has a high s value`);
  if (signature[64] !== 0 && signature[64] !== 1) throw new QbftMessageError(`${what} has recovery id ${signature[64]}`);
  return signature;
}

// ---------------------------------------------------------------------------------------------
// Signed wrapper
// ---------------------------------------------------------------------------------------------

/** keccak(RLP([code, payload])) — what an author signs (§4.2). */
export function signedHash(code: MessageCodeValue, payloadValues: readonly RlpInput[]): Uint8Array {
  return payloadKeccak(encodeRlp([Uint8Array.of(code), payloadValues]));
}

/**
 * Most payloads are a few hundred bytes: noble's JavaScript keccak hashes them, as it does the block
 * hashes (qbft/block-hash.ts). A proposal carries its block: 300 kB for 2,500 transfers took noble
 * 10–23 ms, hash-wasm's WebAssembly (shared/ethereum/keccak.ts) 1–2 ms, once by the proposer and
 * once by each validator. The WebAssembly costs a thread ~1.3 MB, so it is loaded at the first
 * payload that large (noble hashes that one) and used for large ones from then on.
 */
const LARGE_PAYLOAD_BYTES = 16 * 1024;
let wasmKeccak256: ((data: Uint8Array) => Uint8Array) | undefined;
let wasmKeccakLoading: Promise<void> | undefined;

function payloadKeccak(data: Uint8Array): Uint8Array {
  if (data.length < LARGE_PAYLOAD_BYTES) return nobleKeccak256(data);
  if (wasmKeccak256) return wasmKeccak256(data);
  wasmKeccakLoading ??= import('../shared/ethereum/keccak.js').then(
    (module) => {
      wasmKeccak256 = module.keccak256;
    },
    () => undefined, // noble goes on hashing them
  );
  return nobleKeccak256(data);
}

/** Which keccak hashes large payloads now, and the loading of the WebAssembly one if it started (for tests). */
export function largePayloadKeccak(): { engine: 'noble' | 'wasm'; loading: Promise<void> | undefined } {
  return { engine: wasmKeccak256 ? 'wasm' : 'noble', loading: wasmKeccakLoading };
}

function sign<P>(code: MessageCodeValue, payload: P, payloadValues: readonly RlpInput[], nodeKey: Uint8Array, author: Uint8Array): Signed<P> {
  return { payload, payloadValues, signature: signHash(signedHash(code, payloadValues), nodeKey), author };
}

function recoverAuthor(code: MessageCodeValue, payloadValues: readonly RlpInput[], signature: Uint8Array): Uint8Array {
  try {
    return recoverSealSigner(signedHash(code, payloadValues), signature);
  } catch {
    throw new QbftMessageError('message signature does not recover to a public key');
  }
}

function signedValues(signed: Signed<unknown>): RlpInput[] {
  return [signed.payloadValues, signed.signature];
}

/** `[payload, signature]` → the payload list and an author. */
function decodeSigned<P>(
  item: Uint8Array | NestedUint8Array | undefined,
  code: MessageCodeValue,
  what: string,
  decodePayload: (values: NestedUint8Array) => P,
): Signed<P> {
  const [payloadItem, signatureItem] = expectList(item, what, 2);
  const payloadValues = expectList(payloadItem, `${what} payload`);
  const payload = decodePayload(payloadValues);
  const signature = decodeSignature(signatureItem, `${what} signature`, true);
  return { payload, payloadValues, signature, author: recoverAuthor(code, payloadValues, signature) };
}

// ---------------------------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------------------------

function preparePayloadValues(p: PreparePayload): NestedUint8Array {
  return [encodeScalar(p.height), encodeRound(p.round), p.digest];
}

function decodePreparePayload(values: NestedUint8Array): PreparePayload {
  const [height, round, digest] = expectList(values, 'prepare payload', 3);
  return { height: decodeHeight(height), round: decodeRound(round), digest: decodeHash(digest, 'prepare digest') };
}

function commitPayloadValues(p: CommitPayload): NestedUint8Array {
  return [encodeScalar(p.height), encodeRound(p.round), p.digest, p.commitSeal];
}

function decodeCommitPayload(values: NestedUint8Array): CommitPayload {
  const [height, round, digest, seal] = expectList(values, 'commit payload', 4);
  return {
    height: decodeHeight(height),
    round: decodeRound(round),
    digest: decodeHash(digest, 'commit digest'),
    commitSeal: decodeSignature(seal, 'commit seal', false),
  };
}

function roundChangePayloadValues(p: RoundChangePayload): NestedUint8Array {
  const metadata: NestedUint8Array = p.prepared
    ? [encodeRound(p.prepared.preparedRound), p.prepared.preparedBlockHash]
    : [];
  return [encodeScalar(p.height), encodeRound(p.round), metadata];
}

function decodeRoundChangePayload(values: NestedUint8Array): RoundChangePayload {
  const [height, round, metadataItem] = expectList(values, 'round-change payload', 3);
  const payload: RoundChangePayload = { height: decodeHeight(height), round: decodeRound(round) };
  // Besu reads an RLP "null" (empty list or empty string) as "not prepared".
  if (metadataItem instanceof Uint8Array) {
    if (metadataItem.length !== 0) throw new QbftMessageError('prepared-round metadata must be a list');
    return payload;
  }
  const metadata = expectList(metadataItem, 'prepared-round metadata');
  if (metadata.length === 0) return payload;
  if (metadata.length !== 2) throw new QbftMessageError(`prepared-round metadata must have 2 items, got ${metadata.length}`);
  payload.prepared = {
    preparedRound: decodeRound(metadata[0], 'prepared round'),
    preparedBlockHash: decodeHash(metadata[1], 'prepared block hash'),
  };
  return payload;
}

/** The block-access-list slot: always absent (`0x80`) on QBFT chains; a present list is out of scope. */
const NO_BLOCK_ACCESS_LIST = EMPTY;

function proposalPayloadValues(p: ProposalPayload, legacyForm: boolean): RlpInput[] {
  const values: RlpInput[] = [encodeScalar(p.height), encodeRound(p.round), p.block.values()];
  if (!legacyForm) values.push(NO_BLOCK_ACCESS_LIST);
  return values;
}

function decodeBlock(item: Uint8Array | NestedUint8Array | undefined, what: string): QbftBlock {
  try {
    return QbftBlock.fromValues(expectList(item, what));
  } catch (err) {
    if (err instanceof QbftBlockError || err instanceof BftExtraDataError) throw new QbftMessageError(`${what}: ${err.message}`);
    throw err;
  }
}

function expectNoBlockAccessList(item: Uint8Array | NestedUint8Array | undefined): void {
  if (!(item instanceof Uint8Array) || item.length !== 0) {
    throw new QbftMessageError('block access lists are not supported on QBFT chains');
  }
}

function decodeProposalPayload(values: NestedUint8Array): { payload: ProposalPayload; legacyForm: boolean } {
  if (values.length !== 3 && values.length !== 4) {
    throw new QbftMessageError(`proposal payload must have 3 or 4 items, got ${values.length}`);
  }
  const payload = { height: decodeHeight(values[0]), round: decodeRound(values[1]), block: decodeBlock(values[2], 'proposed block') };
  if (values.length === 4) expectNoBlockAccessList(values[3]);
  return { payload, legacyForm: values.length === 3 };
}

// ---------------------------------------------------------------------------------------------
// Creating (signing) messages
// ---------------------------------------------------------------------------------------------

/** Who signs: the node key and its address (passed in to avoid deriving it per message). */
export interface Signer {
  readonly key: Uint8Array;
  readonly address: Uint8Array;
}

export function createPrepare(signer: Signer, payload: PreparePayload): PrepareMessage {
  const signed = sign(MessageCode.PREPARE, payload, preparePayloadValues(payload), signer.key, signer.address);
  return { code: MessageCode.PREPARE, signed, data: encodeRlp(signedValues(signed)) };
}

/** A Commit for `digest`, sealing it with the signer's key. */
export function createCommit(signer: Signer, height: bigint, round: number, digest: Uint8Array, commitSeal = signHash(digest, signer.key)): CommitMessage {
  const payload: CommitPayload = { height, round, digest, commitSeal };
  const signed = sign(MessageCode.COMMIT, payload, commitPayloadValues(payload), signer.key, signer.address);
  return { code: MessageCode.COMMIT, signed, data: encodeRlp(signedValues(signed)) };
}

/** What a round change carries when its author has prepared a block at this height. */
export interface PreparedCertificate {
  /** The proposal block of the prepared round (its extraData round is that round). */
  block: QbftBlock;
  prepares: readonly Signed<PreparePayload>[];
  round: number;
}

export interface FormOptions {
  /** Write the ≤25.12 form (only for tests and for talking to old peers; we send the current form). */
  legacyForm?: boolean;
}

export function createRoundChange(
  signer: Signer,
  height: bigint,
  round: number,
  certificate?: PreparedCertificate,
  options: FormOptions = {},
): RoundChangeMessage {
  const payload: RoundChangePayload = { height, round };
  if (certificate) payload.prepared = { preparedRound: certificate.round, preparedBlockHash: certificate.block.digest() };
  const signed = sign(MessageCode.ROUND_CHANGE, payload, roundChangePayloadValues(payload), signer.key, signer.address);
  const prepares = certificate ? [...certificate.prepares] : [];
  const legacyForm = options.legacyForm ?? false;
  const items: RlpInput[] = [signedValues(signed), certificate ? certificate.block.values() : []];
  if (!legacyForm) items.push(NO_BLOCK_ACCESS_LIST);
  items.push(prepares.map(signedValues));
  const message: RoundChangeMessage = { code: MessageCode.ROUND_CHANGE, signed, prepares, legacyForm, data: encodeRlp(items) };
  return certificate ? { ...message, preparedBlock: certificate.block } : message;
}

export function createProposal(
  signer: Signer,
  height: bigint,
  round: number,
  block: QbftBlock,
  roundChanges: readonly Signed<RoundChangePayload>[] = [],
  prepares: readonly Signed<PreparePayload>[] = [],
  options: FormOptions = {},
): ProposalMessage {
  const legacyForm = options.legacyForm ?? false;
  const payload: ProposalPayload = { height, round, block };
  const signed = sign(MessageCode.PROPOSAL, payload, proposalPayloadValues(payload, legacyForm), signer.key, signer.address);
  const data = encodeRlp([signedValues(signed), [roundChanges.map(signedValues), prepares.map(signedValues)]]);
  return { code: MessageCode.PROPOSAL, signed, roundChanges: [...roundChanges], prepares: [...prepares], legacyForm, data };
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

function decodePrepares(item: Uint8Array | NestedUint8Array | undefined, what: string): Signed<PreparePayload>[] {
  return expectList(item, what).map((p, i) => decodeSigned(p, MessageCode.PREPARE, `${what}[${i}]`, decodePreparePayload));
}

function decodeRoundChangeBody(items: NestedUint8Array, data: Uint8Array): RoundChangeMessage {
  // ≥26.1: [signed, block|c0, bal(0x80), prepares]; ≤25.12: [signed, block|c0, prepares].
  if (items.length !== 3 && items.length !== 4) throw new QbftMessageError(`round change must have 3 or 4 items, got ${items.length}`);
  const signed = decodeSigned(items[0], MessageCode.ROUND_CHANGE, 'round change', decodeRoundChangePayload);
  const blockItem = items[1];
  const legacyForm = items.length === 3;
  if (!legacyForm) expectNoBlockAccessList(items[2]);
  const prepares = decodePrepares(items[items.length - 1], 'round-change prepares');
  const hasBlock = !(Array.isArray(blockItem) && blockItem.length === 0) && !(blockItem instanceof Uint8Array && blockItem.length === 0);
  const message: RoundChangeMessage = { code: MessageCode.ROUND_CHANGE, signed, prepares, legacyForm, data };
  return hasBlock ? { ...message, preparedBlock: decodeBlock(blockItem, 'prepared block') } : message;
}

function decodeProposalBody(items: NestedUint8Array, data: Uint8Array): ProposalMessage {
  if (items.length !== 2) throw new QbftMessageError(`proposal must have 2 items, got ${items.length}`);
  const [payloadItem, signatureItem] = expectList(items[0], 'signed proposal', 2);
  const payloadValues = expectList(payloadItem, 'proposal payload');
  const { payload, legacyForm } = decodeProposalPayload(payloadValues);
  const signature = decodeSignature(signatureItem, 'proposal signature', true);
  // The legacy form is verified over the payload as received (3 items), never re-encoded as 4.
  const author = recoverAuthor(MessageCode.PROPOSAL, payloadValues, signature);
  const [roundChangesItem, preparesItem] = expectList(items[1], 'proposal justification', 2);
  const roundChanges = expectList(roundChangesItem, 'proposal round changes').map((rc, i) =>
    decodeSigned(rc, MessageCode.ROUND_CHANGE, `proposal round change ${i}`, decodeRoundChangePayload),
  );
  return {
    code: MessageCode.PROPOSAL,
    signed: { payload, payloadValues, signature, author },
    roundChanges,
    prepares: decodePrepares(preparesItem, 'proposal prepares'),
    legacyForm,
    data,
  };
}

/** Decodes the data of an istanbul message with code 0x12–0x15; throws QbftMessageError when malformed. */
export function decodeMessage(code: number, data: Uint8Array): QbftMessage {
  let decoded: Uint8Array | NestedUint8Array;
  try {
    decoded = RLP.decode(data);
  } catch (cause) {
    throw new QbftMessageError(`malformed RLP: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
  const items = expectList(decoded, 'message');
  switch (code) {
    case MessageCode.PREPARE:
      return { code, signed: decodeSigned(items, code, 'prepare', decodePreparePayload), data };
    case MessageCode.COMMIT:
      return { code, signed: decodeSigned(items, code, 'commit', decodeCommitPayload), data };
    case MessageCode.ROUND_CHANGE:
      return decodeRoundChangeBody(items, data);
    case MessageCode.PROPOSAL:
      return decodeProposalBody(items, data);
    default:
      throw new QbftMessageError(`unknown QBFT message code 0x${code.toString(16)}`);
  }
}
