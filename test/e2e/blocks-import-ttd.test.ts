/**
 * `blocks import` of a chain that merges by terminal total difficulty (no merge block or timestamp
 * in its genesis): London-era mined blocks with block rewards, then proof-of-stake blocks (difficulty
 * 0, no reward, PREVRANDAO from the mix hash) from the block after the one whose total difficulty
 * reaches the TTD. The chain is generated here with ethereumjs' block builder, told where the merge
 * is by a genesis with a fixed `mergeNetsplitBlock`; the importer's genesis only has the TTD.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Block } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Address, bigIntToBytes, bytesToBigInt, bytesToHex, createAddressFromPrivateKey, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { buildBlock, createVM } from '@ethereumjs/vm';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { Chain } from '../../src/chain/chain.js';
import { databasePath } from '../../src/shared/util/data-path.js';
import { buildGenesis, writeGenesisState } from '../../src/shared/ethereum/common.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { importBlocks } from '../helpers/parity-node.js';

const CHAIN_ID = 2718n;
const SENDER_KEY = hexToBytes(`0x${'42'.repeat(32)}`);
const SENDER = createAddressFromPrivateKey(SENDER_KEY);
const RECIPIENT = new Address(hexToBytes(`0x${'77'.repeat(20)}`));
const POW_COINBASE = new Address(hexToBytes(`0x${'c0'.repeat(20)}`));
const POS_COINBASE = new Address(hexToBytes(`0x${'c1'.repeat(20)}`));
const GENESIS_DIFFICULTY = 0x20000n;
const BLOCK_TIME = 10n;
const PRIORITY_FEE = 2n;
const LONDON_BLOCK_REWARD = 2n * 10n ** 18n;
/** Runtime storing DIFFICULTY (PREVRANDAO after the merge) under the block number: NUMBER, DIFFICULTY, SSTORE. */
const RANDAO_PROBE_RUNTIME = '4443' + '55' + '00';
const RANDAO_PROBE_DEPLOY = `0x6004600c60003960046000f3${RANDAO_PROBE_RUNTIME}`;
const PROBE = createContractAddress(SENDER, 0n);
const BLOCK_COUNT = 7;

function createContractAddress(from: Address, nonce: bigint): Address {
  const hash = keccak_256(RLP.encode([from.bytes, nonce === 0n ? new Uint8Array() : bigIntToBytes(nonce)]));
  return new Address(hash.subarray(12));
}

/** A London-from-genesis ethash chain; `config` adds the merge rule under test. */
function genesisJson(config: Record<string, unknown>): string {
  return JSON.stringify({
    config: { chainId: Number(CHAIN_ID), londonBlock: 0, ethash: {}, ...config },
    nonce: '0x0',
    timestamp: '0x10',
    gasLimit: '0x1c9c380',
    difficulty: `0x${GENESIS_DIFFICULTY.toString(16)}`,
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    extraData: '0x',
    alloc: { [SENDER.toString().slice(2)]: { balance: '0x3635c9adc5dea00000' } },
  });
}

/**
 * Blocks 1..count: block 1 deploys the PREVRANDAO probe, every block calls it and pays the recipient.
 * Mined blocks carry fake seals (checked nowhere: the import skips proof-of-work validation).
 */
async function generateChain(json: string, count: number): Promise<Block[]> {
  const genesis = parseGenesisJson(json);
  const { common, block: genesisBlock } = await buildGenesis(genesis);
  const vm = await createVM({ common: common.copy(), stateManager: new MerkleStateManager({ common }) });
  await writeGenesisState(vm.stateManager as MerkleStateManager, genesis);
  const blocks: Block[] = [];
  let parent = genesisBlock;
  let nonce = 0n;
  for (let n = 1n; n <= BigInt(count); n++) {
    const timestamp = genesis.header.timestamp + n * BLOCK_TIME;
    vm.common.setHardforkBy({ blockNumber: n, timestamp });
    const proofOfStake = vm.common.consensusType() === 'pos';
    const builder = await buildBlock(vm, {
      parentBlock: parent,
      headerData: {
        number: n,
        timestamp,
        gasLimit: parent.header.gasLimit,
        coinbase: proofOfStake ? POS_COINBASE : POW_COINBASE,
        // After the merge the mix hash is the beacon chain's randomness (PREVRANDAO).
        mixHash: keccak_256(Uint8Array.of(Number(n), proofOfStake ? 1 : 0)),
      },
      blockOpts: { calcDifficultyFromHeader: parent.header, putBlockIntoBlockchain: false, skipConsensusFormatValidation: true },
    });
    const txCommon = txCommonFor(CHAIN_ID, vm.common.hardfork());
    const tx = (to: Address | undefined, data: string, value: bigint): TypedTransaction =>
      createFeeMarket1559Tx(
        { chainId: CHAIN_ID, nonce: nonce++, gasLimit: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: PRIORITY_FEE, to, value, data: hexToBytes(data as `0x${string}`) },
        { common: txCommon },
      ).sign(SENDER_KEY);
    if (n === 1n) await builder.addTransaction(tx(undefined, RANDAO_PROBE_DEPLOY, 0n));
    await builder.addTransaction(tx(PROBE, '0x', 0n));
    await builder.addTransaction(tx(RECIPIENT, '0x', 1000n + n));
    const { block } = await builder.build();
    blocks.push(block);
    parent = block;
  }
  return blocks;
}

function writeBlocks(dir: string, name: string, blocks: Uint8Array[]): string {
  const file = join(dir, name);
  writeFileSync(file, Buffer.concat(blocks.map((b) => Buffer.from(b))));
  return file;
}

/** Header field `field` of an encoded block replaced. */
function withHeaderField(encoded: Uint8Array, field: number, value: Uint8Array): Uint8Array {
  const [header, ...body] = RLP.decode(encoded) as unknown as [Uint8Array[], ...unknown[]];
  const changed = [...header];
  changed[field] = value;
  return RLP.encode([changed, ...(body as Uint8Array[])] as never);
}

interface StoredChain {
  head: { number: bigint; hash: string };
  /** The first proof-of-stake block, as the reopened chain works it out from stored total difficulties. */
  mergeBlock: bigint | undefined;
  /** The hardfork a stored block decodes with. */
  hardforkOf(number: bigint): Promise<string>;
  balance(address: Address): Promise<bigint>;
  storage(address: Address, slot: bigint): Promise<bigint>;
  /** Sum over the blocks' transactions of gas used × the priority fee (all goes to the coinbase). */
  tips(numbers: bigint[]): Promise<bigint>;
}

/** Opens the stored chain in this process (as a restarted node would) and reads it. */
async function withStoredChain<T>(dataPath: string, json: string, read: (chain: StoredChain) => Promise<T>): Promise<T> {
  const chain = await Chain.open(databasePath(dataPath), await chainSpecFromGenesis(json));
  try {
    const head = chain.getHead();
    const state = <V>(fn: (sm: MerkleStateManager) => Promise<V>) => chain.withStateAt(head.stateRoot, (vm) => fn(vm.stateManager as MerkleStateManager));
    return await read({
      head: { number: head.number, hash: bytesToHex(head.hash) },
      mergeBlock: chain.spec.merge?.mergeBlock,
      hardforkOf: async (number) => (await chain.store.getBlockByNumber(number))!.header.common.hardfork(),
      balance: (address) => state(async (sm) => (await sm.getAccount(address))?.balance ?? 0n),
      storage: (address, slot) => state(async (sm) => bytesToBigInt(await sm.getStorage(address, setLengthLeft(bigIntToBytes(slot), 32)))),
      async tips(numbers) {
        let total = 0n;
        for (const number of numbers) {
          const hash = (await chain.store.getCanonicalHash(number))!;
          for (const receipt of (await chain.store.getReceipts(hash))!) total += receipt.gasUsed * PRIORITY_FEE;
        }
        return total;
      },
    });
  } finally {
    await chain.close();
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i));

test('a chain merging by terminal total difficulty imports: rewards before, none after, PREVRANDAO; restarts keep the merge', async (t) => {
  t.timeout(240_000);
  // The total difficulty of the mined chain decides where the merge is: after block 3 here.
  const mined = await generateChain(genesisJson({}), BLOCK_COUNT);
  const totalDifficulty = (n: number) => mined.slice(0, n).reduce((td, b) => td + b.header.difficulty, GENESIS_DIFFICULTY);
  const terminal = 3;
  const ttd = totalDifficulty(terminal - 1) + 1n;
  t.true(totalDifficulty(terminal) >= ttd);
  const importGenesis = genesisJson({ terminalTotalDifficulty: `0x${ttd.toString(16)}` });
  const merged = await generateChain(genesisJson({ mergeNetsplitBlock: terminal + 1 }), BLOCK_COUNT);
  // Same mined blocks up to the terminal block, proof-of-stake blocks after it.
  t.deepEqual(merged.slice(0, terminal).map((b) => bytesToHex(b.hash())), mined.slice(0, terminal).map((b) => bytesToHex(b.hash())));
  t.true(merged.slice(terminal).every((b) => b.header.difficulty === 0n));

  const dataPath = tempDataPath();
  t.teardown(() => removeDataPath(dataPath));
  // Past the first proof-of-stake block, then the rest in a second run: the restarted importer must
  // find the merge again from the stored total difficulties.
  const first = writeBlocks(dataPath, 'first.blocks', merged.slice(0, terminal + 2).map((b) => b.serialize()));
  const rest = writeBlocks(dataPath, 'rest.blocks', merged.slice(terminal + 2).map((b) => b.serialize()));
  const run1 = await importBlocks(dataPath, first, ['--skip-pow-validation-enabled'], writeGenesis(dataPath, importGenesis));
  t.is(run1.code, 0, run1.stderr);
  t.regex(run1.stdout, new RegExp(`Head #${terminal + 2} ${bytesToHex(merged[terminal + 1]!.hash())}`));
  const run2 = await importBlocks(dataPath, rest, ['--skip-pow-validation-enabled'], writeGenesis(dataPath, importGenesis));
  t.is(run2.code, 0, run2.stderr);
  const last = merged[BLOCK_COUNT - 1]!;
  t.regex(run2.stdout, new RegExp(`Head #${BLOCK_COUNT} ${bytesToHex(last.hash())}`));

  await withStoredChain(dataPath, importGenesis, async (chain) => {
    t.deepEqual(chain.head, { number: BigInt(BLOCK_COUNT), hash: bytesToHex(last.hash()) });
    t.is(chain.mergeBlock, BigInt(terminal + 1));
    t.is(await chain.hardforkOf(BigInt(terminal)), 'london');
    t.is(await chain.hardforkOf(BigInt(terminal + 1)), 'paris');
    // Mined blocks: 2 ETH each plus tips; proof-of-stake blocks: tips only.
    t.is(await chain.balance(POW_COINBASE), BigInt(terminal) * LONDON_BLOCK_REWARD + (await chain.tips(range(1, terminal))));
    const posTips = await chain.tips(range(terminal + 1, BLOCK_COUNT));
    t.true(posTips > 0n);
    t.is(await chain.balance(POS_COINBASE), posTips);
    // DIFFICULTY before the merge, the mix hash (PREVRANDAO) after it.
    for (const block of merged) {
      const expected = block.header.difficulty === 0n ? BigInt(bytesToHex(block.header.mixHash)) : block.header.difficulty;
      t.is(await chain.storage(PROBE, block.header.number), expected, `probe value of block ${block.header.number}`);
    }
  });
});

test('a mined block after the terminal total difficulty, or a proof-of-stake block before it, is refused', async (t) => {
  t.timeout(240_000);
  const mined = await generateChain(genesisJson({}), 4);
  const terminal = 3;
  const ttd = mined.slice(0, terminal).reduce((td, b) => td + b.header.difficulty, GENESIS_DIFFICULTY);
  const importGenesis = genesisJson({ terminalTotalDifficulty: `0x${ttd.toString(16)}` });

  const afterTtd = tempDataPath();
  t.teardown(() => removeDataPath(afterTtd));
  const powFile = writeBlocks(afterTtd, 'pow.blocks', mined.map((b) => b.serialize()));
  const pow = await importBlocks(afterTtd, powFile, ['--skip-pow-validation-enabled'], writeGenesis(afterTtd, importGenesis));
  t.is(pow.code, 1);
  t.regex(pow.stderr, /Block #4 \(0x[0-9a-f]{64}\) could not be imported: a proof-of-work block \(difficulty \d+\) cannot follow the terminal total difficulty/);
  t.regex(pow.stderr, new RegExp(`database keeps the chain up to block #3 ${bytesToHex(mined[2]!.hash())}`));
  await withStoredChain(afterTtd, importGenesis, async (chain) => t.is(chain.head.number, 3n));

  const beforeTtd = tempDataPath();
  t.teardown(() => removeDataPath(beforeTtd));
  // Block 2 made proof-of-stake shaped (difficulty 0, its nonce is already 0).
  const posShaped = withHeaderField(mined[1]!.serialize(), 7, new Uint8Array());
  const posFile = writeBlocks(beforeTtd, 'pos.blocks', [mined[0]!.serialize(), posShaped]);
  const pos = await importBlocks(beforeTtd, posFile, ['--skip-pow-validation-enabled'], writeGenesis(beforeTtd, importGenesis));
  t.is(pos.code, 1);
  t.regex(pos.stderr, /Block #2 .* could not be imported: a proof-of-stake block cannot come before the terminal total difficulty/);
  await withStoredChain(beforeTtd, importGenesis, async (chain) => t.is(chain.head.number, 1n));
});

function writeGenesis(dir: string, json: string): string {
  const file = join(dir, 'genesis.json');
  writeFileSync(file, json);
  return file;
}
