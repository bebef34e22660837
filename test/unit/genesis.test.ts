/**
 * Besu genesis parsing, the ethereumjs Common built from it, genesis state roots and hashes
 * (qbft-and-p2p.md §9.1, §11; Besu's hive test genesis) and Basalt's embedded dev network.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createVM, runBlock } from '@ethereumjs/vm';
import { Address, bigIntToBytes, ecrecover, setLengthLeft } from '@ethereumjs/util';
import * as nobleSecp from '@noble/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3.js';

import {
  GenesisError,
  ONE_GWEI,
  loadDevNetwork,
  parseGenesis,
  parseGenesisJson,
} from '../../src/shared/ethereum/genesis.js';
import {
  buildGenesis,
  computeGenesisStateRoot,
  createChainCommon,
  hardforkSchedule,
  nativeEcrecover,
  writeGenesisState,
} from '../../src/shared/ethereum/common.js';
import { formatNodeKey, NodeKeyFileError, parseNodeKey } from '../../src/shared/ethereum/node-key.js';
import { decodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf, signCommitSeal } from '../../src/shared/qbft/seal.js';
import { createQbftBlock } from '../../src/shared/qbft/ethereumjs-blocks.js';
import type { Genesis } from '../../src/shared/ethereum/genesis.js';
import { BESU_FIXTURES } from '../helpers/node-process.js';
import { join } from 'node:path';

const hex = (bytes: Uint8Array): string => '0x' + Buffer.from(bytes).toString('hex');
const bytes = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/^0x/, ''), 'hex'));

const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const QBFT_MIX_HASH = '0x63746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365';

/** The minimal example of §9.1 (Vector B genesis). */
function vectorBGenesisJson(): Record<string, unknown> {
  return {
    config: {
      chainId: 1337,
      berlinBlock: 0,
      qbft: { blockperiodseconds: 2, epochlength: 30000, requesttimeoutseconds: 4 },
    },
    nonce: '0x0',
    timestamp: '0x65000000',
    gasLimit: '0x47b760',
    difficulty: '0x1',
    mixHash: QBFT_MIX_HASH,
    coinbase: '0x0000000000000000000000000000000000000000',
    alloc: {},
    extraData:
      '0xf87aa00000000000000000000000000000000000000000000000000000000000000000f854941eff47bc3a10a45d4b230b5d10e37751fe6aa718942b5ad5c4795c026514f8317c7a215e218dccd6cf946813eb9362372eef6200f3b1dbc3f819671cba69947e5f4552091a69125d5dfcb7b8c2659029395bdfc080c0',
  };
}

/** Besu's three funded dev accounts (§11), with the balance spellings of Besu's dev.json. */
const DEV_ALLOC = {
  fe3b557e8fb62b89f4916b721be55ceb828dbd73: { balance: '0xad78ebc5ac6200000' },
  '627306090abaB3A6e1400e9345bC60c78a8BEf57': { balance: '90000000000000000000000' },
  f17f52151EbEF6C7334FAD080c5704D77216b732: { balance: '90000000000000000000000' },
};
const BESU_DEV_STATE_ROOT = '0x166ed98eea93ab2b6f6b1a425526994adc2d675bf9a0d77d600ed1e02d8f77df';

/** Besu's `--network=dev` genesis (ethash, London at 0) rebuilt from the §11 table. */
function besuDevGenesisJson(): Record<string, unknown> {
  return {
    config: {
      chainId: 1337,
      londonBlock: 0,
      contractSizeLimit: 2147483647,
      ethash: { fixeddifficulty: 100 },
    },
    nonce: '0x42',
    baseFeePerGas: '0x0',
    timestamp: '0x0',
    extraData: '0x11bbe8db4e347b4e8c937c1c8370e4b5ed33adb3db69cbdb7a38e1e50b1b82fa',
    gasLimit: '0x1fffffffffffff',
    difficulty: '0x10000',
    mixHash: '0x0000000000000000000000000000000000000000000000000000000000000000',
    coinbase: '0x0000000000000000000000000000000000000000',
    alloc: DEV_ALLOC,
  };
}

// ---------------------------------------------------------------------------------------------
// Genesis hashes
// ---------------------------------------------------------------------------------------------

test('§9.1 minimal QBFT genesis (Vector B) hashes to 0x02cd…8fc0', async (t) => {
  const genesis = parseGenesis(vectorBGenesisJson());
  t.is(genesis.consensus, 'qbft');
  t.is(genesis.chainId, 1337n);
  t.is(genesis.networkId, 1337n);
  t.is(genesis.header.baseFeePerGas, undefined, 'no London, no base fee');
  const built = await buildGenesis(genesis);
  t.is(hex(built.stateRoot), EMPTY_TRIE_ROOT);
  t.is(built.block.header.raw().length, 15);
  t.is(hex(built.hash), '0x02cd5ecca308044c02b3508a728a7c1bf51533d856334d742d7418d8c3298fc0');
});

test('genesis keys are case-insensitive, as Besu lower-cases them', async (t) => {
  const upper = JSON.parse(
    JSON.stringify(vectorBGenesisJson())
      .replace('"chainId"', '"CHAINID"')
      .replace('"berlinBlock"', '"BerlinBlock"')
      .replace('"blockperiodseconds"', '"BlockPeriodSeconds"')
      .replace('"gasLimit"', '"GASLIMIT"')
      .replace('"extraData"', '"ExtraData"')
      .replace('"qbft"', '"QBFT"'),
  ) as unknown;
  const genesis = parseGenesis(upper);
  t.is(genesis.qbft?.blockPeriodSeconds, 2);
  t.is(hex((await buildGenesis(genesis)).hash), '0x02cd5ecca308044c02b3508a728a7c1bf51533d856334d742d7418d8c3298fc0');
});

test('Besu hive testGenesis.json hashes to 0xf8f0…217f, with Besu\'s fork id', async (t) => {
  const text = readFileSync(join(BESU_FIXTURES, 'chain/testGenesis.json'), 'utf8');
  const genesis = parseGenesisJson(text);
  t.is(genesis.consensus, 'ethash');
  t.is(genesis.header.baseFeePerGas, undefined, 'London is at block 33');
  const built = await buildGenesis(genesis);
  t.is(hex(built.hash), '0xf8f01382f5636d02edac7fff679a6feb7a572d37a395daaab77938feb6fe217f');
  // EIP-2124 fork hash: CRC32(genesis hash || every distinct fork activation), computed here
  // independently. The implied forks at block 33 and Paris add nothing of their own.
  const forkHash = (activations: bigint[]) => {
    const words = activations.map((a) => bytes(a.toString(16).padStart(16, '0')));
    const input = Buffer.concat([built.hash, ...words]);
    return `0x${(crc32(input) >>> 0).toString(16).padStart(8, '0')}` as const;
  };
  t.is(built.common.forkHash('london'), forkHash([33n]));
  t.is(built.common.forkHash('shanghai'), forkHash([33n, 1444660030n]));
  t.is(built.common.forkHash('cancun'), forkHash([33n, 1444660030n, 1444660040n]));

  const common = built.common.copy();
  t.is(common.setHardforkBy({ blockNumber: 32n, timestamp: 1444660000n }), 'chainstart', 'blocks 1–32 run Frontier');
  t.is(common.consensusType(), 'pow', 'Frontier blocks pay PoW rewards');
  t.is(common.setHardforkBy({ blockNumber: 33n, timestamp: 1444660030n }), 'shanghai');
  t.is(common.consensusType(), 'pos', 'Shanghai blocks are proof-of-stake');
  t.true(common.isActivatedEIP(1559));
  t.is(common.setHardforkBy({ blockNumber: 34n, timestamp: 1444660040n }), 'cancun');
});

test('Besu dev (ethash) network: stateRoot 0x166e…77df and hash 0x2f2a…bbcb (§11)', async (t) => {
  const genesis = parseGenesis(besuDevGenesisJson());
  t.is(genesis.consensus, 'ethash');
  t.deepEqual(genesis.ethash, { fixedDifficulty: 100n });
  t.is(genesis.config.contractSizeLimit, 2147483647);
  t.is(genesis.header.baseFeePerGas, 0n);
  t.is(genesis.alloc.length, 3);
  t.is(genesis.alloc[1].balance, 90000000000000000000000n);
  const built = await buildGenesis(genesis);
  t.is(hex(built.stateRoot), BESU_DEV_STATE_ROOT);
  t.is(built.block.header.raw().length, 16);
  t.is(hex(built.hash), '0x2f2a939c2cdd8918be11a55a1e7db412861ed477ed927d8f122b55ccd0f8bbcb');
});

// ---------------------------------------------------------------------------------------------
// Basalt's embedded dev network
// ---------------------------------------------------------------------------------------------

test('the embedded dev network loads; its extraData names the dev validator', async (t) => {
  const { genesisJson, validatorKey } = loadDevNetwork();
  t.deepEqual(validatorKey, keccak_256(new TextEncoder().encode('basalt dev validator')));
  const validator = addressOf(validatorKey);

  const genesis = parseGenesis(genesisJson);
  t.is(genesis.chainId, 1337n);
  t.is(genesis.networkId, 1337n);
  t.is(genesis.consensus, 'qbft');
  t.like(genesis.qbft, { blockPeriodSeconds: 1, epochLength: 30000, requestTimeoutSeconds: 4, blockReward: 0n });
  t.is(genesis.header.gasLimit, 0x1fffffffffffffn);
  t.is(genesis.header.difficulty, 1n);
  t.is(hex(genesis.header.mixHash), QBFT_MIX_HASH);
  t.is(hex(genesis.header.coinbase), '0x' + '00'.repeat(20));
  t.is(genesis.header.baseFeePerGas, ONE_GWEI, 'London at 0 and no baseFeePerGas: 1 gwei');

  const extra = decodeExtraData(genesis.header.extraData);
  t.deepEqual(extra.validators.map(hex), [hex(validator)]);
  t.is(extra.round, 0);
  t.deepEqual(extra.seals, []);
  t.is(extra.vote, undefined);

  const built = await buildGenesis(genesis);
  // Besu dev's three funded accounts exactly: without the system contracts, Besu dev's state root.
  const funded = { ...genesis, alloc: genesis.alloc.filter((entry) => entry.code.length === 0) };
  t.is(hex(await computeGenesisStateRoot(funded, built.common)), BESU_DEV_STATE_ROOT, 'same three funded accounts as Besu dev');
  t.is(funded.alloc.length, 3);
  // Prague and Osaka run at genesis: their system contracts are there (nonce 1, as deployed on mainnet).
  const systemContracts = genesis.alloc.filter((entry) => entry.code.length > 0);
  t.deepEqual(systemContracts.map((entry) => [hex(entry.address), entry.nonce]), [
    ['0x000f3df6d732807ef1319fb7b8bb8522d0beac02', 1n],
    ['0x0000f90827f1c53a10cb7a02335b175320002935', 1n],
    ['0x00000961ef480eb55e80d19ad83579a64c007002', 1n],
    ['0x0000bbddc7ce488642fb579f8b00f3a590007251', 1n],
  ]);
  // The dev network follows mainnet: every fork through Osaka at genesis.
  t.is(built.common.hardfork(), 'osaka');
  t.true(built.common.isActivatedEIP(7702) && built.common.isActivatedEIP(7825) && built.common.isActivatedEIP(7951));
  t.is(built.common.consensusType(), 'pos', 'no ethereumjs PoW rewards on a QBFT chain');
  const header = built.block.header;
  t.is(header.raw().length, 21, 'Prague genesis header (requestsHash)');
  t.is(hex(header.requestsHash!), '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'EIP-7685 empty requests');
  t.deepEqual(header.parentBeaconBlockRoot, new Uint8Array(32));
  t.is(header.blobGasUsed, 0n);
  t.is(header.excessBlobGas, 0n);
  t.is(hex(header.withdrawalsRoot ?? new Uint8Array(0)), EMPTY_TRIE_ROOT);
});

test('the dev validator key file is 0x + 64 lowercase hex with no newline (Besu key file format)', (t) => {
  const text = readFileSync(new URL('../../../genesis/dev-validator.key', import.meta.url), 'utf8');
  t.regex(text, /^0x[0-9a-f]{64}$/);
  t.deepEqual(parseNodeKey(text, 'dev-validator.key'), loadDevNetwork().validatorKey);
  t.is(formatNodeKey(loadDevNetwork().validatorKey), text);
});

test('node key files: 64 hex digits, 0x optional, surrounding whitespace allowed; anything else named by file, content not echoed', (t) => {
  const key = '8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63';
  for (const text of [key, `0x${key}`, `0X${key}`, `${key}\n`, `  0x${key.toUpperCase()}\r\n\n`]) {
    t.is(hex(parseNodeKey(text, '/keys/node')), '0x' + key, JSON.stringify(text));
  }
  const message = 'Private key cannot be loaded from file /keys/node: expected 64 hex digits (0x optional) and nothing else';
  for (const text of ['', key.slice(2), `${key}00`, `${key}\n${key}`, `0x ${key}`, `0x${key.slice(1)}g`, `${key} # comment`]) {
    const error = t.throws(() => parseNodeKey(text, '/keys/node'), { instanceOf: NodeKeyFileError, message }, JSON.stringify(text));
    t.false(error?.message.includes(key.slice(2, 20)), 'the key does not appear in the message');
  }
});

test('node key files: a key of zero or not below the secp256k1 order is refused; n - 1 is a key', (t) => {
  const order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const text = (value: bigint) => value.toString(16).padStart(64, '0');
  const message = 'Private key cannot be loaded from file /keys/node: not a secp256k1 private key (zero, or not below the curve order)';
  for (const value of [0n, order, order + 1n, 2n ** 256n - 1n]) {
    t.throws(() => parseNodeKey(text(value), '/keys/node'), { instanceOf: NodeKeyFileError, message }, text(value));
  }
  for (const value of [1n, order - 1n]) {
    const key = parseNodeKey(text(value), '/keys/node');
    t.is(hex(key), `0x${text(value)}`);
    t.true(nobleSecp.utils.isValidSecretKey(key), 'noble agrees');
  }
});

// ---------------------------------------------------------------------------------------------
// Parsing rules
// ---------------------------------------------------------------------------------------------

function withConfig(config: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { config: { chainId: 2017, ...config }, gasLimit: '0x47b760', difficulty: '0x1', alloc: {}, ...extra };
}

test('config.qbft defaults (§9.1)', (t) => {
  const genesis = parseGenesis(withConfig({ qbft: {} }));
  t.deepEqual(genesis.qbft, {
    blockPeriodSeconds: 1,
    epochLength: 30000,
    requestTimeoutSeconds: 1,
    emptyBlockPeriodSeconds: 0,
    blockPeriodMilliseconds: 0,
    blockReward: 0n,
    gossipedHistoryLimit: 1000,
    messageQueueLimit: 1000,
    duplicateMessageLimit: 100,
    futureMessagesLimit: 1000,
    futureMessagesMaxDistance: 10,
  });
});

test('config.qbft value types follow Besu', (t) => {
  const full = parseGenesis(
    withConfig({
      qbft: {
        blockperiodseconds: '5',
        blockreward: '0x1bc16d674ec80000',
        miningbeneficiary: '0x0000000000000000000000000000000000000000',
        validatorcontractaddress: '0x0000000000000000000000000000000000008888',
        xemptyblockperiodseconds: 30,
      },
    }),
  ).qbft;
  t.is(full?.blockPeriodSeconds, 5, 'blockperiodseconds may be a numeric string');
  t.is(full?.blockReward, 2000000000000000000n);
  t.is(hex(full?.miningBeneficiary ?? new Uint8Array(0)), '0x' + '00'.repeat(20), 'zero beneficiary is honoured');
  t.is(hex(full?.validatorContractAddress ?? new Uint8Array(0)), '0x0000000000000000000000000000000000008888');
  t.is(full?.emptyBlockPeriodSeconds, 30);
  t.is(parseGenesis(withConfig({ qbft: { blockreward: '5000' } })).qbft?.blockReward, 5000n, 'decimal reward');

  t.throws(() => parseGenesis(withConfig({ qbft: { blockreward: 5 } })), { instanceOf: GenesisError, message: /blockreward: Expected string value but got number/ });
  t.throws(() => parseGenesis(withConfig({ qbft: { requesttimeoutseconds: '4' } })), { instanceOf: GenesisError, message: /Expected number value but got string/ });
  t.throws(() => parseGenesis(withConfig({ qbft: { epochlength: 0 } })), { instanceOf: GenesisError, message: /epochlength/ });
  t.throws(() => parseGenesis(withConfig({ qbft: { blockperiodseconds: 0 } })), { instanceOf: GenesisError, message: /blockperiodseconds/ });
});

test('config.transitions.qbft is parsed, sorted and validated (§8)', (t) => {
  const genesis = parseGenesis(
    withConfig({
      qbft: {},
      transitions: {
        qbft: [
          { block: 200, validatorselectionmode: 'CONTRACT', validatorcontractaddress: '0x0000000000000000000000000000000000008888' },
          { block: 100, blockperiodseconds: 5, miningbeneficiary: '', blockreward: '10' },
          { block: 150, validators: ['0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718'] },
        ],
      },
    }),
  );
  t.deepEqual(genesis.qbftTransitions.map((x) => x.block), [100n, 150n, 200n]);
  t.like(genesis.qbftTransitions[0], { blockPeriodSeconds: 5, miningBeneficiary: null, blockReward: 10n });
  t.deepEqual(genesis.qbftTransitions[1].validators?.map(hex), ['0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718']);
  t.is(genesis.qbftTransitions[2].validatorSelectionMode, 'contract');

  t.throws(() => parseGenesis(withConfig({ qbft: {}, transitions: { qbft: [{ block: 5 }, { block: 5 }] } })), { message: /duplicate/ });
  t.throws(() => parseGenesis(withConfig({ qbft: {}, transitions: { qbft: [{ block: 0 }] } })), { message: /greater than 0/ });
  t.throws(() => parseGenesis(withConfig({ qbft: {}, transitions: { qbft: [{ block: 9, validatorselectionmode: 'contract' }] } })), {
    message: /requires validatorcontractaddress/,
  });
});

test('genesis base fee: given value, else 1 gwei when londonBlock is 0, else none', (t) => {
  t.is(parseGenesis(withConfig({ londonBlock: 0 })).header.baseFeePerGas, ONE_GWEI);
  t.is(parseGenesis(withConfig({ londonBlock: 0 }, { baseFeePerGas: '0x7' })).header.baseFeePerGas, 7n);
  t.is(parseGenesis(withConfig({ londonBlock: 5 })).header.baseFeePerGas, undefined);
  t.is(parseGenesis(withConfig({ berlinBlock: 0 })).header.baseFeePerGas, undefined);
});

test('other consensus engines are refused; ethash is recognised', (t) => {
  t.throws(() => parseGenesis(withConfig({ ibft2: {} })), { message: /not supported/ });
  t.throws(() => parseGenesis(withConfig({ clique: {} })), { message: /not supported/ });
  t.is(parseGenesis(withConfig({ ethash: {} })).consensus, 'ethash');
  t.is(parseGenesis(withConfig({})).consensus, 'none');
});

test('alloc: balance in hex or decimal, nonce, code, storage (short keys padded, zero values dropped)', async (t) => {
  const contract = '0x00000000000000000000000000000000000000aa';
  const genesis = parseGenesis(
    withConfig(
      { londonBlock: 0, qbft: {} },
      {
        alloc: {
          '0x00000000000000000000000000000000000000Aa': {
            balance: '0x10',
            nonce: '0x2',
            code: '0x6001600055',
            storage: { '0x01': '0x2a', '0x02': '0x00', '0000000000000000000000000000000000000000000000000000000000000003': '0x0100' },
            comment: 'ignored',
            privateKey: 'ignored',
          },
          '00000000000000000000000000000000000000bb': { balance: '1000' },
          '0x00000000000000000000000000000000000000cc': {},
        },
      },
    ),
  );
  const [withCode, plain, empty] = genesis.alloc;
  t.is(hex(withCode.address), contract);
  t.is(withCode.balance, 16n);
  t.is(withCode.nonce, 2n);
  t.is(withCode.storage.length, 2, 'the zero-valued slot is dropped');
  t.is(plain.balance, 1000n);
  t.is(empty.balance, 0n);

  const common = createChainCommon(genesis);
  const stateManager = new MerkleStateManager({ common });
  const root = await writeGenesisState(stateManager, genesis);
  t.deepEqual(root, await computeGenesisStateRoot(genesis, common));
  t.notDeepEqual(hex(root), EMPTY_TRIE_ROOT);

  const address = new Address(bytes(contract));
  const account = await stateManager.getAccount(address);
  t.is(account?.balance, 16n);
  t.is(account?.nonce, 2n);
  t.is(hex(await stateManager.getCode(address)), '0x6001600055');
  const slot = (n: number) => {
    const key = new Uint8Array(32);
    key[31] = n;
    return key;
  };
  t.is(hex(await stateManager.getStorage(address, slot(1))), '0x2a');
  t.is(hex(await stateManager.getStorage(address, slot(3))), '0x0100');
  t.is((await stateManager.getStorage(address, slot(2))).length, 0);
  t.not(await stateManager.getAccount(new Address(bytes('0x00000000000000000000000000000000000000cc'))), undefined, 'empty accounts exist');
});

test('malformed values are reported with the key that holds them', (t) => {
  t.throws(() => parseGenesis(withConfig({}, { gasLimit: 'lots' })), { message: /gaslimit: invalid quantity/ });
  t.throws(() => parseGenesis(withConfig({}, { alloc: { '0x01': { balance: '1' } } })), { message: /alloc\.0x01 \(address\): expected 20 bytes/ });
  t.throws(() => parseGenesis(withConfig({}, { alloc: { ['0x' + 'ab'.repeat(20)]: { balance: 1e30 } } })), { message: /write it as a string/ });
  t.throws(() => parseGenesis({ config: {}, gasLimit: '0x1', difficulty: '0x1' }), { message: /chainId: required/ });
  t.throws(() => parseGenesisJson('{'), { instanceOf: GenesisError });
});

// ---------------------------------------------------------------------------------------------
// Fork schedule and Common
// ---------------------------------------------------------------------------------------------

test('earlier forks are implied: berlinBlock 0 alone runs Istanbul and Homestead rules', (t) => {
  const genesis = parseGenesis(vectorBGenesisJson());
  const names = hardforkSchedule(genesis).map((h) => h.name);
  t.deepEqual(names, [
    'chainstart',
    'homestead',
    'tangerineWhistle',
    'spuriousDragon',
    'byzantium',
    'constantinople',
    'petersburg',
    'istanbul',
    'muirGlacier',
    'berlin',
  ]);
  const common = createChainCommon(genesis);
  t.is(common.hardfork(), 'berlin');
  t.true(common.isActivatedEIP(2929));
  t.true(common.isActivatedEIP(1679), 'Istanbul');
  t.true(common.isActivatedEIP(606), 'Homestead');
  t.false(common.isActivatedEIP(4399), 'no PREVRANDAO before Shanghai: DIFFICULTY stays 1 as in Besu');
  t.is(common.consensusType(), 'pos', 'QBFT: no ethereumjs PoW block reward');
});

test('Paris activates with the first timestamp fork, not at block 0', (t) => {
  const genesis = parseGenesis(withConfig({ londonBlock: 0, shanghaiTime: 1700000000, qbft: {} }, { timestamp: '0x0' }));
  const common = createChainCommon(genesis);
  t.is(common.hardfork(), 'london');
  t.false(common.isActivatedEIP(4399));
  t.is(common.setHardforkBy({ blockNumber: 10n, timestamp: 1700000000n }), 'shanghai');
  t.true(common.isActivatedEIP(4399));
  t.true(common.isActivatedEIP(4895));
});

test('native ecrecover agrees with ethereumjs\' pure-JS ecrecover, high-s included', (t) => {
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const toBytes32 = (value: bigint) => bytes(value.toString(16).padStart(64, '0'));
  for (let i = 1; i <= 5; i++) {
    const msgHash = keccak_256(Uint8Array.of(i, i));
    const key = keccak_256(Uint8Array.of(i));
    const seal = signCommitSeal(msgHash, key);
    const r = seal.subarray(0, 32);
    const s = seal.subarray(32, 64);
    const v = BigInt(seal[64]) + 27n;
    t.deepEqual(nativeEcrecover(msgHash, v, r, s), ecrecover(msgHash, v, r, s));
    t.deepEqual(hex(nativeEcrecover(msgHash, v, r, s)), hex(nobleSecp.getPublicKey(key, false).subarray(1)));
    // The malleable twin (n - s, flipped parity) recovers the same key.
    const highS = toBytes32(n - BigInt(hex(s)));
    const flipped = v === 27n ? 28n : 27n;
    t.deepEqual(nativeEcrecover(msgHash, flipped, r, highS), ecrecover(msgHash, flipped, r, highS));
    // EIP-155 v values.
    const v155 = BigInt(seal[64]) + 1337n * 2n + 35n;
    t.deepEqual(nativeEcrecover(msgHash, v155, r, s, 1337n), ecrecover(msgHash, v155, r, s, 1337n));
  }
  t.throws(() => nativeEcrecover(new Uint8Array(32), 29n, new Uint8Array(32), new Uint8Array(32)), { message: /v value/ });
});

/**
 * Runs an empty block 1 on top of `genesis` with ethereumjs' runBlock, which checks that the state
 * root afterwards is `expectedStateRoot` (the genesis state root when not given).
 */
async function runEmptyBlockOne(genesis: Genesis, coinbase: Uint8Array, timestamp: bigint, expectedStateRoot?: (genesisHash: Uint8Array) => Promise<Uint8Array>): Promise<Uint8Array> {
  const built = await buildGenesis(genesis);
  const common = built.common.copy();
  const stateManager = new MerkleStateManager({ common });
  await writeGenesisState(stateManager, genesis);
  const vm = await createVM({ common, stateManager });
  const block = createQbftBlock(
    {
      header: {
        parentHash: built.hash,
        number: 1n,
        timestamp,
        coinbase,
        gasLimit: genesis.header.gasLimit,
        difficulty: 1n,
        extraData: genesis.header.extraData,
        mixHash: genesis.header.mixHash,
        stateRoot: expectedStateRoot ? await expectedStateRoot(built.hash) : built.stateRoot,
      },
    },
    { common, setHardfork: true },
  );
  // runBlock validates the resulting state root against the header's (generate: false).
  const result = await runBlock(vm, { block, skipHeaderValidation: true, skipBlockValidation: true });
  return result.stateRoot;
}

test('an empty QBFT block pays no PoW reward; on the dev network it makes only the system contracts\' writes (Besu parity)', async (t) => {
  // Vector B block 1 (Berlin): Besu's stateRoot is the empty trie root although the coinbase is a validator.
  const vectorB = parseGenesis(vectorBGenesisJson());
  const proposer = bytes('0x1eff47bc3a10a45d4b230b5d10e37751fe6aa718');
  t.is(hex(await runEmptyBlockOne(vectorB, proposer, 0x65000002n)), EMPTY_TRIE_ROOT);

  // Dev network (Osaka): EIP-4788 stores the timestamp (the beacon root is zero, so no second slot) and
  // EIP-2935 the genesis hash; nothing else changes: no reward for the validator, the request
  // contracts' queues stay empty.
  const dev = parseGenesis(loadDevNetwork().genesisJson);
  const validator = addressOf(loadDevNetwork().validatorKey);
  const slot = (n: bigint) => setLengthLeft(bigIntToBytes(n), 32);
  const expected = async (genesisHash: Uint8Array) => {
    const state = new MerkleStateManager({ common: createChainCommon(dev) });
    await writeGenesisState(state, dev);
    await state.putStorage(new Address(bytes('0x000f3df6d732807ef1319fb7b8bb8522d0beac02')), slot(1000n % 8191n), bigIntToBytes(1000n));
    await state.putStorage(new Address(bytes('0x0000f90827f1c53a10cb7a02335b175320002935')), slot(0n), genesisHash);
    await state.flush();
    return state.getStateRoot();
  };
  const root = await runEmptyBlockOne(dev, validator, 1000n, expected);
  t.not(hex(root), hex((await buildGenesis(dev)).stateRoot));
});
