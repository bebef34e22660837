/**
 * QBFT message codec against every vector of qbft-and-p2p.md §4.5 (Vector B, height 1), the
 * version-compatibility rules of §4.4 / §12.1, and the signature rules of §4.2.
 */
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import type { NestedUint8Array } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { encodeRlp } from '../../src/shared/ethereum/rlp-encode.js';
import { QbftBlock, QbftBlockError } from '../../src/shared/qbft/block.js';
import {
  MessageCode,
  QbftMessageError,
  createCommit,
  createPrepare,
  createProposal,
  createRoundChange,
  decodeMessage,
  largePayloadKeccak,
  signedHash,
} from '../../src/consensus/messages.js';
import type { ProposalMessage, RoundChangeMessage, Signer } from '../../src/consensus/messages.js';
import { addressOf, recoverSealSigner, signHash } from '../../src/shared/qbft/seal.js';
import { signHashWithNoble } from '../harness/noble-signing.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const bytes = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/^0x/, '').replace(/\s+/g, ''), 'hex'));
const key = (n: number): Uint8Array => {
  const k = new Uint8Array(32);
  k[31] = n;
  return k;
};
const signer = (n: number): Signer => ({ key: key(n), address: addressOf(key(n)) });

const GENESIS_EXTRA =
  '0xf87aa00000000000000000000000000000000000000000000000000000000000000000f854941eff47bc3a10a45d4b230b5d10e37751fe6aa718942b5ad5c4795c026514f8317c7a215e218dccd6cf946813eb9362372eef6200f3b1dbc3f819671cba69947e5f4552091a69125d5dfcb7b8c2659029395bdfc080c0';
const GENESIS_HASH = '0x02cd5ecca308044c02b3508a728a7c1bf51533d856334d742d7418d8c3298fc0';
const DIGEST = '0xdacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697';
const EMPTY_LIST_HASH = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const MIX_HASH = '0x63746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365';

/** Vector B block 1: empty, round 0, proposed by key 4 (0x1eff…a718). */
function block1(): QbftBlock {
  const header: Uint8Array[] = [
    bytes(GENESIS_HASH),
    bytes(EMPTY_LIST_HASH),
    bytes('0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718'),
    bytes(EMPTY_TRIE_ROOT),
    bytes(EMPTY_TRIE_ROOT),
    bytes(EMPTY_TRIE_ROOT),
    new Uint8Array(256),
    Uint8Array.of(1),
    Uint8Array.of(1),
    bytes('47b760'),
    new Uint8Array(0),
    bytes('65000002'),
    bytes(GENESIS_EXTRA),
    bytes(MIX_HASH),
    new Uint8Array(8),
  ];
  return QbftBlock.fromValues([header, [], []]);
}

// ---------------------------------------------------------------------------------------------
// Signatures
// ---------------------------------------------------------------------------------------------

test('native signing equals noble RFC 6979 low-s signing on 200 hashes', (t) => {
  let hash = keccak_256(Uint8Array.of(7));
  for (let i = 0; i < 200; i++) {
    hash = keccak_256(hash);
    const k = key((i % 250) + 1);
    t.is(hex(signHash(hash, k)), hex(signHashWithNoble(hash, k)));
  }
});

test('Vector B block 1 digest', (t) => {
  t.is(hex(block1().digest()), DIGEST);
  t.is(hex(block1().hash()), DIGEST);
  t.is(hex(block1().withRound(1).digest()), '0x4948034e9dcc03d1eef93df6df42b159d8c48369938d4e85b83a7409c58097b9');
});

// ---------------------------------------------------------------------------------------------
// §4.5 Prepare and Commit
// ---------------------------------------------------------------------------------------------

const PREPARE_PAYLOAD = '0xe30180a0dacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697';
const PREPARE_HASH = '0xe043344071f14fb18bbb63de61606417d90122125bead20494d1cee7ddc3f815';
const PREPARE_SIGNATURE =
  '0x9b7ebb86f243850cf5e0269881fa725579d9f0bdb0f547a1cee3c8296faa40a13415dd8e0ffca45e20687e2b24a4c83ce2bd6f846011404ac1812cd3275bdc6701';
const PREPARE_DATA =
  '0xf867e30180a0dacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697b8419b7ebb86f243850cf5e0269881fa725579d9f0bdb0f547a1cee3c8296faa40a13415dd8e0ffca45e20687e2b24a4c83ce2bd6f846011404ac1812cd3275bdc6701';

test('§4.5 PREPARE by key 1, round 0: payload, signed hash, signature, message data', (t) => {
  const prepare = createPrepare(signer(1), { height: 1n, round: 0, digest: bytes(DIGEST) });
  t.is(hex(encodeRlp(prepare.signed.payloadValues)), PREPARE_PAYLOAD);
  t.is(hex(signedHash(MessageCode.PREPARE, prepare.signed.payloadValues)), PREPARE_HASH);
  t.is(hex(prepare.signed.signature), PREPARE_SIGNATURE);
  t.is(hex(prepare.data), PREPARE_DATA);

  const decoded = decodeMessage(MessageCode.PREPARE, bytes(PREPARE_DATA));
  t.is(decoded.code, MessageCode.PREPARE);
  if (decoded.code !== MessageCode.PREPARE) return;
  t.is(hex(decoded.signed.author), hex(addressOf(key(1))));
  t.is(decoded.signed.payload.height, 1n);
  t.is(decoded.signed.payload.round, 0);
  t.is(hex(decoded.signed.payload.digest), DIGEST);
});

const COMMIT_SEAL =
  '0x89b189330c68951f5c2d816a159ff44746dd39a983ec84ae6fd4bb00e3e870e53c38358a5f334c70e1d9fe8153b97c7ad9b64bb18342b6736bf8e6eec9a4da2401';
const COMMIT_PAYLOAD =
  '0xf8660180a0dacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697b84189b189330c68951f5c2d816a159ff44746dd39a983ec84ae6fd4bb00e3e870e53c38358a5f334c70e1d9fe8153b97c7ad9b64bb18342b6736bf8e6eec9a4da2401';
const COMMIT_HASH = '0x2c9f5971517af8edaff310bbcd52fc57646a40d2d95565a0c2a07c1103523eac';
const COMMIT_SIGNATURE =
  '0xb949890d301e51deea9fab78db8244f5b658a6da708e993951a6e2be3faa5db83ab8963487d78f1ce418d2de8d77b70ced65d0f8c0c1f6f2f807f046d6e0534a00';
const COMMIT_DATA =
  '0xf8abf8660180a0dacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697b84189b189330c68951f5c2d816a159ff44746dd39a983ec84ae6fd4bb00e3e870e53c38358a5f334c70e1d9fe8153b97c7ad9b64bb18342b6736bf8e6eec9a4da2401b841b949890d301e51deea9fab78db8244f5b658a6da708e993951a6e2be3faa5db83ab8963487d78f1ce418d2de8d77b70ced65d0f8c0c1f6f2f807f046d6e0534a00';

test('§4.5 COMMIT by key 1, round 0: commit seal, payload, signed hash, signature, message data', (t) => {
  const commit = createCommit(signer(1), 1n, 0, bytes(DIGEST));
  t.is(hex(commit.signed.payload.commitSeal), COMMIT_SEAL);
  t.is(hex(encodeRlp(commit.signed.payloadValues)), COMMIT_PAYLOAD);
  t.is(hex(signedHash(MessageCode.COMMIT, commit.signed.payloadValues)), COMMIT_HASH);
  t.is(hex(commit.signed.signature), COMMIT_SIGNATURE);
  t.is(hex(commit.data), COMMIT_DATA);

  const decoded = decodeMessage(MessageCode.COMMIT, bytes(COMMIT_DATA));
  if (decoded.code !== MessageCode.COMMIT) return t.fail('not a commit');
  t.is(hex(decoded.signed.author), hex(addressOf(key(1))));
  t.is(hex(decoded.signed.payload.commitSeal), COMMIT_SEAL);
  t.is(hex(recoverSealSigner(bytes(DIGEST), decoded.signed.payload.commitSeal)), hex(addressOf(key(1))));
});

// ---------------------------------------------------------------------------------------------
// §4.5 Round change
// ---------------------------------------------------------------------------------------------

const RC2_PAYLOAD = '0xc30101c0';
const RC2_HASH = '0x834d3ecc779a1fe0ecb76fde2b3c50a8d549fb838f4b5469ad0a52565c94b3ce';
const RC2_SIGNATURE =
  '0x8a9b5d7f1bdfd6743475ab6314b804748ad48ffbb5c9769aacb5502d00d5fc30428b86e50f1b01d6e6ec587899fab4adca4a81ef597db151491f77132497f7a700';
const RC2_DATA =
  '0xf84cf847c30101c0b8418a9b5d7f1bdfd6743475ab6314b804748ad48ffbb5c9769aacb5502d00d5fc30428b86e50f1b01d6e6ec587899fab4adca4a81ef597db151491f77132497f7a700c080c0';
const RC2_DATA_LEGACY =
  '0xf84bf847c30101c0b8418a9b5d7f1bdfd6743475ab6314b804748ad48ffbb5c9769aacb5502d00d5fc30428b86e50f1b01d6e6ec587899fab4adca4a81ef597db151491f77132497f7a700c0c0';

test('§4.5 ROUND_CHANGE by key 2 to round 1, not prepared: both forms', (t) => {
  const rc = createRoundChange(signer(2), 1n, 1);
  t.is(hex(encodeRlp(rc.signed.payloadValues)), RC2_PAYLOAD);
  t.is(hex(signedHash(MessageCode.ROUND_CHANGE, rc.signed.payloadValues)), RC2_HASH);
  t.is(hex(rc.signed.signature), RC2_SIGNATURE);
  t.is(hex(rc.data), RC2_DATA);
  t.is(hex(createRoundChange(signer(2), 1n, 1, undefined, { legacyForm: true }).data), RC2_DATA_LEGACY);

  for (const [data, legacy] of [[RC2_DATA, false], [RC2_DATA_LEGACY, true]] as const) {
    const decoded = decodeMessage(MessageCode.ROUND_CHANGE, bytes(data)) as RoundChangeMessage;
    t.is(decoded.legacyForm, legacy);
    t.is(hex(decoded.signed.author), hex(addressOf(key(2))));
    t.is(decoded.signed.payload.round, 1);
    t.is(decoded.signed.payload.prepared, undefined);
    t.is(decoded.preparedBlock, undefined);
    t.is(decoded.prepares.length, 0);
  }
});

const RC3_PAYLOAD = '0xe50101e280a0dacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697';
const RC3_HASH = '0x82486f0f64b1cc1fcc3ae91b6d52e26781b7f4b75eafe5ae9e2521eb6fe3fa60';
const RC3_SIGNATURE =
  '0x3346124e2b5547f8f31dbf33c41b21702767f030e2cc9ee9e515d509acfc679415fa425f78199091d6b1542023b70fb359dbac219da6d4cf56fa1c199c46373300';

test('§4.5 ROUND_CHANGE by key 3 to round 1, prepared at round 0, with block and prepares', (t) => {
  const block = block1();
  const prepares = [4, 2, 3].map((n) => createPrepare(signer(n), { height: 1n, round: 0, digest: block.digest() }).signed);
  const rc = createRoundChange(signer(3), 1n, 1, { block, prepares, round: 0 });
  t.is(hex(encodeRlp(rc.signed.payloadValues)), RC3_PAYLOAD);
  t.is(hex(signedHash(MessageCode.ROUND_CHANGE, rc.signed.payloadValues)), RC3_HASH);
  t.is(hex(rc.signed.signature), RC3_SIGNATURE);

  // [ [payload, sig], block1-round0, 0x80, [3 signed prepares] ]
  const items = RLP.decode(rc.data) as NestedUint8Array;
  t.is(items.length, 4);
  t.is(hex(RLP.encode(items[1]!)), hex(block.encode()));
  t.deepEqual(items[2], new Uint8Array(0));
  t.is((items[3] as NestedUint8Array).length, 3);

  for (const legacyForm of [false, true]) {
    const data = legacyForm ? createRoundChange(signer(3), 1n, 1, { block, prepares, round: 0 }, { legacyForm }).data : rc.data;
    const decoded = decodeMessage(MessageCode.ROUND_CHANGE, data) as RoundChangeMessage;
    t.is(decoded.legacyForm, legacyForm);
    t.is(hex(decoded.signed.author), hex(addressOf(key(3))));
    t.is(decoded.signed.payload.prepared?.preparedRound, 0);
    t.is(hex(decoded.signed.payload.prepared!.preparedBlockHash), DIGEST);
    t.is(hex(decoded.preparedBlock!.digest()), DIGEST);
    t.deepEqual(decoded.prepares.map((p) => hex(p.author)), [4, 2, 3].map((n) => hex(addressOf(key(n)))));
  }
});

// ---------------------------------------------------------------------------------------------
// §4.5 Proposal
// ---------------------------------------------------------------------------------------------

const PROPOSAL_HASH = '0xf8dcf64d676eb7a376ba9e38c2f0aa313597c7bb71f050306b4b9a49ecea2cb4';
const PROPOSAL_SIGNATURE =
  '0xba0edf08629702a9dae8accb628842fd3cee8554cf270e106b2a93074f0f38100c9fadf7e9631abba114f947eecd3757693b1e7d01e91fb70a0ea83dae0d1e5001';
const PROPOSAL_DATA = `
f902c8f902c2f9027c0180f90276f90271a002cd5ecca308044c02b3508a728a7c1bf51533d856334d742d7418d8c3298fc0
a01dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347941eff47bc3a10a45d4b230b5d10e37751
fe6aa718a056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421a056e81f171bcc55a6ff8345e6
92c0f86e5b48e01b996cadc001622fb5e363b421a056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e3
63b421b901000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
00000000000000000000000001018347b760808465000002b87cf87aa0000000000000000000000000000000000000000000
0000000000000000000000f854941eff47bc3a10a45d4b230b5d10e37751fe6aa718942b5ad5c4795c026514f8317c7a215e
218dccd6cf946813eb9362372eef6200f3b1dbc3f819671cba69947e5f4552091a69125d5dfcb7b8c2659029395bdfc080c0
a063746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365880000000000000000c0c080b841ba0edf
08629702a9dae8accb628842fd3cee8554cf270e106b2a93074f0f38100c9fadf7e9631abba114f947eecd3757693b1e7d01
e91fb70a0ea83dae0d1e5001c2c0c0`;
const LEGACY_PROPOSAL_HASH = '0xb5ee5028fc3fa4e12303ef6455235563d3ac45a446fb90610ca6db2e3845ad36';
const LEGACY_PROPOSAL_SIGNATURE =
  '0x512e9693e050983b7e5e5384762f93c56c83e5bc2097d9b45768d41c2b2b396220ec43cbb76f41e3cfa84b93dee72eca1ab91eda584a4911682f9f190236548a00';

test('§4.5 PROPOSAL by key 4, round 0, ≥26.1 form: signed hash, signature, all 715 bytes', (t) => {
  const proposal = createProposal(signer(4), 1n, 0, block1());
  t.is(hex(signedHash(MessageCode.PROPOSAL, proposal.signed.payloadValues)), PROPOSAL_HASH);
  t.is(hex(proposal.signed.signature), PROPOSAL_SIGNATURE);
  t.is(proposal.data.length, 715);
  t.is(hex(proposal.data), hex(bytes(PROPOSAL_DATA)));

  const decoded = decodeMessage(MessageCode.PROPOSAL, bytes(PROPOSAL_DATA)) as ProposalMessage;
  t.false(decoded.legacyForm);
  t.is(hex(decoded.signed.author), '0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718');
  t.is(decoded.signed.payload.height, 1n);
  t.is(decoded.signed.payload.round, 0);
  t.is(hex(decoded.signed.payload.block.digest()), DIGEST);
  t.is(decoded.roundChanges.length, 0);
  t.is(decoded.prepares.length, 0);
});

test('§4.5 PROPOSAL ≤25.12 form: its hash and signature, and it is verified over the 3-item payload as received', (t) => {
  const legacy = createProposal(signer(4), 1n, 0, block1(), [], [], { legacyForm: true });
  t.is(hex(signedHash(MessageCode.PROPOSAL, legacy.signed.payloadValues)), LEGACY_PROPOSAL_HASH);
  t.is(hex(legacy.signed.signature), LEGACY_PROPOSAL_SIGNATURE);
  // Differs from the current form only in the payload list header, the missing 0x80 and the lengths.
  t.is(hex(legacy.data.subarray(0, 9)), '0xf902c7f902c1f9027b');
  t.is(legacy.data.length, 714);

  const decoded = decodeMessage(MessageCode.PROPOSAL, legacy.data) as ProposalMessage;
  t.true(decoded.legacyForm);
  t.is(hex(decoded.signed.author), '0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718');
  // What current Besu does instead (§4.4): re-encode as 4 items and recover a random author.
  const fourItemHash = signedHash(MessageCode.PROPOSAL, [...decoded.signed.payloadValues, new Uint8Array(0)]);
  t.is(hex(recoverSealSigner(fourItemHash, decoded.signed.signature)), '0xaf133240fa68ac39a6cd8446a9b536fc1f298786');
});

/** Block 1 of vector B with `count` stand-in transactions (typed-transaction byte strings) in its body. */
function block1With(count: number): QbftBlock {
  const [header] = block1().values() as [Uint8Array[]];
  const transactions = Array.from({ length: count }, (_, i) => Uint8Array.from({ length: 60 + (i % 90) }, (_, j) => (j === 0 ? 2 : (i * 7 + j) % 256)));
  return QbftBlock.fromValues([header, transactions, [], []]);
}

test('a block read from its RLP, body left encoded, makes the same bytes, proposal and round change as the block from values', (t) => {
  for (const count of [0, 1, 3000]) {
    const fromValues = block1With(count);
    const encoded = fromValues.encode();
    const fromRlp = QbftBlock.fromRlp(encoded);
    t.deepEqual(fromRlp.encode(), encoded, `${count} transactions: the same bytes`);
    t.is(fromRlp.transactionCount, count);
    t.is(fromRlp.bodyListLength(1), 0, 'no ommers');
    t.deepEqual(fromRlp.body, fromValues.body, 'the body decodes when read');
    t.deepEqual(fromRlp.hash(), fromValues.hash());
    t.deepEqual(createProposal(signer(4), 1n, 0, fromRlp).data, createProposal(signer(4), 1n, 0, fromValues).data);
    const seals = [signHash(fromRlp.digest(), signer(4).key)];
    t.deepEqual(fromRlp.withSeals(seals).encode(), fromValues.withSeals(seals).encode(), 'sealed');
    const prepares = [createPrepare(signer(3), { height: 1n, round: 0, digest: fromRlp.digest() }).signed];
    t.deepEqual(
      createRoundChange(signer(3), 1n, 1, { block: fromRlp, prepares, round: 0 }).data,
      createRoundChange(signer(3), 1n, 1, { block: fromValues, prepares, round: 0 }).data,
    );
  }
  // Vector B's proposal from the block's RLP.
  t.is(hex(createProposal(signer(4), 1n, 0, QbftBlock.fromRlp(block1().encode())).data), hex(bytes(PROPOSAL_DATA)));
});

test('a proposal carrying a large block is hashed by the WebAssembly keccak once it has loaded, to the same hash', async (t) => {
  const block = block1With(3000);
  const proposal = createProposal(signer(4), 1n, 0, block);
  const nobleHash = keccak_256(encodeRlp([Uint8Array.of(MessageCode.PROPOSAL), proposal.signed.payloadValues]));
  t.deepEqual(signedHash(MessageCode.PROPOSAL, proposal.signed.payloadValues), nobleHash);
  const { loading } = largePayloadKeccak();
  t.truthy(loading, 'a payload that large starts loading it');
  await loading;
  t.is(largePayloadKeccak().engine, 'wasm');
  t.deepEqual(signedHash(MessageCode.PROPOSAL, proposal.signed.payloadValues), nobleHash);
  const decoded = decodeMessage(MessageCode.PROPOSAL, proposal.data) as ProposalMessage;
  t.deepEqual(decoded.signed.author, signer(4).address, 'its signature verifies with either');
});

test('a malformed block RLP is refused with QbftBlockError', (t) => {
  const encoded = block1With(2).encode();
  const [header] = block1().values() as [Uint8Array[]];
  for (const bad of [
    encoded.subarray(0, encoded.length - 1),
    RLP.encode([header, []]),
    RLP.encode([header, Uint8Array.of(1, 2), []]),
    RLP.encode([header.slice(0, 10), [], []]),
    RLP.encode(Uint8Array.of(1, 2, 3)),
  ]) {
    t.throws(() => QbftBlock.fromRlp(bad), { instanceOf: QbftBlockError });
  }
});

test('a round-1 proposal carries its round-change payloads and prepares and decodes back', (t) => {
  const block = block1();
  const prepares = [4, 2, 3].map((n) => createPrepare(signer(n), { height: 1n, round: 0, digest: block.digest() }).signed);
  const roundChanges = [1, 2, 3].map((n) => createRoundChange(signer(n), 1n, 1, { block, prepares, round: 0 }).signed);
  const proposal = createProposal(signer(2), 1n, 1, block.withRound(1), roundChanges, prepares);
  const decoded = decodeMessage(MessageCode.PROPOSAL, proposal.data) as ProposalMessage;
  t.is(hex(decoded.signed.author), hex(addressOf(key(2))));
  t.is(decoded.signed.payload.block.round, 1);
  t.deepEqual(decoded.roundChanges.map((rc) => hex(rc.author)), [1, 2, 3].map((n) => hex(addressOf(key(n)))));
  t.deepEqual(decoded.roundChanges.map((rc) => rc.payload.prepared?.preparedRound), [0, 0, 0]);
  t.is(decoded.prepares.length, 3);
  t.is(hex(decoded.data), hex(proposal.data));
});

// ---------------------------------------------------------------------------------------------
// Rejections
// ---------------------------------------------------------------------------------------------

function withSignature(data: string, mutate: (sig: Uint8Array) => void): Uint8Array {
  const [payload, sig] = RLP.decode(bytes(data)) as [NestedUint8Array, Uint8Array];
  const copy = Uint8Array.from(sig);
  mutate(copy);
  return RLP.encode([payload, copy]);
}

test('a high-s signature, a bad recovery id or a zero r is refused', (t) => {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const highS = withSignature(PREPARE_DATA, (sig) => {
    const s = BigInt(hex(sig.subarray(32, 64)));
    sig.set(bytes((n - s).toString(16).padStart(64, '0')), 32);
    sig[64] ^= 1;
  });
  t.throws(() => decodeMessage(MessageCode.PREPARE, highS), { instanceOf: QbftMessageError, message: /high s/ });
  t.throws(() => decodeMessage(MessageCode.PREPARE, withSignature(PREPARE_DATA, (sig) => (sig[64] = 27))), { instanceOf: QbftMessageError });
  t.throws(() => decodeMessage(MessageCode.PREPARE, withSignature(PREPARE_DATA, (sig) => sig.fill(0, 0, 32))), { instanceOf: QbftMessageError });
});

test('a forged signature decodes to another author, never to the signer', (t) => {
  const forged = withSignature(PREPARE_DATA, (sig) => (sig[10] ^= 0xff));
  try {
    const decoded = decodeMessage(MessageCode.PREPARE, forged);
    t.not(hex(decoded.signed.author), hex(addressOf(key(1))));
  } catch (err) {
    t.true(err instanceof QbftMessageError);
  }
});

test('scalars with leading zeros, oversized heights and rounds, wrong item counts are refused', (t) => {
  const sig = bytes(PREPARE_SIGNATURE);
  const digest = bytes(DIGEST);
  const reject = (payload: NestedUint8Array, what: RegExp) =>
    t.throws(() => decodeMessage(MessageCode.PREPARE, RLP.encode([payload, sig])), { instanceOf: QbftMessageError, message: what });
  reject([Uint8Array.of(0, 1), new Uint8Array(0), digest], /leading zeros/);
  reject([new Uint8Array(9).fill(1), new Uint8Array(0), digest], /longer than 8/);
  reject([Uint8Array.of(1), new Uint8Array(5).fill(1), digest], /longer than 4/);
  reject([Uint8Array.of(1), new Uint8Array(0)], /3 items/);
  reject([Uint8Array.of(1), new Uint8Array(0), digest.subarray(1)], /32 bytes/);
  t.throws(() => decodeMessage(MessageCode.PREPARE, Uint8Array.of(0xc1)), { instanceOf: QbftMessageError });
  t.throws(() => decodeMessage(0x11, bytes(PREPARE_DATA)), { instanceOf: QbftMessageError, message: /unknown/ });
});

test('a block access list that is not the empty string is refused in proposals and round changes', (t) => {
  const items = RLP.decode(bytes(RC2_DATA)) as NestedUint8Array;
  const withBal = RLP.encode([items[0]!, items[1]!, [Uint8Array.of(1)], items[3]!]);
  t.throws(() => decodeMessage(MessageCode.ROUND_CHANGE, withBal), { instanceOf: QbftMessageError, message: /block access lists/ });

  const [[payload, signature], justification] = RLP.decode(bytes(PROPOSAL_DATA)) as [[NestedUint8Array, Uint8Array], NestedUint8Array];
  const tampered = RLP.encode([[[payload[0]!, payload[1]!, payload[2]!, [new Uint8Array(1)]], signature], justification]);
  t.throws(() => decodeMessage(MessageCode.PROPOSAL, tampered), { instanceOf: QbftMessageError, message: /block access lists/ });
});
