/**
 * fast-check arbitraries of devp2p frames a fake peer sends after Hello and Status: eth/68 and
 * istanbul/100 messages well-formed, malformed and mutated, unknown codes, payloads that are no
 * snappy, messages declaring more than the 16 MiB limit, base-protocol messages out of turn. Cases
 * marked `garbage` must make the node disconnect the peer. Shared by test/e2e/fuzz-devp2p.test.ts
 * and bench/fuzz.ts.
 */
import fc from 'fast-check';
import { RLP, type Input } from '@ethereumjs/rlp';
import { EthCode } from '../../../src/p2p/block-sync.js';
import { ETH_OFFSET, ISTANBUL_LENGTH, ISTANBUL_OFFSET } from './fake-peer.js';

export interface Frame {
  /** Absolute message code (base protocol 0x00–0x0f, then eth, then istanbul). */
  code: number;
  payload: Uint8Array;
  /** Snappy-compressed as devp2p v5 wants; false sends the payload as is. */
  compress: boolean;
}

export interface FrameCase {
  /** What the case exercises (tallied by the bench). */
  kind: string;
  frames: Frame[];
  /** The node must disconnect a peer that sends this. */
  garbage: boolean;
}

// The node's own table of eth/68 codes: the fuzzer speaks the protocol the node implements.
const ETH = EthCode;
const ETH_CODES = Object.values(ETH);
/** Codes inside eth/68's range that it does not define (0x0b–0x0e). */
const ETH_UNDEFINED_CODES = [0x0b, 0x0c, 0x0d, 0x0e];
const QBFT_CODES = [0x12, 0x13, 0x14, 0x15];

const bytes = (maxLength: number) => fc.uint8Array({ maxLength });
/** Byte strings of the sizes eth fields have: numbers, addresses, hashes, anything. */
const field = fc.oneof(bytes(8), fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), bytes(200));
const smallNumber = fc.bigInt({ min: 0n, max: 2n ** 70n }).map((n) => (n === 0n ? new Uint8Array() : hexBytes(n)));

function hexBytes(n: bigint): Uint8Array {
  const hex = n.toString(16);
  return Uint8Array.from(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
}

/** RLP items: byte strings and lists, a few levels deep. */
const rlpItem: fc.Arbitrary<Input> = fc.letrec<{ item: Input }>((tie) => ({
  item: fc.oneof({ depthSize: 'small', withCrossShrink: true }, { weight: 3, arbitrary: field as fc.Arbitrary<Input> }, { weight: 1, arbitrary: fc.array(tie('item'), { maxLength: 6 }) as fc.Arbitrary<Input> }),
})).item;

/** A list of the right shape for each eth message, with random contents. */
function ethShaped(code: number): fc.Arbitrary<Input> {
  const requestId = smallNumber;
  const hashes = fc.array(fc.oneof({ weight: 5, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }) }, { weight: 1, arbitrary: bytes(40) }), { maxLength: 40 });
  switch (code) {
    case ETH.GetBlockHeaders:
      return fc.tuple(requestId, fc.tuple(fc.oneof(smallNumber, fc.uint8Array({ minLength: 32, maxLength: 32 })), smallNumber, smallNumber, fc.oneof(smallNumber, bytes(2))));
    case ETH.GetBlockBodies:
    case ETH.GetPooledTransactions:
    case ETH.GetReceipts:
      return fc.tuple(requestId, hashes);
    case ETH.NewPooledTransactionHashes:
      return fc.tuple(bytes(40), fc.array(smallNumber, { maxLength: 40 }), hashes);
    case ETH.NewBlockHashes:
      return fc.array(fc.tuple(fc.uint8Array({ minLength: 32, maxLength: 32 }), smallNumber), { maxLength: 8 });
    case ETH.NewBlock:
      return fc.tuple(fc.tuple(fc.array(field, { minLength: 15, maxLength: 21 }), fc.array(rlpItem, { maxLength: 3 }), fc.array(rlpItem, { maxLength: 2 })), smallNumber);
    case ETH.Transactions:
      return fc.array(fc.oneof(fc.tuple(fc.constantFrom(1, 2, 3, 4), bytes(300)).map(([type, body]) => Uint8Array.from([type, ...body])), fc.array(field, { maxLength: 9 })), { maxLength: 10 });
    default:
      // Answers (BlockHeaders, BlockBodies, PooledTransactions, Receipts) nobody asked for.
      return fc.tuple(requestId, fc.array(rlpItem, { maxLength: 6 }));
  }
}

/** Random edits of bytes: flips, truncation, insertion. */
function mutatedBytes(source: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const edit = fc.tuple(fc.nat(), fc.constantFrom('flip', 'truncate', 'insert', 'drop'), fc.integer({ min: 0, max: 255 }));
  return fc.tuple(source, fc.array(edit, { minLength: 1, maxLength: 3 })).map(([original, edits]) => {
    let out = Array.from(original);
    for (const [at, kind, value] of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      if (kind === 'flip' && out.length > 0) out[i] = out[i]! ^ (value || 1);
      else if (kind === 'truncate') out = out.slice(0, i);
      else if (kind === 'insert') out.splice(i, 0, value);
      else out.splice(i, 1);
    }
    return Uint8Array.from(out);
  });
}

const frame = (code: number, payload: Uint8Array, compress = true): Frame => ({ code, payload, compress });

/** A snappy block header declaring `length` uncompressed bytes, followed by a few literal bytes. */
function declaringSnappy(length: number): Uint8Array {
  const varint: number[] = [];
  for (let n = length; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      varint.push(n);
      break;
    }
    varint.push((n % 128) | 0x80);
  }
  return Uint8Array.from([...varint, 0x00, 0xc0]);
}

/** Cases a peer may legitimately send, or that the node may answer or ignore (no verdict on the connection). */
function tolerated(): fc.Arbitrary<FrameCase> {
  const ethCode = fc.constantFrom(...ETH_CODES);
  return fc.oneof(
    { weight: 6, arbitrary: ethCode.chain((code) => ethShaped(code).map((payload) => ({ kind: `eth 0x${code.toString(16)} shaped`, frames: [frame(ETH_OFFSET + code, RLP.encode(payload))], garbage: false }))) },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...QBFT_CODES), fc.oneof(rlpItem.map((item) => RLP.encode(item)), bytes(400))).map(([code, payload]) => ({ kind: `istanbul 0x${code.toString(16)}`, frames: [frame(ISTANBUL_OFFSET + code, payload)], garbage: false })) },
    { weight: 2, arbitrary: fc.tuple(ethCode, fc.array(rlpItem, { maxLength: 5 })).map(([code, list]) => ({ kind: 'eth random list', frames: [frame(ETH_OFFSET + code, RLP.encode(list))], garbage: false })) },
    { weight: 1, arbitrary: fc.constantFrom<FrameCase>({ kind: 'ping', frames: [frame(0x02, RLP.encode([]))], garbage: false }, { kind: 'pong', frames: [frame(0x03, RLP.encode([]))], garbage: false }) },
  );
}

/** Cases the node must answer with a disconnect. */
function garbage(): fc.Arbitrary<FrameCase> {
  const ethCode = fc.constantFrom(...ETH_CODES);
  const shapedPayload = ethCode.chain((code) => ethShaped(code).map((payload) => [code, RLP.encode(payload)] as const));
  return fc.oneof(
    // Payloads that are no RLP list: a lone byte string, or a list cut short.
    { weight: 3, arbitrary: fc.tuple(ethCode, bytes(60)).map(([code, raw]) => ({ kind: 'eth not a list', frames: [frame(ETH_OFFSET + code, RLP.encode(raw))], garbage: true })) },
    { weight: 3, arbitrary: shapedPayload.filter(([, encoded]) => encoded.length > 2).map(([code, encoded]) => ({ kind: 'eth truncated', frames: [frame(ETH_OFFSET + code, encoded.subarray(0, encoded.length - 1))], garbage: true })) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...ETH_UNDEFINED_CODES), bytes(100)).map(([code, raw]) => ({ kind: 'eth undefined code', frames: [frame(ETH_OFFSET + code, RLP.encode([raw]))], garbage: true })) },
    { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 0, max: 0x11 }), bytes(100)).map(([code, raw]) => ({ kind: 'istanbul non-QBFT code', frames: [frame(ISTANBUL_OFFSET + code, raw)], garbage: true })) },
    { weight: 2, arbitrary: fc.tuple(fc.integer({ min: ISTANBUL_OFFSET + ISTANBUL_LENGTH, max: 0x7f }), bytes(100)).map(([code, raw]) => ({ kind: 'code of no protocol', frames: [frame(code, raw)], garbage: true })) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(ETH_OFFSET + ETH.GetBlockHeaders, ISTANBUL_OFFSET + 0x12), bytes(100)).map(([code, raw]) => ({ kind: 'not snappy', frames: [frame(code, Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, ...raw]), false)], garbage: true })) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(ETH_OFFSET + ETH.Transactions, ETH_OFFSET + ETH.GetBlockBodies, ISTANBUL_OFFSET + 0x12), fc.integer({ min: 0x1000000, max: 0xffffffff })).map(([code, declared]) => ({ kind: 'declares > 16 MiB', frames: [frame(code, declaringSnappy(declared), false)], garbage: true })) },
    { weight: 1, arbitrary: fc.constantFrom(0x00, 0x04, 0x0a, 0x0f).map((code) => ({ kind: 'base protocol out of turn', frames: [frame(code, RLP.encode([]))], garbage: true })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(ETH.GetBlockHeaders, ETH.GetBlockBodies), fc.uint8Array({ minLength: 9, maxLength: 32 })).map(([code, id]) => ({ kind: 'request id over 64 bits', frames: [frame(ETH_OFFSET + code, RLP.encode([id, []]))], garbage: true })) },
  );
}

/** Sequences of frames a fake peer sends: mostly tolerated traffic, often ending in garbage. */
export function frameCases(): fc.Arbitrary<FrameCase> {
  return fc.oneof(
    { weight: 5, arbitrary: tolerated() },
    { weight: 4, arbitrary: garbage() },
    {
      weight: 2,
      arbitrary: fc
        .tuple(tolerated(), mutatedBytes(fc.oneof(tolerated().map((c) => c.frames[0]!.payload))), fc.constantFrom(...ETH_CODES.map((c) => ETH_OFFSET + c), ...QBFT_CODES.map((c) => ISTANBUL_OFFSET + c)))
        .map(([before, payload, code]) => ({ kind: 'mutated', frames: [...before.frames, frame(code, payload)], garbage: false })),
    },
  );
}
