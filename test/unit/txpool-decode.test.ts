import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import { Mainnet, createCustomCommon } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import {
  createAccessList2930Tx,
  createEOACode7702Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
} from '@ethereumjs/tx';
import { MAX_INTEGER, MAX_UINT64, SECP256K1_ORDER, SECP256K1_ORDER_DIV_2, bigIntToUnpaddedBytes, bytesToBigInt, bytesToHex, privateToAddress, privateToPublic } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import secp256k1 from 'secp256k1';

import { RpcError, RpcErrors } from '../../src/shared/rpc/errors.js';
import type { RpcErrorObject } from '../../src/shared/rpc/types.js';
import { decodeRawTransaction, libraryMinimumGasLimit, minimumGasLimit } from '../../src/tasks/transaction-decode.js';
import type { GasFields } from '../../src/tasks/transaction-decode.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import fc from 'fast-check';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import decodeTask from '../../workers/tasks/transaction-decode.task.js';
import * as nobleSecp from '@noble/secp256k1';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

nobleSecp.hashes.sha256 = sha256;
nobleSecp.hashes.hmacSha256 = (k: Uint8Array, m: Uint8Array) => hmac(sha256, k, m);

const CHAIN_ID = 1337n;
const RECIPIENT = new Uint8Array(20).fill(0x11);
const keyFor = (i: number): Uint8Array => keccak_256(new TextEncoder().encode(`txpool-decode-key-${i}`));

type Field = bigint | Uint8Array | Field[];
const encodeField = (f: Field): Uint8Array | Uint8Array[] =>
  typeof f === 'bigint' ? bigIntToUnpaddedBytes(f) : f instanceof Uint8Array ? f : (f.map(encodeField) as Uint8Array[]);

/**
 * Signs arbitrary transaction fields, including combinations ethereumjs refuses to build (priority fee
 * above max fee, bare blob transactions). `legacyChainId` selects EIP-155 signing for type 0.
 */
function signRaw(type: number, fields: Field[], privateKey: Uint8Array, legacyChainId?: bigint): Uint8Array {
  const unsigned = fields.map(encodeField) as Uint8Array[];
  let message: Uint8Array;
  if (type === 0) {
    const hashed = legacyChainId === undefined ? unsigned : [...unsigned, bigIntToUnpaddedBytes(legacyChainId), new Uint8Array(), new Uint8Array()];
    message = RLP.encode(hashed);
  } else {
    message = new Uint8Array([type, ...RLP.encode(unsigned)]);
  }
  const sig = nobleSecp.sign(keccak_256(message), privateKey, { prehash: false, format: 'recovered' });
  const recovery = BigInt(sig[0]!);
  const r = bytesToBigInt(sig.subarray(1, 33));
  const s = bytesToBigInt(sig.subarray(33, 65));
  const v = type !== 0 ? recovery : legacyChainId === undefined ? 27n + recovery : legacyChainId * 2n + 35n + recovery;
  const signed = [...unsigned, bigIntToUnpaddedBytes(v), bigIntToUnpaddedBytes(r), bigIntToUnpaddedBytes(s)];
  return type === 0 ? RLP.encode(signed) : new Uint8Array([type, ...RLP.encode(signed)]);
}

const prague = txRulesFor(CHAIN_ID, 'prague');
const signingCommon = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: 'prague' });
/** Before EIP-155 (spurious dragon) ethereumjs signs legacy transactions without a chain id. */
const preEip155Common = createCustomCommon({ chainId: Number(CHAIN_ID) }, Mainnet, { hardfork: 'tangerineWhistle' });
const key = keyFor(1);
const senderAddress = privateToAddress(key);

function rejection(fn: () => unknown): RpcErrorObject {
  try {
    fn();
  } catch (err) {
    if (err instanceof RpcError) return err.toObject();
    throw err;
  }
  throw new Error('expected a rejection');
}

/** Re-encodes a typed or legacy raw tx after changing its RLP fields. */
function mutate(raw: Uint8Array, change: (values: Uint8Array[]) => void): Uint8Array {
  const typed = raw[0]! < 0xc0;
  const values = RLP.decode(typed ? raw.subarray(1) : raw) as Uint8Array[];
  change(values);
  const body = RLP.encode(values);
  return typed ? new Uint8Array([raw[0]!, ...body]) : body;
}

test('txRulesFor derives the allowed types from the fork', (t) => {
  t.deepEqual(txRulesFor(CHAIN_ID, 'berlin').allowedTypes, [0, 1]);
  t.deepEqual(txRulesFor(CHAIN_ID, 'london').allowedTypes, [0, 1, 2]);
  t.deepEqual(txRulesFor(CHAIN_ID, 'shanghai').allowedTypes, [0, 1, 2]);
  t.deepEqual(txRulesFor(CHAIN_ID, 'cancun').allowedTypes, [0, 1, 2, 3]);
  t.deepEqual(prague.allowedTypes, [0, 1, 2, 3, 4]);
});

test('legacy EIP-155 transaction decodes with sender, hash and chain id', (t) => {
  const tx = createLegacyTx(
    { nonce: 7, gasPrice: 1000, gasLimit: 21000, to: RECIPIENT, value: 5n },
    { common: signingCommon },
  ).sign(key);
  const raw = tx.serialize();
  const decoded = decodeRawTransaction(raw, prague);
  t.is(decoded.type, 0);
  t.deepEqual(decoded.hash, tx.hash());
  t.deepEqual(decoded.raw, raw);
  t.deepEqual(decoded.sender, senderAddress);
  t.deepEqual(decoded.senderPublicKey, privateToPublic(key));
  t.is(decoded.chainId, CHAIN_ID);
  t.is(decoded.nonce, 7n);
  t.is(decoded.gasPrice, 1000n);
  t.is(decoded.maxFeePerGas, undefined);
  t.is(decoded.value, 5n);
  t.deepEqual(decoded.to, RECIPIENT);
  t.is(decoded.intrinsicGas, 21000n);
  t.true(decoded.v === CHAIN_ID * 2n + 35n || decoded.v === CHAIN_ID * 2n + 36n);
  t.is(decoded.v - CHAIN_ID * 2n - 35n, BigInt(decoded.yParity));
  t.is(decoded.r, tx.r!);
  t.is(decoded.s, tx.s!);
  t.is(decoded.accessList, undefined);
});

test('legacy transaction without EIP-155 has no chain id and v 27/28', (t) => {
  const tx = createLegacyTx(
    { nonce: 0, gasPrice: 1000, gasLimit: 21000, to: RECIPIENT },
    { common: preEip155Common },
  ).sign(key);
  const decoded = decodeRawTransaction(tx.serialize(), prague);
  t.is(decoded.chainId, undefined);
  t.true(decoded.v === 27n || decoded.v === 28n);
  t.deepEqual(decoded.sender, senderAddress);
  t.deepEqual(decoded.hash, tx.hash());
});

test('contract creation has no `to` and pays creation gas', (t) => {
  const data = new Uint8Array([0x60, 0x00, 0x60, 0x00, 0xf3]);
  const tx = createLegacyTx({ nonce: 0, gasPrice: 1000, gasLimit: 100_000, data }, { common: signingCommon }).sign(key);
  const decoded = decodeRawTransaction(tx.serialize(), prague);
  t.is(decoded.to, undefined);
  t.deepEqual(decoded.data, data);
  // 21000 + 32000 creation + 4 zero bytes × 4 + 1 non-zero... (5 bytes: 3 non-zero, 2 zero) + 1 initcode word × 2
  t.is(decoded.intrinsicGas, 21000n + 32000n + 3n * 16n + 2n * 4n + 2n);
});

test('EIP-2930 transaction keeps its access list and pays for it', (t) => {
  const storageKey = new Uint8Array(32).fill(1);
  const tx = createAccessList2930Tx(
    {
      chainId: CHAIN_ID,
      nonce: 1,
      gasPrice: 2000,
      gasLimit: 30_000,
      to: RECIPIENT,
      accessList: [[RECIPIENT, [storageKey]]],
    },
    { common: signingCommon },
  ).sign(key);
  const decoded = decodeRawTransaction(tx.serialize(), prague);
  t.is(decoded.type, 1);
  t.is(decoded.gasPrice, 2000n);
  t.deepEqual(decoded.accessList, [{ address: RECIPIENT, storageKeys: [storageKey] }]);
  t.is(decoded.intrinsicGas, 21000n + 2400n + 1900n);
  t.deepEqual(decoded.sender, senderAddress);
  t.deepEqual(decoded.hash, tx.hash());
});

test('EIP-1559 transaction decodes its fee fields', (t) => {
  const tx = createFeeMarket1559Tx(
    { chainId: CHAIN_ID, nonce: 3, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 5n, gasLimit: 21000, to: RECIPIENT },
    { common: signingCommon },
  ).sign(key);
  const decoded = decodeRawTransaction(tx.serialize(), prague);
  t.is(decoded.type, 2);
  t.is(decoded.gasPrice, undefined);
  t.is(decoded.maxFeePerGas, 10n ** 9n);
  t.is(decoded.maxPriorityFeePerGas, 5n);
  t.deepEqual(decoded.accessList, []);
  t.is(decoded.v, BigInt(decoded.yParity));
  t.deepEqual(decoded.sender, senderAddress);
  t.deepEqual(decoded.hash, tx.hash());
});

test('a decoded transaction keeps its byte strings in one buffer, which a hand-off to another thread copies once', async (t) => {
  const data = Uint8Array.from({ length: 68 }, (_, i) => (i * 7) & 0xff);
  const tx = createFeeMarket1559Tx(
    { chainId: CHAIN_ID, nonce: 4, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 5n, gasLimit: 60_000, to: RECIPIENT, data },
    { common: signingCommon },
  ).sign(key);
  const raw = tx.serialize();
  const decoded = decodeRawTransaction(raw, prague);
  const fields = (d: typeof decoded) => [d.raw, d.hash, d.data, d.sender, d.senderPublicKey, d.to!];
  const expected = [raw, tx.hash(), data, senderAddress, privateToPublic(key), RECIPIENT];
  t.deepEqual(fields(decoded), expected);
  const buffer = decoded.raw.buffer;
  t.true(fields(decoded).every((bytes) => bytes.buffer === buffer), 'one buffer');
  t.is(buffer.byteLength, expected.reduce((sum, bytes) => sum + bytes.length, 0), 'holding nothing else');
  // An encoding that is a view of a larger message (a peer's) is not kept with it.
  const message = new Uint8Array(raw.length + 100);
  message.set(raw, 50);
  const fromView = decodeRawTransaction(message.subarray(50, 50 + raw.length), prague);
  t.deepEqual(fields(fromView), expected);
  t.is(fromView.raw.buffer.byteLength, buffer.byteLength, 'a buffer of its own, of the same size');
  // As the decode task's answer reaches the pool thread.
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<typeof decoded>((resolve) => port2.once('message', resolve));
  port1.postMessage(decoded);
  const arrived = await received;
  port1.close();
  t.deepEqual(fields(arrived), expected);
  t.true(fields(arrived).every((bytes) => bytes.buffer === arrived.raw.buffer), 'still one buffer on the other side');
});

function setCodeTx() {
  const authorization: [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array] = [
    bigIntToUnpaddedBytes(CHAIN_ID),
    RECIPIENT,
    new Uint8Array(),
    new Uint8Array(),
    bigIntToUnpaddedBytes(1n),
    bigIntToUnpaddedBytes(2n),
  ];
  return createEOACode7702Tx(
    {
      chainId: CHAIN_ID,
      nonce: 0,
      maxFeePerGas: 1000,
      maxPriorityFeePerGas: 1,
      gasLimit: 100_000,
      to: RECIPIENT,
      authorizationList: [authorization],
    },
    { common: signingCommon },
  ).sign(key);
}

test('EIP-7702 transaction is accepted on Prague and rejected before it', (t) => {
  const raw = setCodeTx().serialize();
  const decoded = decodeRawTransaction(raw, prague);
  t.is(decoded.type, 4);
  t.is(decoded.authorizationList?.length, 1);
  t.deepEqual(decoded.authorizationList?.[0]?.address, RECIPIENT);
  t.is(decoded.intrinsicGas, 21000n + 25000n);
  t.deepEqual(rejection(() => decodeRawTransaction(raw, txRulesFor(CHAIN_ID, 'cancun'))), {
    code: -32602,
    message: 'Invalid transaction type',
  });
});

/** A signed type-4 transaction with the authorization list given as raw fields. */
function setCodeRaw(authorizations: Field[][], to: Uint8Array = RECIPIENT): Uint8Array {
  return signRaw(4, [CHAIN_ID, 0n, 1n, 1000n, 100_000n, to, 0n, new Uint8Array(), [], authorizations], key);
}

test('EIP-7702 authorizations in the pool: Besu refuses an empty list and a non-canonical authority signature', (t) => {
  const authorization = (yParity: bigint, s: bigint): Field[] => [CHAIN_ID, RECIPIENT, 0n, yParity, 1n, s];
  t.is(decodeRawTransaction(setCodeRaw([authorization(1n, 2n)]), prague).authorizationList?.[0]?.yParity, 1);
  // Besu's EMPTY_CODE_DELEGATION has no JSON-RPC mapping: an internal error.
  t.deepEqual(rejection(() => decodeRawTransaction(setCodeRaw([]), prague)), { code: -32603, message: 'Internal error' });
  // s above half the curve order, or a y-parity other than 0/1: INVALID_SIGNATURE.
  t.deepEqual(rejection(() => decodeRawTransaction(setCodeRaw([authorization(0n, SECP256K1_ORDER / 2n + 1n)]), prague)), {
    code: -32002,
    message: 'Invalid signature',
  });
  t.deepEqual(rejection(() => decodeRawTransaction(setCodeRaw([authorization(2n, 2n)]), prague)), { code: -32002, message: 'Invalid signature' });
  // A set-code transaction cannot create a contract: without a `to` it does not decode.
  t.deepEqual(rejection(() => decodeRawTransaction(setCodeRaw([authorization(0n, 2n)], new Uint8Array()), prague)), {
    code: -32602,
    message: 'Invalid params',
  });
  // The authorization's own chain id, nonce and signer are checked at execution (a bad one is skipped there).
  t.is(decodeRawTransaction(setCodeRaw([[999n, RECIPIENT, 5n, 0n, 1n, 2n]]), prague).authorizationList?.[0]?.chainId, 999n);
});

test('EIP-1559 transaction before London is an invalid type; 2930 before Berlin too', (t) => {
  const tx1559 = createFeeMarket1559Tx(
    { chainId: CHAIN_ID, nonce: 0, maxFeePerGas: 1000, maxPriorityFeePerGas: 1, gasLimit: 21000, to: RECIPIENT },
    { common: signingCommon },
  ).sign(key);
  t.deepEqual(rejection(() => decodeRawTransaction(tx1559.serialize(), txRulesFor(CHAIN_ID, 'berlin'))), {
    code: -32602,
    message: 'Invalid transaction type',
  });
  const tx2930 = createAccessList2930Tx(
    { chainId: CHAIN_ID, nonce: 0, gasPrice: 1000, gasLimit: 21000, to: RECIPIENT },
    { common: signingCommon },
  ).sign(key);
  t.deepEqual(rejection(() => decodeRawTransaction(tx2930.serialize(), txRulesFor(CHAIN_ID, 'istanbul'))), {
    code: -32602,
    message: 'Invalid transaction type',
  });
});

test('undecodable input is Invalid params', (t) => {
  const good = createLegacyTx({ nonce: 0, gasPrice: 1000, gasLimit: 21000, to: RECIPIENT }, { common: signingCommon })
    .sign(key)
    .serialize();
  const invalidParams = { code: -32602, message: 'Invalid params' };
  const cases: Uint8Array[] = [
    new Uint8Array(),
    good.subarray(0, good.length - 1),
    new Uint8Array([...good, 0x00]),
    new Uint8Array([0x05, ...good]), // unknown type byte
    new Uint8Array([0x02, ...good]), // type 2 with a legacy (9-field) body
    RLP.encode(new Uint8Array([1, 2, 3])), // not a list
    mutate(good, (v) => (v[0] = new Uint8Array([0, 1]))), // nonce with a leading zero
    mutate(good, (v) => (v[2] = new Uint8Array(9).fill(1))), // gas limit wider than a long
    mutate(good, (v) => (v[3] = new Uint8Array(19))), // `to` not an address
    mutate(good, (v) => (v[6] = bigIntToUnpaddedBytes(30n))), // v neither 27/28 nor EIP-155
    mutate(good, (v) => (v[7] = new Uint8Array())), // r = 0
    mutate(good, (v) => (v[8] = bigIntToUnpaddedBytes(SECP256K1_ORDER))), // s = n
  ];
  for (const raw of cases) t.deepEqual(rejection(() => decodeRawTransaction(raw, prague)), invalidParams);
});

test('chain id mismatch is Wrong chainId for typed and EIP-155 transactions', (t) => {
  const otherChain = createCustomCommon({ chainId: 99 }, Mainnet, { hardfork: 'prague' });
  const wrong = { code: -32000, message: 'Wrong chainId' };
  const legacy = createLegacyTx({ nonce: 0, gasPrice: 1000, gasLimit: 21000, to: RECIPIENT }, { common: otherChain }).sign(
    key,
  );
  t.deepEqual(rejection(() => decodeRawTransaction(legacy.serialize(), prague)), wrong);
  const typed = createFeeMarket1559Tx(
    { chainId: 99n, nonce: 0, maxFeePerGas: 1000, maxPriorityFeePerGas: 1, gasLimit: 21000, to: RECIPIENT },
    { common: otherChain },
  ).sign(key);
  t.deepEqual(rejection(() => decodeRawTransaction(typed.serialize(), prague)), wrong);
});

test('high-s and unrecoverable signatures are Invalid signature', (t) => {
  const invalidSignature = { code: -32002, message: 'Invalid signature' };
  const raw = createFeeMarket1559Tx(
    { chainId: CHAIN_ID, nonce: 0, maxFeePerGas: 1000, maxPriorityFeePerGas: 1, gasLimit: 21000, to: RECIPIENT },
    { common: signingCommon },
  )
    .sign(key)
    .serialize();
  // The malleable twin (n − s, flipped parity) recovers the same sender but is high-s.
  const highS = mutate(raw, (v) => {
    v[9] = v[9]!.length === 0 ? new Uint8Array([1]) : new Uint8Array();
    v[11] = bigIntToUnpaddedBytes(SECP256K1_ORDER - bytesToBigInt(v[11]!));
  });
  t.deepEqual(rejection(() => decodeRawTransaction(highS, prague)), invalidSignature);

  // An r that is not the x coordinate of any curve point cannot be recovered from.
  let r = 1n;
  const probe = new Uint8Array(64);
  probe[63] = 1;
  for (; ; r++) {
    probe.set(bigIntToUnpaddedBytes(r), 32 - bigIntToUnpaddedBytes(r).length);
    try {
      secp256k1.ecdsaRecover(probe, 0, new Uint8Array(32).fill(7), false);
      probe.fill(0, 0, 32);
    } catch {
      break;
    }
  }
  const unrecoverable = mutate(raw, (v) => (v[10] = bigIntToUnpaddedBytes(r)));
  t.deepEqual(rejection(() => decodeRawTransaction(unrecoverable, prague)), invalidSignature);
});

test('a recoverable but wrong signature yields another sender, not an error', (t) => {
  const raw = createFeeMarket1559Tx(
    { chainId: CHAIN_ID, nonce: 0, maxFeePerGas: 1000, maxPriorityFeePerGas: 1, gasLimit: 21000, to: RECIPIENT },
    { common: signingCommon },
  )
    .sign(key)
    .serialize();
  const tampered = mutate(raw, (v) => (v[6] = bigIntToUnpaddedBytes(1n))); // value changed after signing
  const decoded = decodeRawTransaction(tampered, prague);
  t.notDeepEqual(decoded.sender, senderAddress);
});

test('max priority fee above max fee is rejected with its own error', (t) => {
  const raw = signRaw(2, [CHAIN_ID, 0n, 11n, 10n, 21000n, RECIPIENT, 0n, new Uint8Array(), []], key);
  t.deepEqual(rejection(() => decodeRawTransaction(raw, prague)), {
    code: -32000,
    message: 'Max priority fee per gas exceeds max fee per gas',
  });
});

test('gas below intrinsic gas (or the calldata floor) is rejected', (t) => {
  const intrinsic = { code: -32003, message: 'Intrinsic gas exceeds gas limit' };
  const low = createLegacyTx({ nonce: 0, gasPrice: 1000, gasLimit: 20_999, to: RECIPIENT }, { common: signingCommon }).sign(
    key,
  );
  t.deepEqual(rejection(() => decodeRawTransaction(low.serialize(), prague)), intrinsic);
  const data = new Uint8Array(10).fill(0xff); // 10 non-zero bytes: 160 gas of calldata, floor 400 (EIP-7623)
  const underFloor = createLegacyTx(
    { nonce: 0, gasPrice: 1000, gasLimit: 21_000 + 160, to: RECIPIENT, data },
    { common: signingCommon },
  ).sign(key);
  t.deepEqual(rejection(() => decodeRawTransaction(underFloor.serialize(), prague)), intrinsic);
  // Before Prague there is no floor, so the same transaction is fine on Cancun.
  t.is(decodeRawTransaction(underFloor.serialize(), txRulesFor(CHAIN_ID, 'cancun')).intrinsicGas, 21_160n);
  const atFloor = createLegacyTx(
    { nonce: 0, gasPrice: 1000, gasLimit: 21_400, to: RECIPIENT, data },
    { common: signingCommon },
  ).sign(key);
  t.is(decodeRawTransaction(atFloor.serialize(), prague).intrinsicGas, 21_400n);
});

/** The minimum gas limit, or the code of the error it throws. */
function gasOrError(compute: () => bigint | undefined): bigint | undefined | string {
  try {
    return compute();
  } catch (err) {
    return err instanceof RpcError ? `error ${err.code}` : `not an RpcError: ${String(err)}`;
  }
}

test('legacy and EIP-1559 transactions up to Osaka: the minimum gas limit and the refusals of building the library transaction, without building it', (t) => {
  const forks = ['chainstart', 'homestead', 'spuriousDragon', 'byzantium', 'istanbul', 'berlin', 'london', 'paris', 'shanghai', 'cancun', 'prague', 'osaka'];
  const londonAndLater = forks.slice(forks.indexOf('london'));
  const osakaGasCap = txCommonFor(CHAIN_ID, 'osaka').param('maxTransactionGasLimit');
  // Bytes with many zeros (calldata prices zero bytes apart), lengths around 32-byte words (initcode).
  const calldata = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })), { maxLength: 100 }).map((bytes) => Uint8Array.from(bytes));
  const quantity = (max: bigint) => fc.oneof(fc.constant(0n), fc.constant(max), fc.constant(max - 1n), fc.bigInt({ min: 0n, max }), fc.bigInt({ min: 0n, max: 10n ** 12n }));
  const accessList = fc.array(
    fc.record({ address: fc.uint8Array({ minLength: 20, maxLength: 20 }), storageKeys: fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { maxLength: 3 }) }),
    { maxLength: 3 },
  );
  const transaction = fc.record({
    type: fc.constantFrom<0 | 2>(0, 2),
    fork: fc.constantFrom(...forks),
    nonce: quantity(MAX_UINT64),
    gasLimit: quantity(MAX_UINT64),
    feeCap: quantity(MAX_INTEGER),
    /** Puts the fee cap at the largest value whose product with the gas limit fits 256 bits, or one above. */
    feeAtOverflow: fc.constantFrom(undefined, 0n, 1n),
    creation: fc.boolean(),
    value: quantity(MAX_INTEGER),
    data: calldata,
    accessList,
    recovery: fc.constantFrom(0n, 1n),
    r: fc.bigInt({ min: 1n, max: SECP256K1_ORDER - 1n }),
    s: fc.bigInt({ min: 1n, max: SECP256K1_ORDER_DIV_2 }),
  });
  let compared = 0;
  let refused = 0;
  fc.assert(
    fc.property(transaction, (generated) => {
      const fork = generated.type === 2 && !londonAndLater.includes(generated.fork) ? 'london' : generated.fork;
      const gasLimit = fork === 'osaka' && generated.gasLimit > osakaGasCap ? osakaGasCap : generated.gasLimit;
      let feeCap = generated.feeCap;
      if (generated.feeAtOverflow !== undefined && gasLimit > 0n) feeCap = MAX_INTEGER / gasLimit + generated.feeAtOverflow;
      if (feeCap > MAX_INTEGER) feeCap = MAX_INTEGER;
      const to = generated.creation ? new Uint8Array() : RECIPIENT;
      const sig = [generated.type === 0 ? CHAIN_ID * 2n + 35n + generated.recovery : generated.recovery, generated.r, generated.s].map(bigIntToUnpaddedBytes);
      const list = generated.accessList.map(({ address, storageKeys }) => [address, storageKeys]);
      const values = (
        generated.type === 0
          ? [generated.nonce, feeCap, gasLimit, to, generated.value, generated.data]
          : [CHAIN_ID, generated.nonce, feeCap / 2n, feeCap, gasLimit, to, generated.value, generated.data, list]
      ).map((field) => (typeof field === 'bigint' ? bigIntToUnpaddedBytes(field) : field));
      const fields: GasFields = { type: generated.type, nonce: generated.nonce, gasLimit, feeCap, to, data: generated.data, accessList: generated.type === 2 ? generated.accessList : undefined };
      const common = txCommonFor(CHAIN_ID, fork);
      const restated = gasOrError(() => minimumGasLimit(fields, common));
      const library = gasOrError(() => libraryMinimumGasLimit(generated.type, [...values, ...sig] as Uint8Array[], common));
      compared++;
      if (typeof library === 'string') refused++;
      return restated === library;
    }),
    { numRuns: 3000 },
  );
  // The generator reaches both the answers and the refusals (nonce 2^64 - 1, fee cap times gas limit past 256 bits).
  t.true(refused > 100 && compared - refused > 1000, `${refused} refused of ${compared}`);
});

test('other types and forks after Osaka are left to the library', (t) => {
  const fields: GasFields = { type: 2, nonce: 0n, gasLimit: 100_000n, feeCap: 1n, to: RECIPIENT, data: new Uint8Array(), accessList: [] };
  t.is(minimumGasLimit({ ...fields, type: 1 }, txCommonFor(CHAIN_ID, 'osaka')), undefined);
  t.is(minimumGasLimit({ ...fields, type: 4 }, txCommonFor(CHAIN_ID, 'osaka')), undefined);
  t.is(minimumGasLimit(fields, txCommonFor(CHAIN_ID, 'amsterdam')), undefined);
  t.is(minimumGasLimit(fields, txCommonFor(CHAIN_ID, 'bpo2')), 21_000n);
});

test('Osaka caps transaction gas (EIP-7825); oversize initcode is an internal error', (t) => {
  const cap = 2n ** 24n;
  const big = createLegacyTx({ nonce: 0, gasPrice: 1000, gasLimit: cap + 1n, to: RECIPIENT }, { common: signingCommon }).sign(
    key,
  );
  t.deepEqual(rejection(() => decodeRawTransaction(big.serialize(), txRulesFor(CHAIN_ID, 'osaka'))), {
    code: -32005,
    message: 'Transaction gas limit cap exceeded',
  });
  t.is(decodeRawTransaction(big.serialize(), prague).gasLimit, cap + 1n);

  const initcode = new Uint8Array(49_153).fill(1);
  const raw = signRaw(0, [0n, 1000n, 10_000_000n, new Uint8Array(), 0n, initcode], key, CHAIN_ID);
  t.deepEqual(rejection(() => decodeRawTransaction(raw, prague)), { code: -32603, message: 'Internal error' });
});

test('blob transactions: bare form undecodable, wrapped form fails without a KZG verifier', (t) => {
  const body: Field[] = [
    CHAIN_ID,
    0n,
    1n,
    1000n,
    21000n,
    RECIPIENT,
    0n,
    new Uint8Array(),
    [],
    1n,
    [new Uint8Array(32).fill(1)],
  ];
  const bare = signRaw(3, body, key);
  t.deepEqual(rejection(() => decodeRawTransaction(bare, prague)), { code: -32602, message: 'Invalid params' });

  const signedBody = RLP.decode(bare.subarray(1)) as Uint8Array[];
  const wrapped = new Uint8Array([
    3,
    ...RLP.encode([signedBody, [new Uint8Array(131072)], [new Uint8Array(48)], [new Uint8Array(48)]]),
  ]);
  t.deepEqual(rejection(() => decodeRawTransaction(wrapped, prague)), {
    code: -32603,
    message: 'blobs failed kzg validation',
  });
  t.deepEqual(rejection(() => decodeRawTransaction(wrapped, txRulesFor(CHAIN_ID, 'shanghai'))), {
    code: -32602,
    message: 'Invalid transaction type',
  });
});

test('blob wrapper versions: version 0 before Osaka, version 1 (EIP-7594 cell proofs) from Osaka, the other refused', (t) => {
  const commitment = new Uint8Array(48).fill(7);
  const versionedHash = sha256(commitment);
  versionedHash[0] = 0x01;
  const body: Field[] = [CHAIN_ID, 0n, 1n, 1000n, 21000n, RECIPIENT, 0n, new Uint8Array(), [], 1n, [versionedHash]];
  const signedBody = RLP.decode(signRaw(3, body, key).subarray(1)) as Uint8Array[];
  const blob = new Uint8Array(131072).fill(3);
  const cellProofs = Array.from({ length: 128 }, (_, i) => new Uint8Array(48).fill(i));
  const v0 = new Uint8Array([3, ...RLP.encode([signedBody, [blob], [commitment], [new Uint8Array(48)]])]);
  const v1 = new Uint8Array([3, ...RLP.encode([signedBody, Uint8Array.of(1), [blob], [commitment], cellProofs])]);
  // What the decoder asks of KZG (whose real checks the node-blob e2e test runs); every proof "holds" here.
  const asked: { method: string; args: unknown[] }[] = [];
  const verifier = {
    verifyBlobProofBatch: (...args: unknown[]) => (asked.push({ method: 'verifyBlobProofBatch', args }), true),
    computeCells: (blob: string) => (asked.push({ method: 'computeCells', args: [blob.length] }), Array.from({ length: 128 }, (_, i) => `0x${i}`)),
    verifyCellKzgProofBatch: (...args: unknown[]) => (asked.push({ method: 'verifyCellKzgProofBatch', args }), true),
  };
  const osaka = txRulesFor(CHAIN_ID, 'osaka');
  const kzgFailure = { code: -32603, message: 'blobs failed kzg validation' };

  t.is(decodeRawTransaction(v0, prague, verifier).type, 3);
  t.deepEqual(asked.map((a) => a.method), ['verifyBlobProofBatch']);
  t.deepEqual(rejection(() => decodeRawTransaction(v1, prague, verifier)), kzgFailure, 'cell proofs before Osaka');

  asked.length = 0;
  t.deepEqual(rejection(() => decodeRawTransaction(v0, osaka, verifier)), kzgFailure, 'a blob proof from Osaka on');
  t.deepEqual(rejection(() => decodeRawTransaction(v0, txRulesFor(CHAIN_ID, 'bpo2'), verifier)), kzgFailure, 'and in the BPO forks');
  t.deepEqual(asked, [], 'refused before any KZG work');
  const decoded = decodeRawTransaction(v1, osaka, verifier);
  t.is(bytesToHex(decoded.canonical!), bytesToHex(new Uint8Array([3, ...RLP.encode(signedBody)])), 'the block form drops the wrapper');
  t.deepEqual(asked.map((a) => a.method), ['computeCells', 'verifyCellKzgProofBatch']);
  t.is(asked[0]!.args[0], 2 + 2 * 131072, 'the cells of the one blob');
  const [commitments, indices, cells, proofs] = asked[1]!.args as string[][];
  t.is(commitments!.length, 128);
  t.true(commitments!.every((c) => c === bytesToHex(commitment)));
  t.deepEqual(indices, Array.from({ length: 128 }, (_, i) => i));
  t.is(cells!.length, 128);
  t.deepEqual(proofs, cellProofs.map(bytesToHex));

  // A version 1 wrapper must carry 128 proofs per blob; a failing cell proof is a KZG failure too.
  const short = new Uint8Array([3, ...RLP.encode([signedBody, Uint8Array.of(1), [blob], [commitment], cellProofs.slice(1)])]);
  t.deepEqual(rejection(() => decodeRawTransaction(short, osaka, verifier)), kzgFailure);
  t.deepEqual(rejection(() => decodeRawTransaction(v1, osaka, { ...verifier, verifyCellKzgProofBatch: () => false })), kzgFailure);
  t.deepEqual(rejection(() => decodeRawTransaction(v1, osaka, { ...verifier, computeCells: () => { throw new Error('bad blob'); } })), kzgFailure);
  const unknownVersion = new Uint8Array([3, ...RLP.encode([signedBody, Uint8Array.of(2), [blob], [commitment], cellProofs])]);
  t.deepEqual(rejection(() => decodeRawTransaction(unknownVersion, osaka, verifier)), kzgFailure);
});

test('checks run in Besu order: chain id before signature before type before fees', (t) => {
  // Wrong chain id and high-s: chain id wins.
  const otherChain = createCustomCommon({ chainId: 99 }, Mainnet, { hardfork: 'prague' });
  const raw = createFeeMarket1559Tx(
    { chainId: 99n, nonce: 0, maxFeePerGas: 1000, maxPriorityFeePerGas: 1, gasLimit: 21000, to: RECIPIENT },
    { common: otherChain },
  )
    .sign(key)
    .serialize();
  const highS = mutate(raw, (v) => (v[11] = bigIntToUnpaddedBytes(SECP256K1_ORDER - bytesToBigInt(v[11]!))));
  t.is(rejection(() => decodeRawTransaction(highS, prague)).message, 'Wrong chainId');
  // Type not allowed and priority fee above max fee: type wins.
  const inverted = signRaw(2, [CHAIN_ID, 0n, 11n, 10n, 20_000n, RECIPIENT, 0n, new Uint8Array(), []], key);
  t.is(rejection(() => decodeRawTransaction(inverted, txRulesFor(CHAIN_ID, 'berlin'))).message, 'Invalid transaction type');
  // Priority fee above max fee and gas below intrinsic: the fee error wins.
  t.is(
    rejection(() => decodeRawTransaction(inverted, prague)).message,
    'Max priority fee per gas exceeds max fee per gas',
  );
});

test('native recovery agrees with ethereumjs for many keys', (t) => {
  for (let i = 0; i < 20; i++) {
    const k = keyFor(1000 + i);
    const tx = createFeeMarket1559Tx(
      { chainId: CHAIN_ID, nonce: i, maxFeePerGas: 1000, maxPriorityFeePerGas: 1, gasLimit: 21000, to: RECIPIENT },
      { common: signingCommon },
    ).sign(k);
    const decoded = decodeRawTransaction(tx.serialize(), prague);
    t.deepEqual(decoded.sender, tx.getSenderAddress().bytes);
    t.deepEqual(decoded.sender, keccak_256(privateToPublic(k)).slice(12));
  }
});

test('piscina task returns plain data or a plain error object', async (t) => {
  const raw = createLegacyTx({ nonce: 0, gasPrice: 1000, gasLimit: 21000, to: RECIPIENT }, { common: signingCommon })
    .sign(key)
    .serialize();
  const [ok, failed] = await decodeTask({ raws: [raw, new Uint8Array([1, 2, 3])], rules: prague });
  t.true(ok !== undefined && 'ok' in ok && ok.ok.nonce === 0n);
  t.deepEqual(failed, { error: { code: -32602, message: 'Invalid params' } });
  // Structured clone keeps the decoded transaction intact, as a worker hand-off would.
  if (ok !== undefined && 'ok' in ok) t.deepEqual(structuredClone(ok.ok), ok.ok);
  t.is(RpcErrors.INVALID_PARAMS.code, -32602);
});
