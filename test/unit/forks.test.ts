/**
 * The fork schedule through the blob-parameter-only forks, in one process: blob parameters from the
 * genesis `blobSchedule` (or Besu's defaults) switching at their timestamps, a chain that builds and
 * imports its blocks across Prague, Osaka, BPO1 and BPO2, the Prague system operations in the build
 * loop (EIP-2935 history, EIP-7685 requests hash), EIP-7934's block size limit, eth_config for BPO
 * forks, and what a genesis naming an unknown or unsupported fork gets.
 */
import test from 'ava';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { Address, bigIntToBytes, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { sha256 } from '@noble/hashes/sha2.js';
import { Chain } from '../../src/chain/chain.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { ethConfig } from '../../src/chain/fork-config.js';
import { validateBody } from '../../src/chain/import-rules.js';
import { blobParametersAt, buildGenesis } from '../../src/shared/ethereum/common.js';
import { GenesisError, loadDevNetwork, parseGenesis } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { forkSchedule } from '../../src/shared/ethereum/fork-id.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

/** EIP-2935's history contract and its deployed code. */
const HISTORY_ADDRESS = '0x0000f90827f1c53a10cb7a02335b175320002935';
const HISTORY_CODE =
  '0x3373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f35600143038111604257611fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500';
const EMPTY_REQUESTS_HASH = bytesToHex(sha256(new Uint8Array()));

/** The dev network (QBFT, Cancun at 0) with `config` added: forks by time, a blob schedule. */
function devGenesisWith(config: Record<string, unknown>, alloc: Record<string, unknown> = {}): Record<string, unknown> {
  const dev = structuredClone(loadDevNetwork().genesisJson) as { config: Record<string, unknown>; alloc: Record<string, unknown> };
  delete dev.config.pragueTime;
  delete dev.config.osakaTime;
  return { ...dev, config: { ...dev.config, ...config }, alloc: { ...dev.alloc, ...alloc } };
}

const BPO_FORKS = { pragueTime: 10, osakaTime: 20, bpo1Time: 30, bpo2Time: 40 };
/** Prague's and BPO1's entries given; Cancun and Osaka take Besu's defaults, BPO2 keeps BPO1's. */
const BLOB_SCHEDULE = {
  prague: { target: 4, max: 8, baseFeeUpdateFraction: 4000000 },
  bpo1: { target: 9, max: 12, baseFeeUpdateFraction: 9000000 },
};

test('blob parameters follow the genesis blobSchedule, Besu defaults where absent, switching at each fork time', async (t) => {
  const genesis = parseGenesis(devGenesisWith({ ...BPO_FORKS, blobSchedule: BLOB_SCHEDULE }));
  const { common } = await buildGenesis(genesis);
  const at = (timestamp: number) => {
    const c = common.copy();
    c.setHardforkBy({ blockNumber: 1n, timestamp: BigInt(timestamp) });
    return { fork: c.hardfork(), ...blobParametersAt(c, c.hardfork()) };
  };
  t.deepEqual(at(9), { fork: 'cancun', target: 3, max: 6, baseFeeUpdateFraction: 3338477 });
  t.deepEqual(at(10), { fork: 'prague', target: 4, max: 8, baseFeeUpdateFraction: 4000000 });
  t.deepEqual(at(19), { fork: 'prague', target: 4, max: 8, baseFeeUpdateFraction: 4000000 });
  t.deepEqual(at(20), { fork: 'osaka', target: 6, max: 9, baseFeeUpdateFraction: 5007716 });
  t.deepEqual(at(30), { fork: 'bpo1', target: 9, max: 12, baseFeeUpdateFraction: 9000000 });
  t.deepEqual(at(40), { fork: 'bpo2', target: 9, max: 12, baseFeeUpdateFraction: 9000000 }, 'no entry: BPO1 parameters stay');
  // Besu lower-cases keys: "BPO1" names the same fork; an entry for a fork Besu does not know is ignored.
  const spelled = parseGenesis(devGenesisWith({ ...BPO_FORKS, blobSchedule: { BPO1: BLOB_SCHEDULE.bpo1, bpo9: BLOB_SCHEDULE.bpo1 } }));
  t.deepEqual(spelled.config.blobSchedule, { bpo1: BLOB_SCHEDULE.bpo1 });
  t.throws(() => parseGenesis(devGenesisWith({ blobSchedule: { osaka: { target: 7, max: 6, baseFeeUpdateFraction: 1 } } })), {
    instanceOf: GenesisError,
    message: 'config.blobschedule.osaka: target 7 is above max 6',
  });
});

test('excess blob gas and the blob base fee use the parameters of the block they are computed for', async (t) => {
  const genesis = parseGenesis(devGenesisWith({ ...BPO_FORKS, blobSchedule: BLOB_SCHEDULE }));
  const { block } = await buildGenesis(genesis);
  const child = (timestamp: number) => {
    // The header's Common carries the block parameters (blob gas per blob, EIP-7918's base cost).
    const c = block.header.common.copy();
    c.setHardforkBy({ blockNumber: 2n, timestamp: BigInt(timestamp) });
    return c;
  };
  const parent = block.header;
  // A parent that used 8 blobs (Prague max here) with no excess: the child's excess is used - target.
  const parentHeader = Object.assign(Object.create(Object.getPrototypeOf(parent)), parent, { blobGasUsed: 8n * 131072n, excessBlobGas: 0n, baseFeePerGas: 0n });
  t.is(parentHeader.calcNextExcessBlobGas(child(19)), (8n - 4n) * 131072n, 'Prague: target 4');
  t.is(parentHeader.calcNextExcessBlobGas(child(20)), (8n - 6n) * 131072n, 'Osaka: target 6');
  t.is(parentHeader.calcNextExcessBlobGas(child(30)), 0n, 'BPO1: target 9 above the 8 used');
  // EIP-7918 (Osaka): with a base fee whose blob share exceeds the blob price, excess grows by used × (max - target) / max.
  const pricey = Object.assign(Object.create(Object.getPrototypeOf(parent)), parent, { blobGasUsed: 8n * 131072n, excessBlobGas: 0n, baseFeePerGas: 10n ** 9n });
  t.is(pricey.calcNextExcessBlobGas(child(20)), (8n * 131072n * (9n - 6n)) / 9n, 'EIP-7918 reserve price');
  t.is(pricey.calcNextExcessBlobGas(child(19)), (8n - 4n) * 131072n, 'Prague has no reserve price');
});

function transfer(key: string, nonce: bigint, hardfork: string, data = '0x') {
  const tx = createFeeMarket1559Tx(
    { chainId: 1337n, nonce, gasLimit: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, to: `0x${'77'.repeat(20)}`, value: 1n, data: hexToBytes(data as `0x${string}`) },
    { common: txCommonFor(1337n, hardfork) },
  ).sign(hexToBytes(key as `0x${string}`));
  const decoded = decodeRawTransaction(tx.serialize(), txRulesFor(1337n, hardfork));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

test('a chain builds and imports blocks across Prague, Osaka, BPO1 and BPO2 (the blocks re-import with equal hashes and state)', async (t) => {
  const json = JSON.stringify(devGenesisWith({ ...BPO_FORKS, blobSchedule: BLOB_SCHEDULE }, { [HISTORY_ADDRESS.slice(2)]: { balance: '0x0', nonce: '0x1', code: HISTORY_CODE } }));
  const [builderPath, importerPath] = [tempDataPath(), tempDataPath()];
  t.teardown(() => {
    removeDataPath(builderPath);
    removeDataPath(importerPath);
  });
  const builder = await Chain.open(builderPath, await chainSpecFromGenesis(json));
  const importer = await Chain.open(importerPath, await chainSpecFromGenesis(json));
  try {
    const forks: string[] = [];
    const key = DEV_ACCOUNTS[0].privateKey;
    for (let n = 1n; n <= 6n; n++) {
      const head = builder.getHead();
      const timestamp = n * 8n; // 8, 16, 24, 32, 40, 48: Cancun, Prague, Osaka, BPO1, BPO2, BPO2
      const hardfork = builder.spec.common.copy();
      hardfork.setHardforkBy({ blockNumber: n, timestamp });
      const built = await builder.buildBlock({
        timestamp,
        coinbase: new Uint8Array(20),
        extraData: head.extraData,
        maxBuildMs: 10_000,
        transactions: [transfer(key, n - 1n, hardfork.hardfork())],
      });
      t.deepEqual(built.rejected, [], `block ${n}`);
      t.is(built.block.transactions.length, 1);
      await builder.importBuilt(built, head.extraData);
      const stored = (await builder.store.getBlockByNumber(n))!;
      forks.push(stored.header.common.hardfork());
      await importer.importBlock(importer.spec.decodeBlock(stored.serialize()));
      t.is(bytesToHex(importer.getHead().hash), bytesToHex(builder.getHead().hash));
      t.is(bytesToHex(importer.getHead().stateRoot), bytesToHex(builder.getHead().stateRoot));
      // EIP-7685 from Prague on: no request-producing contract here, so the empty-requests hash.
      if (stored.header.common.isActivatedEIP(7685)) t.is(bytesToHex(stored.header.requestsHash!), EMPTY_REQUESTS_HASH);
      else t.is(stored.header.requestsHash, undefined);
    }
    t.deepEqual(forks, ['cancun', 'prague', 'osaka', 'bpo1', 'bpo2', 'bpo2']);
    // EIP-2935: each Prague block stored its parent's hash in the history contract at (number - 1) % 8191.
    const headState = builder.getHead().stateRoot;
    for (const n of [2n, 5n, 6n]) {
      const parent = (await builder.store.getBlockByNumber(n - 1n))!;
      const slot = await builder.withStateAt(headState, (vm) =>
        vm.stateManager.getStorage(new Address(hexToBytes(HISTORY_ADDRESS)), setLengthLeft(bigIntToBytes((n - 1n) % 8191n), 32)),
      );
      t.is(bytesToHex(slot), bytesToHex(parent.hash()), `history slot of block ${n - 1n}`);
    }
  } finally {
    await builder.close();
    await importer.close();
  }
});

test('EIP-7934: building stops before the encoded block passes the size limit; import refuses a block over it', async (t) => {
  const json = JSON.stringify(devGenesisWith({ pragueTime: 0, osakaTime: 0 }));
  const spec = await chainSpecFromGenesis(json);
  // A 3,000-byte limit instead of 8 MiB, so that a few small transactions reach it.
  spec.common.updateParams({ 7934: { maxRlpBlockSize: 3000 + 4096 } });
  const path = tempDataPath();
  t.teardown(() => removeDataPath(path));
  const chain = await Chain.open(path, spec);
  try {
    const data = `0x${'ab'.repeat(1000)}`;
    const [a, b, c] = DEV_ACCOUNTS.map((account) => transfer(account.privateKey, 0n, 'osaka', data));
    const head = chain.getHead();
    const built = await chain.buildBlock({ timestamp: head.timestamp + 1n, coinbase: new Uint8Array(20), extraData: head.extraData, maxBuildMs: 10_000, transactions: [a!, b!, c!] });
    t.is(built.block.transactions.length, 2, 'the third 1 kB transaction would pass 3,000 bytes');
    t.true(built.block.transactions.reduce((sum, tx) => sum + tx.serialize().length, 0) <= 3000);
    // The same block under a smaller limit is refused by the import rules.
    built.block.header.common.updateParams({ 7934: { maxRlpBlockSize: 2000 } });
    const error = await t.throwsAsync(validateBody(built.block, { consensus: 'qbft', recentAncestors: [] }));
    t.regex(error!.message, /^block is \d+ bytes encoded, more than the 2000 bytes EIP-7934 allows$/);
    await chain.discardBuilt();
  } finally {
    await chain.close();
  }
});

test('an unknown future fork in the genesis is ignored as Besu ignores it; amsterdamTime is refused', async (t) => {
  const plain = await buildGenesis(parseGenesis(devGenesisWith(BPO_FORKS)));
  const withUnknown = await buildGenesis(parseGenesis(devGenesisWith({ ...BPO_FORKS, bpo6Time: 60, glamsterdamTime: 70 })));
  t.is(bytesToHex(withUnknown.hash), bytesToHex(plain.hash));
  t.deepEqual(withUnknown.common.hardforks().map((h) => h.name), plain.common.hardforks().map((h) => h.name));
  t.throws(() => parseGenesis(devGenesisWith({ ...BPO_FORKS, amsterdamTime: 50 })), {
    instanceOf: GenesisError,
    message: 'config.amsterdamTime: Basalt runs forks up to the blob-parameter-only forks after Osaka (bpo5Time); remove amsterdamTime',
  });
});

test('eth_config and the fork id count each BPO fork; each carries its blob schedule', async (t) => {
  const genesis = parseGenesis(devGenesisWith({ ...BPO_FORKS, bpo3Time: 50, blobSchedule: BLOB_SCHEDULE }));
  const { common, hash } = await buildGenesis(genesis);
  const context = (headFork: string) => ({
    schedule: common.hardforks(),
    chainId: 1337n,
    genesisHash: hash,
    genesisTimestamp: 0n,
    headFork,
    blobSchedule: (hardfork: string) => blobParametersAt(common, hardfork),
    blockTimestamp: async () => undefined,
  });
  type Config = { activationTime: number; blobSchedule: { target: number; max: number; baseFeeUpdateFraction: number }; forkId: string };
  const osaka = (await ethConfig(context('osaka'))) as { current: Config; next: Config; last: Config };
  t.is(osaka.current.activationTime, 20);
  t.deepEqual(osaka.current.blobSchedule, { baseFeeUpdateFraction: 5007716, max: 9, target: 6 });
  t.is(osaka.next.activationTime, 30);
  t.deepEqual(osaka.next.blobSchedule, { baseFeeUpdateFraction: 9000000, max: 12, target: 9 });
  t.is(osaka.last.activationTime, 50);
  t.deepEqual(osaka.last.blobSchedule, { baseFeeUpdateFraction: 9000000, max: 12, target: 9 });
  // Every time fork is its own fork id step: Prague, Osaka, BPO1, BPO2, BPO3.
  const schedule = forkSchedule(hash, 0n, genesis.config.forks);
  t.deepEqual(schedule.times, [10n, 20n, 30n, 40n, 50n]);
  const ids = new Set([(await ethConfig(context('bpo1'))) as { current: Config }, (await ethConfig(context('bpo2'))) as { current: Config }].map((c) => c.current.forkId));
  ids.add(osaka.current.forkId);
  t.is(ids.size, 3, 'Osaka, BPO1 and BPO2 have different fork ids');
});
