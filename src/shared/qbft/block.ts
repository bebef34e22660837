/**
 * A block as QBFT consensus sees it: the raw RLP values of an Ethereum block — header fields plus
 * body lists — with the header's QBFT extraData decoded (qbft-and-p2p.md §1, §2).
 *
 * Consensus never executes a block; it needs the header fields its rules look at, the three hashes of
 * §2.5, and the ability to re-round and seal a block. Working on RLP values keeps the core free of
 * ethereumjs and of the EVM: the node turns an ethereumjs Block into one with `block.raw()`, and the
 * simulation makes headers of the same shape around a fake payload.
 */
import { RLP } from '@ethereumjs/rlp';
import { RlpEncoded, encodeRlp } from '../ethereum/rlp-encode.js';
import type { RlpInput } from '../ethereum/rlp-encode.js';
import { rlpListItems, rlpListLength } from '../ethereum/rlp-walk.js';
import type { NestedUint8Array } from '@ethereumjs/rlp';

import { decodeExtraData, encodeExtraData } from './extra-data.js';
import type { BftExtraData } from './extra-data.js';
import { qbftCommittedSealHash, qbftOnChainHash } from './block-hash.js';

/** Positions of the header fields QBFT reads, in the RLP list of an Ethereum header. */
export const HeaderField = {
  parentHash: 0,
  ommersHash: 1,
  coinbase: 2,
  stateRoot: 3,
  transactionsRoot: 4,
  receiptsRoot: 5,
  logsBloom: 6,
  difficulty: 7,
  number: 8,
  gasLimit: 9,
  gasUsed: 10,
  timestamp: 11,
  extraData: 12,
  mixHash: 13,
  nonce: 14,
} as const;

/** Fewest fields a header can have (pre-London). */
const MIN_HEADER_FIELDS = 15;

/** Thrown for bytes that are not a block with a decodable QBFT header. */
export class QbftBlockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QbftBlockError';
  }
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return value;
}

/** The lists after a block's header: transactions, ommers, withdrawals... */
type BlockBody = readonly (Uint8Array | NestedUint8Array)[];

export class QbftBlock {
  readonly number: bigint;
  readonly timestamp: bigint;
  private cachedDigest: Uint8Array | undefined;
  private cachedHash: Uint8Array | undefined;

  private constructor(
    /** Header fields as RLP byte strings, in header order. */
    readonly header: readonly Uint8Array[],
    /** The body as values; for a block from `fromRlp`, decoded from `encodedBody` when first read. */
    private bodyValues: BlockBody | undefined,
    /**
     * For a block from `fromRlp`: each body list as it was encoded. Consensus re-encodes a block for
     * its proposal, its signature and its import; copying 2,000 transactions' bytes is what that
     * costs then, not decoding and encoding them on a thread that does it once a block. With the
     * large-payload keccak (messages.ts), the chain's build ended 6–30 ms before its import started,
     * against 29–104 ms, in blocks of 1,800–2,800 transfers.
     */
    private readonly encodedBody: readonly Uint8Array[] | undefined,
    readonly extraData: BftExtraData,
  ) {
    this.number = bytesToBigInt(header[HeaderField.number]!);
    this.timestamp = bytesToBigInt(header[HeaderField.timestamp]!);
  }

  /** A block from its RLP values `[header, ...body]`; throws QbftBlockError on a malformed one. */
  static fromValues(values: Uint8Array | NestedUint8Array): QbftBlock {
    if (!Array.isArray(values) || values.length < 3) {
      throw new QbftBlockError('a block must be a list of at least [header, transactions, ommers]');
    }
    const [header, ...body] = values;
    for (const item of body) {
      if (!Array.isArray(item)) throw new QbftBlockError('block body items must be lists');
    }
    const fields = headerFields(header);
    return new QbftBlock(fields, body, undefined, decodeExtraData(fields[HeaderField.extraData]!));
  }

  /** A block from its RLP, whose body stays encoded until it is read; throws QbftBlockError on a malformed one. */
  static fromRlp(bytes: Uint8Array): QbftBlock {
    let header: Uint8Array | NestedUint8Array;
    let body: Uint8Array[];
    try {
      const items = rlpListItems(bytes);
      if (items.length < 3) throw new QbftBlockError('a block must be a list of at least [header, transactions, ommers]');
      header = RLP.decode(items[0]!);
      body = items.slice(1);
    } catch (cause) {
      if (cause instanceof QbftBlockError) throw cause;
      throw new QbftBlockError(`malformed block RLP: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
    for (const item of body) {
      if (item[0]! < 0xc0) throw new QbftBlockError('block body items must be lists');
    }
    const fields = headerFields(header);
    return new QbftBlock(fields, undefined, body, decodeExtraData(fields[HeaderField.extraData]!));
  }

  /** The lists after the header, decoded. */
  get body(): BlockBody {
    this.bodyValues ??= this.encodedBody!.map((item) => RLP.decode(item));
    return this.bodyValues;
  }

  /** How many items body list `index` holds (0: transactions, 1: ommers); 0 when the block has no such list. */
  bodyListLength(index: number): number {
    if (this.encodedBody) {
      const item = this.encodedBody[index];
      return item === undefined ? 0 : rlpListLength(item);
    }
    const item = this.bodyValues![index];
    return Array.isArray(item) ? item.length : 0;
  }

  get parentHash(): Uint8Array {
    return this.header[HeaderField.parentHash]!;
  }

  get coinbase(): Uint8Array {
    return this.header[HeaderField.coinbase]!;
  }

  get round(): number {
    return this.extraData.round;
  }

  field(index: number): Uint8Array {
    return this.header[index]!;
  }

  scalar(index: number): bigint {
    return bytesToBigInt(this.header[index]!);
  }

  /** The committed-seal hash at the round written in this block: the digest Prepare/Commit carry. */
  digest(): Uint8Array {
    this.cachedDigest ??= qbftCommittedSealHash(this.header as Uint8Array[], this.extraData.round, this.extraData);
    return this.cachedDigest;
  }

  /** The committed-seal hash the block would have at another round (checks of prepared certificates). */
  digestAtRound(round: number): Uint8Array {
    return round === this.extraData.round ? this.digest() : qbftCommittedSealHash(this.header as Uint8Array[], round, this.extraData);
  }

  /** The on-chain block hash: round and seals excluded, so the same for every round and seal set. */
  hash(): Uint8Array {
    this.cachedHash ??= qbftOnChainHash(this.header as Uint8Array[], this.extraData);
    return this.cachedHash;
  }

  /** The same block with only its extraData round replaced (a re-proposal from a prepared certificate). */
  withRound(round: number): QbftBlock {
    return this.withExtraData({ ...this.extraData, round });
  }

  /** The same block carrying commit seals. */
  withSeals(seals: Uint8Array[]): QbftBlock {
    return this.withExtraData({ ...this.extraData, seals });
  }

  /** RLP input `[header, ...body]`, for `encodeRlp` when embedding the block in a message. */
  values(): RlpInput[] {
    const body: readonly RlpInput[] = this.encodedBody ? this.encodedBody.map((item) => new RlpEncoded(item)) : (this.bodyValues as NestedUint8Array);
    return [this.header, ...body];
  }

  encode(): Uint8Array {
    return encodeRlp(this.values());
  }

  /** Transactions (first body list) — how many there are decides the empty-block rule. */
  get transactionCount(): number {
    return this.bodyListLength(0);
  }

  private withExtraData(extraData: BftExtraData): QbftBlock {
    const header = this.header.slice();
    header[HeaderField.extraData] = encodeExtraData(extraData);
    return new QbftBlock(header, this.bodyValues, this.encodedBody, extraData);
  }
}

/** The header as its fields; throws QbftBlockError when it is not a list of enough byte strings. */
function headerFields(header: Uint8Array | NestedUint8Array | undefined): Uint8Array[] {
  if (!Array.isArray(header) || header.length < MIN_HEADER_FIELDS || !header.every((f) => f instanceof Uint8Array)) {
    throw new QbftBlockError(`a block header must be a list of at least ${MIN_HEADER_FIELDS} byte strings`);
  }
  return header as Uint8Array[];
}
