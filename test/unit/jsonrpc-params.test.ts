import test from 'ava';
import { RpcError, RpcErrors } from '../../src/shared/rpc/errors.js';
import {
  javaLongDecode,
  parseAddress,
  parseBlockRef,
  parseBlockTag,
  parseBoolean,
  parseCallRequest,
  parseData,
  parseHash,
  parseQuantity,
  parseSha3Input,
  parseStateOverrides,
  parseUnsignedLong,
} from '../../src/shared/rpc/params.js';
import type { RpcErrorObject } from '../../src/shared/rpc/types.js';

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const ERR: RpcErrorObject = { code: -32602, message: 'test variant' };

function failsWith(t: import('ava').ExecutionContext, run: () => unknown, error: RpcErrorObject, label?: string) {
  const thrown = t.throws(run, { instanceOf: RpcError }, label);
  t.deepEqual(thrown?.toObject(), error, label);
}

test('javaLongDecode: hex, #, octal, decimal, signs and range', (t) => {
  t.is(javaLongDecode('0x10'), 16n);
  t.is(javaLongDecode('0X10'), 16n);
  t.is(javaLongDecode('#10'), 16n);
  t.is(javaLongDecode('16'), 16n);
  t.is(javaLongDecode('010'), 8n);
  t.is(javaLongDecode('0'), 0n);
  t.is(javaLongDecode('-0x10'), -16n);
  t.is(javaLongDecode('+7'), 7n);
  t.is(javaLongDecode('0x7fffffffffffffff'), 2n ** 63n - 1n);
  t.is(javaLongDecode('-0x8000000000000000'), -(2n ** 63n));
  for (const bad of ['', '0x', '08', '0x-5', '--1', '1.5', '0x8000000000000000', ' 1', 'latest', '0x0L']) {
    t.is(javaLongDecode(bad), undefined, bad);
  }
});

test('javaLongDecode: leading zeros do not count; a giant number is refused at once, not parsed', (t) => {
  t.is(javaLongDecode('-9223372036854775808'), -(2n ** 63n));
  t.is(javaLongDecode('-01000000000000000000000'), -(2n ** 63n));
  t.is(javaLongDecode(`0x${'0'.repeat(1000)}ff`), 255n);
  t.is(javaLongDecode(`${'0'.repeat(1000)}`), 0n);
  t.is(javaLongDecode('9223372036854775808'), undefined);
  const started = performance.now();
  for (const giant of ['1'.repeat(5_000_000), `0x${'f'.repeat(5_000_000)}`, `0${'7'.repeat(5_000_000)}`]) t.is(javaLongDecode(giant), undefined);
  // BigInt would take seconds on these; the digit count answers in milliseconds.
  t.true(performance.now() - started < 1000);
  t.deepEqual(
    t.throws(() => parseBlockTag('1'.repeat(5_000_000)))?.message,
    RpcErrors.INVALID_BLOCK_NUMBER_PARAMS.message,
  );
  t.is(t.throws(() => parseAddress(`0x${'a'.repeat(5_000_000)}`))?.message, RpcErrors.INVALID_ADDRESS_PARAMS.message);
});

test('block tags are case-insensitive; numbers follow Long.decode; JSON integers accepted', (t) => {
  t.deepEqual(parseBlockTag('LATEST'), { kind: 'tag', tag: 'latest' });
  t.deepEqual(parseBlockTag('Pending'), { kind: 'tag', tag: 'pending' });
  for (const tag of ['earliest', 'finalized', 'safe'] as const) t.deepEqual(parseBlockTag(tag), { kind: 'tag', tag });
  t.deepEqual(parseBlockTag('#10'), { kind: 'number', number: 16n });
  t.deepEqual(parseBlockTag('020'), { kind: 'number', number: 16n });
  t.deepEqual(parseBlockTag(25), { kind: 'number', number: 25n });
  failsWith(t, () => parseBlockTag('-1'), RpcErrors.INVALID_BLOCK_NUMBER_PARAMS);
  failsWith(t, () => parseBlockTag('nope', ERR), ERR);
  failsWith(t, () => parseBlockTag(1.5, ERR), ERR);
  failsWith(t, () => parseBlockTag(undefined, ERR), ERR);
});

test('block-or-hash: 32-byte hash strings, EIP-1898 objects, tags and numbers', (t) => {
  const hash = 'b73cee02246c6f32ac0f459934e89102c2ce904d966a4fc2ab6309c3e104b9cb';
  t.deepEqual(parseBlockRef('0x' + hash), { kind: 'hash', hash: bytes(hash), requireCanonical: false });
  t.deepEqual(parseBlockRef({ blockHash: '0x' + hash, requireCanonical: true }), { kind: 'hash', hash: bytes(hash), requireCanonical: true });
  t.deepEqual(parseBlockRef({ blockHash: '0x' + hash }), { kind: 'hash', hash: bytes(hash), requireCanonical: false });
  t.deepEqual(parseBlockRef({ blockNumber: '0x19' }), { kind: 'number', number: 25n });
  t.deepEqual(parseBlockRef('latest'), { kind: 'tag', tag: 'latest' });
  const invalid = RpcErrors.INVALID_BLOCK_PARAMS;
  failsWith(t, () => parseBlockRef({ blockHash: '0x' + hash, blockNumber: '0x1' }), invalid, 'both members');
  failsWith(t, () => parseBlockRef({}), invalid, 'no member');
  failsWith(t, () => parseBlockRef({ blockHash: '0x1234' }), invalid, 'short hash');
  failsWith(t, () => parseBlockRef({ blockHash: '0x' + hash, requireCanonical: 'yes' }), invalid, 'non-boolean requireCanonical');
  failsWith(t, () => parseBlockRef('0x' + hash + '12'), invalid, '33-byte hash');
  failsWith(t, () => parseBlockRef(null), invalid, 'null');
  failsWith(t, () => parseBlockRef('-0x10'), RpcErrors.INVALID_BLOCK_NUMBER_PARAMS, 'negative');
});

test('addresses are lenient: 0x optional, short and odd-length values left-padded', (t) => {
  const full = '8888f1f195afa192cfee860698584c030f4c9db1';
  t.deepEqual(parseAddress('0x' + full), bytes(full));
  t.deepEqual(parseAddress(full.toUpperCase()), bytes(full));
  t.deepEqual(parseAddress('0x1'), bytes('00'.repeat(19) + '01'));
  t.deepEqual(parseAddress('0xdad'), bytes('00'.repeat(18) + '0dad'));
  failsWith(t, () => parseAddress('0x' + full + '00'), RpcErrors.INVALID_ADDRESS_PARAMS);
  failsWith(t, () => parseAddress('0xzz'), RpcErrors.INVALID_ADDRESS_PARAMS);
  failsWith(t, () => parseAddress(5), RpcErrors.INVALID_ADDRESS_PARAMS);
});

test('hashes must be exactly 32 bytes; data must have even length', (t) => {
  const hash = 'ab'.repeat(32);
  t.deepEqual(parseHash('0x' + hash, ERR), bytes(hash));
  t.deepEqual(parseHash(hash, ERR), bytes(hash));
  for (const bad of ['0x' + hash.slice(2), '0x00', '0x' + hash + 'ab', 42]) failsWith(t, () => parseHash(bad, ERR), ERR, String(bad));
  t.deepEqual(parseData('0x', ERR), new Uint8Array(0));
  t.deepEqual(parseData('0x0a0B', ERR), Uint8Array.of(10, 11));
  failsWith(t, () => parseData('0x123', ERR), ERR);
});

test('decoded bytes own their memory (a structured clone copies only them)', (t) => {
  const parsed = parseData('0x0102', ERR);
  t.is(parsed.byteOffset, 0);
  t.is(parsed.buffer.byteLength, 2);
  t.false(Buffer.isBuffer(parsed));
});

test('quantities: UInt256 lenient hex; unsigned longs: Long.decode or JSON integers', (t) => {
  t.is(parseQuantity('0x000000000000000000000000000000000000000000000000000000003437004a', ERR), 0x3437004an);
  t.is(parseQuantity('0x', ERR), 0n);
  t.is(parseQuantity('ff', ERR), 255n);
  failsWith(t, () => parseQuantity('0x1' + '0'.repeat(64), ERR), ERR, '257 bits');
  failsWith(t, () => parseQuantity(10, ERR), ERR, 'JSON number');
  t.is(parseUnsignedLong('0x5208', ERR), 21000n);
  t.is(parseUnsignedLong('21000', ERR), 21000n);
  t.is(parseUnsignedLong(88, ERR), 88n);
  failsWith(t, () => parseUnsignedLong('-1', ERR), ERR);
  failsWith(t, () => parseUnsignedLong(-1, ERR), ERR);
});

test('booleans accept JSON booleans and Jackson-coercible strings', (t) => {
  t.true(parseBoolean(true, ERR));
  t.true(parseBoolean('TRUE', ERR));
  t.false(parseBoolean('false', ERR));
  for (const bad of [1, 'yes', null, undefined]) failsWith(t, () => parseBoolean(bad, ERR), ERR, String(bad));
});

test('web3_sha3 input: empty or 0x-prefixed, odd length padded', (t) => {
  t.deepEqual(parseSha3Input(''), new Uint8Array(0));
  t.deepEqual(parseSha3Input('0xabc'), Uint8Array.of(0x0a, 0xbc));
  failsWith(t, () => parseSha3Input('abc'), RpcErrors.INVALID_DATA_PARAMS);
});

test('call object: every field, data/input, gasPrice dropped beside 1559 fees, unknown fields ignored', (t) => {
  const call = parseCallRequest({
    from: 'a94f5374fce5edbc8e2a8697c15331677e6ebf0b',
    to: '0x6295ee1b4f6dd65047762f924ecd367c17eabf8f',
    gas: '0x5208',
    gasPrice: '0x1',
    maxFeePerGas: '0x10',
    maxPriorityFeePerGas: '0x2',
    maxFeePerBlobGas: '0x3',
    value: '0x000002',
    input: '0x12a7b914',
    data: '0x12a7b914',
    accessList: [{ address: '0x01', storageKeys: ['0x' + '00'.repeat(32)] }],
    blobVersionedHashes: ['0x01' + '00'.repeat(31)],
    nonce: '0x22',
    chainId: '0x1',
    authorizationList: [{ chainId: '0x1', address: '0x02', nonce: '0x0', yParity: '0x1', r: '0x5', s: '0x6' }],
    strict: true,
    somethingElse: { ignored: true },
  });
  t.deepEqual(call, {
    from: bytes('a94f5374fce5edbc8e2a8697c15331677e6ebf0b'),
    to: bytes('6295ee1b4f6dd65047762f924ecd367c17eabf8f'),
    gas: 21000n,
    maxPriorityFeePerGas: 2n,
    maxFeePerGas: 16n,
    maxFeePerBlobGas: 3n,
    value: 2n,
    input: bytes('12a7b914'),
    accessList: [{ address: bytes('00'.repeat(19) + '01'), storageKeys: [new Uint8Array(32)] }],
    blobVersionedHashes: [bytes('01' + '00'.repeat(31))],
    nonce: 34n,
    chainId: 1n,
    authorizationList: [{ chainId: 1n, address: bytes('00'.repeat(19) + '02'), nonce: 0n, yParity: 1n, r: 5n, s: 6n }],
    strict: true,
  });
  t.deepEqual(parseCallRequest({ gasPrice: '0x7', data: '0x01' }), { gasPrice: 7n, input: Uint8Array.of(1) });
  t.deepEqual(parseCallRequest({ to: null, value: null }), {});
  const invalid = RpcErrors.INVALID_CALL_PARAMS;
  failsWith(t, () => parseCallRequest({ input: '0x01', data: '0x02' }), invalid, 'data ≠ input');
  failsWith(t, () => parseCallRequest({ blobVersionedHashes: ['0x0'] }), invalid, 'short blob hash');
  failsWith(t, () => parseCallRequest({ gas: '-1' }), invalid, 'negative gas');
  failsWith(t, () => parseCallRequest({ strict: 'maybe' }), invalid, 'strict');
  failsWith(t, () => parseCallRequest([]), invalid, 'array');
});

test('state overrides: lenient addresses, storage words, movePrecompileToAddress kept only when given', (t) => {
  const overrides = parseStateOverrides({
    a94f5374fce5edbc8e2a8697c15331677e6ebf0b: { balance: '0xde0b6b3a7640000', nonce: 88 },
    '0xb9741079a300Cb3B8f324CdDB847c0d1d273a05E': {
      stateDiff: { '0x1cf7945003fc5b59d2f6736f0704557aa805c4f2844084ccd1173b8d56946962': '0x110ed03bf7' },
      movePrecompileToAddress: null,
      code: '0x6000',
    },
  });
  t.deepEqual(overrides, [
    { address: bytes('a94f5374fce5edbc8e2a8697c15331677e6ebf0b'), balance: 10n ** 18n, nonce: 88n },
    {
      address: bytes('b9741079a300cb3b8f324cddb847c0d1d273a05e'),
      code: Uint8Array.of(0x60, 0),
      stateDiff: [[bytes('1cf7945003fc5b59d2f6736f0704557aa805c4f2844084ccd1173b8d56946962'), bytes('00'.repeat(27) + '110ed03bf7')]],
      movePrecompileToAddress: null,
    },
  ]);
  t.is(parseStateOverrides(undefined), undefined);
  t.is(parseStateOverrides(null), undefined);
  failsWith(t, () => parseStateOverrides({ '0x01': { state: {}, stateDiff: {} } }), RpcErrors.INVALID_CALL_PARAMS, 'state and stateDiff');
  failsWith(t, () => parseStateOverrides({ '0x01': 5 }), RpcErrors.INVALID_CALL_PARAMS, 'non-object override');
});
