/**
 * QBFT extraData codec, header hashes, commit seals, quorum and proposer selection against the
 * vectors of qbft-and-p2p.md §2.4, §2.7, §3.1, §3.2, §9.2 and §9.4.
 */
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';

import {
  BftExtraDataError,
  decodeExtraData,
  encodeExtraData,
  encodeForCommittedSealHash,
  encodeForOnChainHash,
  genesisExtraData,
} from '../../src/shared/qbft/extra-data.js';
import type { BftExtraData } from '../../src/shared/qbft/extra-data.js';
import { plainHeaderHash, qbftCommittedSealHash, qbftOnChainHash } from '../../src/shared/qbft/block-hash.js';
import { createQbftBlock, createQbftHeader, qbftBlockFromRlp, qbftHeaderFromRlp } from '../../src/shared/qbft/ethereumjs-blocks.js';
import {
  addressFromPublicKey,
  addressOf,
  faultTolerance,
  proposerFor,
  publicKeyOf,
  quorum,
  recoverSealSigner,
  signCommitSeal,
} from '../../src/shared/qbft/seal.js';
import { parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { createChainCommon } from '../../src/shared/ethereum/common.js';

const hex = (bytes: Uint8Array): string => '0x' + Buffer.from(bytes).toString('hex');
const bytes = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/^0x/, '').replace(/\s+/g, ''), 'hex'));
/** 20-byte address whose last byte is `n`. */
const smallAddress = (n: number): Uint8Array => {
  const a = new Uint8Array(20);
  a[19] = n;
  return a;
};
/** Private key with integer value `n`. */
const smallKey = (n: number): Uint8Array => {
  const k = new Uint8Array(32);
  k[31] = n;
  return k;
};
/** A 65-byte seal r||s||v with small r and s. */
const smallSeal = (r: number, s: number, v: number): Uint8Array => {
  const seal = new Uint8Array(65);
  seal[31] = r;
  seal[63] = s;
  seal[64] = v;
  return seal;
};

const QBFT_MIX_HASH = '0x63746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365';
const EMPTY_LIST_HASH = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

// ---------------------------------------------------------------------------------------------
// §2.4 extraData codec
// ---------------------------------------------------------------------------------------------

const RAW_HEX_ENCODING_STRING =
  '0xf8f0a00102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20ea940000000000000000' +
  '000000000000000000000001940000000000000000000000000000000000000002d7940000000000000000' +
  '00000000000000000000000181ff83fedcbaf886b841000000000000000000000000000000000000000000' +
  '0000000000000000000001000000000000000000000000000000000000000000000000000000000000000a' +
  '00b841000000000000000000000000000000000000000000000000000000000000000a0000000000000000' +
  '00000000000000000000000000000000000000000000000100';

function besuCodecTestData(): BftExtraData {
  return {
    vanity: Uint8Array.from({ length: 32 }, (_, i) => i + 1),
    validators: [smallAddress(1), smallAddress(2)],
    vote: { recipient: smallAddress(1), add: true },
    round: 0x00fedcba,
    seals: [smallSeal(1, 10, 0), smallSeal(10, 1, 0)],
  };
}

test('encodes Besu QbftExtraDataCodecTest RAW_HEX_ENCODING_STRING', (t) => {
  t.is(hex(encodeExtraData(besuCodecTestData())), RAW_HEX_ENCODING_STRING);
});

test('decodes RAW_HEX_ENCODING_STRING into its fields', (t) => {
  const decoded = decodeExtraData(bytes(RAW_HEX_ENCODING_STRING));
  t.deepEqual(decoded, besuCodecTestData());
});

test('encodes the same data without seals, and without seals and round', (t) => {
  const data = besuCodecTestData();
  t.is(
    hex(encodeForCommittedSealHash(data, data.round)),
    '0xf869a00102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20ea940000000000000000000000000000000000000001940000000000000000000000000000000000000002d794000000000000000000000000000000000000000181ff83fedcbac0',
  );
  t.is(
    hex(encodeForOnChainHash(data)),
    '0xf866a00102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20ea940000000000000000000000000000000000000001940000000000000000000000000000000000000002d794000000000000000000000000000000000000000181ff80c0',
  );
});

test('encodes and decodes a DROP vote', (t) => {
  const encoded = '0xf83ba00000000000000000000000000000000000000000000000000000000000000000c0d69400000000000000000000000000000000000000018080c0';
  const data: BftExtraData = {
    vanity: new Uint8Array(32),
    validators: [],
    vote: { recipient: smallAddress(1), add: false },
    round: 0,
    seals: [],
  };
  t.is(hex(encodeExtraData(data)), encoded);
  t.deepEqual(decodeExtraData(bytes(encoded)), data);
});

test('genesis extraData keeps the validator order given (RLPSubCommandTest)', (t) => {
  const validators = [bytes('be068f726a13c8d46c44be6ce9d275600e1735a4'), bytes('5ff6f4b66a46a2b2310a6f3a93aaddc0d9a1c193')];
  t.is(
    hex(genesisExtraData(validators)),
    '0xf84fa00000000000000000000000000000000000000000000000000000000000000000ea94be068f726a13c8d46c44be6ce9d275600e1735a4945ff6f4b66a46a2b2310a6f3a93aaddc0d9a1c193c080c0',
  );
});

test('contract-mode genesis extraData has no validators', (t) => {
  t.is(hex(genesisExtraData([])), '0xe5a00000000000000000000000000000000000000000000000000000000000000000c0c080c0');
});

test('decodes the Besu rlp-decode vector into its validators', (t) => {
  const decoded = decodeExtraData(
    bytes('0xf84fa00000000000000000000000000000000000000000000000000000000000000000ea94241f804efb46f71acaa5be94a62f7798e89c3724946cdf72da457453063ea92e7fa5ac30afbcec28cdc080c0'),
  );
  t.deepEqual(decoded.validators.map(hex), ['0x241f804efb46f71acaa5be94a62f7798e89c3724', '0x6cdf72da457453063ea92e7fa5ac30afbcec28cd']);
  t.is(decoded.vote, undefined);
  t.is(decoded.round, 0);
  t.deepEqual(decoded.seals, []);
});

test('generate-blockchain-config public keys give the expected addresses and extraData (§9.2)', (t) => {
  const keys = [
    '0x9481ee2b34196827e8c4807ae29c2675c15d3641e482ab81cc0bc3ef535755b426b9f5c474213df28a563fab0bf0830b455ee8955b3faac93075422a6abf160d',
    '0xf9dff57fc0bae7cba6577d82caf40cf6d266afc2a212775eb45c2188ab30aeed01e724daf4203649d4aa7e30717bfeeaf0b4c30b5d651bad39bcae8429759889',
  ];
  const addresses = keys.map((k) => addressFromPublicKey(bytes(k)));
  t.deepEqual(addresses.map(hex), ['0xd5feb0fc5a54a89f97aeb34c3df15397c19f6dd2', '0xd6a9a4c886eb008ac307abdc1f38745c1dd13a88']);
  t.is(
    hex(genesisExtraData(addresses)),
    '0xf84fa00000000000000000000000000000000000000000000000000000000000000000ea94d5feb0fc5a54a89f97aeb34c3df15397c19f6dd294d6a9a4c886eb008ac307abdc1f38745c1dd13a88c080c0',
  );
});

// Decoder rejections (§2.2) -------------------------------------------------------------------

function rejects(t: import('ava').ExecutionContext, encoded: Uint8Array, pattern: RegExp): void {
  const error = t.throws(() => decodeExtraData(encoded), { instanceOf: BftExtraDataError });
  t.regex(error?.message ?? '', pattern);
}

/** RLP of the 5 items with the given raw round/vote/seals items substituted. */
function withItems(items: { vote?: Uint8Array | Uint8Array[]; round?: Uint8Array; seals?: Uint8Array[]; validators?: Uint8Array[] }): Uint8Array {
  return RLP.encode([new Uint8Array(32), items.validators ?? [], items.vote ?? [], items.round ?? new Uint8Array(0), items.seals ?? []]);
}

test('rejects empty extraData with Besu\'s message', (t) => {
  rejects(t, new Uint8Array(0), /^Invalid Bytes supplied - Bft Extra Data required\.$/);
});

test('rejects a round scalar with a leading zero (minimal case 82 0001)', (t) => {
  rejects(t, bytes('0xe7a0' + '00'.repeat(32) + 'c0c0820001c0'), /round.*leading zero/);
});

test('rejects the incorrectlyStructuredRlp round 84 00fedcba', (t) => {
  rejects(t, withItems({ round: bytes('00fedcba') }), /round.*leading zero/);
});

test('rejects a round longer than 4 bytes', (t) => {
  rejects(t, withItems({ round: bytes('0100000000') }), /round.*too long/);
});

test('rejects a vote that is not wrapped in a list', (t) => {
  rejects(t, withItems({ vote: smallAddress(1) }), /vote must be a list/);
});

test('rejects a vote type other than 0xff / empty / 0x00', (t) => {
  rejects(t, withItems({ vote: [smallAddress(1), Uint8Array.of(0x01)] }), /vote type/);
  rejects(t, withItems({ vote: [smallAddress(1), Uint8Array.of(0xff, 0xff)] }), /vote type/);
});

test('accepts the legacy 0x00 DROP vote on decode and re-encodes it as 0x80', (t) => {
  const decoded = decodeExtraData(withItems({ vote: [smallAddress(7), Uint8Array.of(0x00)] }));
  t.deepEqual(decoded.vote, { recipient: smallAddress(7), add: false });
  t.is(hex(encodeExtraData(decoded)), hex(withItems({ vote: [smallAddress(7), new Uint8Array(0)] })));
});

test('rejects a vote list with a wrong item count or a short recipient', (t) => {
  rejects(t, withItems({ vote: [smallAddress(1), Uint8Array.of(0xff), Uint8Array.of(1)] }), /vote must have 2 items/);
  rejects(t, withItems({ vote: [new Uint8Array(19), Uint8Array.of(0xff)] }), /vote recipient must be 20 bytes/);
});

test('rejects validators that are not 20 bytes', (t) => {
  rejects(t, withItems({ validators: [new Uint8Array(21)] }), /validator 0 must be 20 bytes/);
});

test('rejects malformed seals (length, r, s, v)', (t) => {
  rejects(t, withItems({ seals: [new Uint8Array(64)] }), /seal 0 must be 65 bytes/);
  rejects(t, withItems({ seals: [smallSeal(0, 1, 0)] }), /seal 0 has r outside/);
  const highS = smallSeal(1, 0, 0);
  highS.set(bytes('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141'), 32); // s = n
  rejects(t, withItems({ seals: [highS] }), /seal 0 has s outside/);
  rejects(t, withItems({ seals: [smallSeal(1, 1, 0), smallSeal(1, 1, 27)] }), /seal 1 has recovery id 27/);
});

test('rejects non-list extraData, too few items and trailing bytes', (t) => {
  rejects(t, RLP.encode(new Uint8Array(32)), /must be a list/);
  rejects(t, RLP.encode([new Uint8Array(32), [], [], new Uint8Array(0)]), /expected 5 items, got 4/);
  const valid = genesisExtraData([smallAddress(1)]);
  const trailing = new Uint8Array(valid.length + 1);
  trailing.set(valid);
  rejects(t, trailing, /malformed RLP/);
});

test('ignores items after the seals', (t) => {
  const encoded = RLP.encode([new Uint8Array(32), [smallAddress(1)], [], new Uint8Array(0), [], Uint8Array.of(9)]);
  const decoded = decodeExtraData(encoded);
  t.deepEqual(decoded.validators, [smallAddress(1)]);
  t.is(hex(encodeExtraData(decoded)), hex(genesisExtraData([smallAddress(1)])));
});

test('a 4-byte round with the top bit set decodes as a negative int and round-trips as 8 bytes', (t) => {
  const decoded = decodeExtraData(withItems({ round: bytes('80000000') }));
  t.is(decoded.round, -0x80000000);
  const reencoded = RLP.decode(encodeExtraData(decoded)) as Uint8Array[];
  t.is(hex(reencoded[3]), '0xffffffff80000000');
});

// ---------------------------------------------------------------------------------------------
// §2.7 Vector A
// ---------------------------------------------------------------------------------------------

/** A Berlin (15-field header) Common from the Vector B genesis config. */
function preLondonCommon() {
  return createChainCommon(
    parseGenesis({
      config: { chainId: 1337, berlinBlock: 0, qbft: {} },
      gasLimit: '0x47b760',
      difficulty: '0x1',
      alloc: {},
    }),
  );
}

const VECTOR_A_KEYS = [1, 2, 3, 4].map(smallKey);
const VECTOR_A_SEALS = [
  '0x88ebd58211f3ec69ed976122ea6277d7da3ad32678e7490ece5c7e058a68a16765f01c717e091481eb3ca5728a7dfbba0bd3872d1ed7fb27ca10bc300c2badf101',
  '0x5c18ba67e06fdfaf52668ffa68c91bb3b2086c3090746de53dc8234d779239303eb4417fe5a50886151c1caf33d0f3f73bacc92b0803d8a39f703f7af69559d301',
  '0x7b3778e1e3e8d456b8a5a8e285f04b160a09fa2055f5aed7c1124b1a96055e0334704a0785a625c4593d78793aa5abc0dc77d78237915f5ac0d561913a58083100',
  '0x7b6f4fa289041e81fa90bff23efda161b7652b9ff50b9da744ba02900e70db497b58c74ed68fa03034cd5afb0b9735a30a852a105c78739dd2783118a5556c2a01',
];
const VECTOR_A_SIGNERS = [
  '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf',
  '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf',
  '0x6813eb9362372eef6200f3b1dbc3f819671cba69',
  '0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718',
];

function vectorAExtra(seals: Uint8Array[]): BftExtraData {
  return {
    vanity: Uint8Array.from({ length: 32 }, (_, i) => i),
    validators: [smallAddress(1), smallAddress(2)],
    vote: { recipient: smallAddress(3), add: true },
    round: 0xfedcba,
    seals,
  };
}

function vectorAHeader(seals: Uint8Array[]) {
  return createQbftHeader(
    {
      parentHash: bytes('0xa7762d3307dbf2ae6a1ae1b09cf61c7603722b2379731b6b90409cdb8c8288a0'),
      uncleHash: bytes(EMPTY_LIST_HASH),
      coinbase: new Uint8Array(20),
      stateRoot: bytes('0xca07595b82f908822971b7e848398e3395e59ee52565c7ef3603df1a1fa7bc80'),
      transactionsTrie: bytes(EMPTY_TRIE_ROOT),
      receiptTrie: bytes(EMPTY_TRIE_ROOT),
      difficulty: 1n,
      number: 1n,
      gasLimit: 4704588n,
      gasUsed: 0n,
      timestamp: 1530674616n,
      extraData: encodeExtraData(vectorAExtra(seals)),
      mixHash: bytes(QBFT_MIX_HASH),
      nonce: new Uint8Array(8),
    },
    { common: preLondonCommon(), setHardfork: true },
  );
}

test('Vector A: seal-hash and on-chain extraData encodings', (t) => {
  const data = vectorAExtra([]);
  t.is(
    hex(encodeForCommittedSealHash(data, data.round)),
    '0xf869a0000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1fea940000000000000000000000000000000000000001940000000000000000000000000000000000000002d794000000000000000000000000000000000000000381ff83fedcbac0',
  );
  t.is(
    hex(encodeForOnChainHash(data)),
    '0xf866a0000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1fea940000000000000000000000000000000000000001940000000000000000000000000000000000000002d794000000000000000000000000000000000000000381ff80c0',
  );
});

test('Vector A: committed-seal hash, deterministic seals, recovery and on-chain hash', (t) => {
  const unsealed = vectorAHeader([]);
  t.is(unsealed.raw().length, 15);
  const sealHash = qbftCommittedSealHash(unsealed, 0xfedcba);
  t.is(hex(sealHash), '0x81db92ea38284f1c7cf1595a1e4f74caede5d961a418bf0f7ce0ab05d680ab9f');

  const seals = VECTOR_A_KEYS.map((key) => signCommitSeal(sealHash, key));
  t.deepEqual(seals.map(hex), VECTOR_A_SEALS);
  t.deepEqual(seals.map((seal) => hex(recoverSealSigner(sealHash, seal))), VECTOR_A_SIGNERS);
  t.deepEqual(VECTOR_A_KEYS.map((key) => hex(addressOf(key))), VECTOR_A_SIGNERS);

  const sealed = vectorAHeader(seals);
  const onChainHash = '0x6c9fa1845957da70ab04f12c452e0d2b76065a50105e8f59098c8be808b91f6f';
  t.is(hex(sealed.hash()), onChainHash);
  t.is(hex(unsealed.hash()), onChainHash, 'seals do not change the block hash');
  t.is(hex(qbftOnChainHash(sealed.raw())), onChainHash, 'raw values give the same hash');
  t.is(hex(qbftCommittedSealHash(sealed, 0xfedcba)), hex(sealHash), 'seal hash ignores the seals');
  t.not(hex(plainHeaderHash(sealed)), onChainHash);
});

test('seals are low-s with v in {0,1}', (t) => {
  const halfN = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
  for (let i = 1; i <= 20; i++) {
    const seal = signCommitSeal(keccak_256(Uint8Array.of(i)), smallKey(i));
    t.true(BigInt(hex(seal.subarray(32, 64))) <= halfN);
    t.true(seal[64] === 0 || seal[64] === 1);
  }
});

// ---------------------------------------------------------------------------------------------
// §2.7 Vector B
// ---------------------------------------------------------------------------------------------

const VECTOR_B_VALIDATORS = [
  '0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718',
  '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf',
  '0x6813eb9362372eef6200f3b1dbc3f819671cba69',
  '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf',
];
const VECTOR_B_GENESIS_EXTRA =
  '0xf87aa00000000000000000000000000000000000000000000000000000000000000000f854941eff47bc3a10a45d4b230b5d10e37751fe6aa718942b5ad5c4795c026514f8317c7a215e218dccd6cf946813eb9362372eef6200f3b1dbc3f819671cba69947e5f4552091a69125d5dfcb7b8c2659029395bdfc080c0';
const VECTOR_B_GENESIS_HASH = '0x02cd5ecca308044c02b3508a728a7c1bf51533d856334d742d7418d8c3298fc0';
const VECTOR_B_BLOCK1_HASH = '0xdacdc48f06abcbe59c445e3f71d1318a913d4c3458198717d6cecc13e9cab697';
const VECTOR_B_SEALED_EXTRA =
  '0xf90144a00000000000000000000000000000000000000000000000000000000000000000f854941eff47bc3a10a45d4b230b5d10e37751fe6aa718942b5ad5c4795c026514f8317c7a215e218dccd6cf946813eb9362372eef6200f3b1dbc3f819671cba69947e5f4552091a69125d5dfcb7b8c2659029395bdfc080f8c9b841dcd572369a17a10814ee1461becf24909ccc0adfaf747e183da5f82d5f8b21dd3fb6b4fc6b1a899a5296dcca15d4bc287a1f37ef027143b54e4733eba2819c3c00b8412509f28f515fce800faef926c172396de0f6ac7a45129020badf3c133187ad1f139e6cd5d653afcdcdc1c74cb510b62d4b0a3c64f9f2833527d2d53b7028de8d00b841d95ac5a8cf79bcf7ddfcd91727380210b5e1fe78339fbcdbbf783dcb8666d13a125d65410c69a689169439c421a8c95eaf0b53712f2cbb1425217da82e56089001';
const VECTOR_B_SEALED_HEADER_RLP = `
f9033da002cd5ecca308044c02b3508a728a7c1bf51533d856334d742d7418d8c3298fc0a01dcc4de8dec75d7aab85b567b6
ccd41ad312451b948a7413f0a142fd40d49347941eff47bc3a10a45d4b230b5d10e37751fe6aa718a056e81f171bcc55a6ff
8345e692c0f86e5b48e01b996cadc001622fb5e363b421a056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc00162
2fb5e363b421a056e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421b901000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000101
8347b760808465000002b90147f90144a00000000000000000000000000000000000000000000000000000000000000000f8
54941eff47bc3a10a45d4b230b5d10e37751fe6aa718942b5ad5c4795c026514f8317c7a215e218dccd6cf946813eb936237
2eef6200f3b1dbc3f819671cba69947e5f4552091a69125d5dfcb7b8c2659029395bdfc080f8c9b841dcd572369a17a10814
ee1461becf24909ccc0adfaf747e183da5f82d5f8b21dd3fb6b4fc6b1a899a5296dcca15d4bc287a1f37ef027143b54e4733
eba2819c3c00b8412509f28f515fce800faef926c172396de0f6ac7a45129020badf3c133187ad1f139e6cd5d653afcdcdc1
c74cb510b62d4b0a3c64f9f2833527d2d53b7028de8d00b841d95ac5a8cf79bcf7ddfcd91727380210b5e1fe78339fbcdbbf
783dcb8666d13a125d65410c69a689169439c421a8c95eaf0b53712f2cbb1425217da82e56089001a063746963616c206279
7a616e74696e65206661756c7420746f6c6572616e6365880000000000000000`;

/** Keys of the sorted validators: 4, 2, 3, 1. */
const VECTOR_B_KEYS = [4, 2, 3, 1].map(smallKey);

function vectorBBlock1(extraData: Uint8Array) {
  return createQbftBlock(
    {
      header: {
        parentHash: bytes(VECTOR_B_GENESIS_HASH),
        coinbase: bytes(VECTOR_B_VALIDATORS[0]),
        stateRoot: bytes(EMPTY_TRIE_ROOT),
        difficulty: 1n,
        number: 1n,
        gasLimit: 0x47b760n,
        gasUsed: 0n,
        timestamp: 0x65000002n,
        extraData,
        mixHash: bytes(QBFT_MIX_HASH),
        nonce: new Uint8Array(8),
      },
    },
    { common: preLondonCommon(), setHardfork: true },
  );
}

test('Vector B: sorted validators come from keys 4, 2, 3, 1 and match the genesis extraData', (t) => {
  t.deepEqual(VECTOR_B_KEYS.map((k) => hex(addressOf(k))), VECTOR_B_VALIDATORS);
  t.is(hex(genesisExtraData(VECTOR_B_VALIDATORS.map(bytes))), VECTOR_B_GENESIS_EXTRA);
});

test('Vector B: block 1 digest, round-1 digest, and block.hash() honouring the QBFT hash', (t) => {
  const block = vectorBBlock1(bytes(VECTOR_B_GENESIS_EXTRA));
  t.is(hex(block.hash()), VECTOR_B_BLOCK1_HASH);
  t.is(hex(block.header.hash()), VECTOR_B_BLOCK1_HASH);
  t.is(hex(qbftCommittedSealHash(block.header, 0)), VECTOR_B_BLOCK1_HASH);
  t.is(hex(qbftCommittedSealHash(block.header, 1)), '0x4948034e9dcc03d1eef93df6df42b159d8c48369938d4e85b83a7409c58097b9');
  t.true(Object.isFrozen(block));
  t.true(Object.isFrozen(block.header));

  // A round-1 re-proposal of the same block keeps the on-chain hash.
  const round1 = { ...decodeExtraData(bytes(VECTOR_B_GENESIS_EXTRA)), round: 1 };
  t.is(hex(vectorBBlock1(encodeExtraData(round1)).hash()), VECTOR_B_BLOCK1_HASH);
});

test('Vector B: seals of validators 0..2 give the sealed extraData and header RLP', (t) => {
  const digest = bytes(VECTOR_B_BLOCK1_HASH);
  const seals = VECTOR_B_KEYS.slice(0, 3).map((key) => signCommitSeal(digest, key));
  const sealedExtra = encodeExtraData({ ...decodeExtraData(bytes(VECTOR_B_GENESIS_EXTRA)), seals });
  t.is(hex(sealedExtra), VECTOR_B_SEALED_EXTRA);

  const sealedBlock = vectorBBlock1(sealedExtra);
  t.is(hex(RLP.encode(sealedBlock.header.raw())), hex(bytes(VECTOR_B_SEALED_HEADER_RLP)));
  t.is(hex(sealedBlock.hash()), VECTOR_B_BLOCK1_HASH);
});

test('Vector B: the sealed header RLP decodes with hash 0xdacd…b697 and seals recover to validators', (t) => {
  const rlp = bytes(VECTOR_B_SEALED_HEADER_RLP);
  t.is(rlp.length, 832);
  const header = qbftHeaderFromRlp(rlp, preLondonCommon());
  t.is(hex(header.hash()), VECTOR_B_BLOCK1_HASH);
  t.not(hex(plainHeaderHash(header)), VECTOR_B_BLOCK1_HASH);

  const extra = decodeExtraData(header.extraData);
  t.is(extra.seals.length, 3);
  const sealHash = qbftCommittedSealHash(header, extra.round, extra);
  t.deepEqual(extra.seals.map((seal) => hex(recoverSealSigner(sealHash, seal))), VECTOR_B_VALIDATORS.slice(0, 3));

  // The same header inside a block body [header, txs, ommers] decodes the same way.
  const blockRlp = RLP.encode([RLP.decode(rlp) as Uint8Array[], [], []]);
  const block = qbftBlockFromRlp(blockRlp, preLondonCommon());
  t.is(hex(block.hash()), VECTOR_B_BLOCK1_HASH);
  t.is(block.transactions.length, 0);
});

test('createQbftHeader rejects a header whose extraData Besu would not decode', (t) => {
  t.throws(() => vectorBBlock1(new Uint8Array(0)), { instanceOf: BftExtraDataError });
  t.throws(() => vectorBBlock1(Uint8Array.of(0x01, 0x02)), { instanceOf: BftExtraDataError });
});

test('genesis (number 0) headers hash unchanged, whatever the extraData', (t) => {
  const header = createQbftHeader(
    { number: 0n, difficulty: 1n, gasLimit: 5000n, extraData: Uint8Array.of(0x42) },
    { common: preLondonCommon(), setHardfork: true },
  );
  t.is(hex(header.hash()), hex(plainHeaderHash(header)));
});

// ---------------------------------------------------------------------------------------------
// §3.1 quorum, §3.2 proposer
// ---------------------------------------------------------------------------------------------

test('quorum values of Besu\'s tests', (t) => {
  const expected: Array<[number, number]> = [[1, 1], [2, 2], [3, 2], [4, 3], [5, 4], [7, 5], [10, 7], [15, 10], [20, 14]];
  for (const [n, q] of expected) t.is(quorum(n), q, `q(${n})`);
});

test('f+1 values of Besu\'s tests', (t) => {
  const expected: Array<[number, number]> = [[4, 2], [6, 2], [7, 3], [9, 3], [10, 4], [13, 5], [15, 5]];
  for (const [n, f1] of expected) t.is(faultTolerance(n) + 1, f1, `f(${n})+1`);
});

test('proposer after a zero-coinbase genesis: V[0] at round 0, V[1] at round 1 (Vector B)', (t) => {
  const validators = VECTOR_B_VALIDATORS.map(bytes);
  t.is(hex(proposerFor(validators, new Uint8Array(20), 0)), VECTOR_B_VALIDATORS[0]);
  t.is(hex(proposerFor(validators, new Uint8Array(20), 1)), VECTOR_B_VALIDATORS[1]);
  t.is(hex(proposerFor(validators, new Uint8Array(20), 5)), VECTOR_B_VALIDATORS[1], 'rounds wrap around');
});

test('proposer rotates to the next validator, wrapping after the last', (t) => {
  const validators = [1, 2, 3, 4].map((n) => smallAddress(n * 16));
  for (let i = 0; i < 4; i++) {
    t.is(hex(proposerFor(validators, validators[i], 0)), hex(validators[(i + 1) % 4]));
    t.is(hex(proposerFor(validators, validators[i], 2)), hex(validators[(i + 3) % 4]));
  }
});

test('a removed previous proposer is succeeded by the validator now at its old index', (t) => {
  const [a, b, c, d] = [1, 2, 3, 4].map((n) => smallAddress(n * 16));
  t.is(hex(proposerFor([a, c, d], b, 0)), hex(c));
  t.is(hex(proposerFor([a, c, d], b, 1)), hex(d));
  // Removed while last in the list: start again from the first.
  t.is(hex(proposerFor([a, b, c], d, 0)), hex(a));
});

// ---------------------------------------------------------------------------------------------
// §9.4 key vectors
// ---------------------------------------------------------------------------------------------

test('private key → public key → address (Besu public-key export vector)', (t) => {
  const key = bytes('8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63');
  const publicKey = publicKeyOf(key);
  t.is(
    hex(publicKey),
    '0x09b02f8a5fddd222ade4ea4528faefc399623af3f736be3c44f03e2df22fb792f3931a4d9573d333ca74343305762a753388c3422a86d98b713fc91c1ea04842',
  );
  t.is(hex(addressFromPublicKey(publicKey)), '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73');
  t.is(hex(addressOf(key)), '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73');
});
