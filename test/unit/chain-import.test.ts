/**
 * The chain core in one process: blocks built with the own runTx loop on one chain are imported with
 * runBlock into another, and both agree on every hash, state root and receipt.
 */
import test from 'ava';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import type { PoolTxForBlock } from '../../src/shared/actors/messages.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeExtraData, encodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf, signCommitSeal } from '../../src/shared/qbft/seal.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { storeAndLogDeployCode } from '../helpers/contracts.js';

const dev = loadDevNetwork();
const genesisJson = JSON.stringify(dev.genesisJson);

function candidate(raw: Uint8Array): PoolTxForBlock {
  const decoded = decodeRawTransaction(raw, txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

function transfer(key: string, nonce: bigint, data?: string, to?: string): Uint8Array {
  return createFeeMarket1559Tx(
    {
      chainId: 1337n,
      nonce,
      gasLimit: data ? 200_000n : 21_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 2n,
      to: data && !to ? undefined : ((to ?? '0x00000000000000000000000000000000000c0ffe') as `0x${string}`),
      value: data ? 0n : 5n,
      data: data ? hexToBytes(data as `0x${string}`) : undefined,
    },
    { common: txCommonFor(1337n, 'cancun') },
  )
    .sign(hexToBytes(key as `0x${string}`))
    .serialize();
}

test('blocks built on one chain import into another with identical results; each stored block\'s size is its encoding\'s', async (t) => {
  const pathA = tempDataPath();
  const pathB = tempDataPath();
  const a = await Chain.open(pathA, await chainSpecFromGenesis(genesisJson));
  const b = await Chain.open(pathB, await chainSpecFromGenesis(genesisJson));
  try {
    t.deepEqual(a.getHead().hash, b.getHead().hash, 'same genesis');
    const validators = decodeExtraData(a.getHead().extraData).validators;
    const coinbase = addressOf(dev.validatorKey);
    const blocks = [
      [candidate(transfer(DEV_ACCOUNTS[0].privateKey, 0n)), candidate(transfer(DEV_ACCOUNTS[1].privateKey, 0n, storeAndLogDeployCode()))],
      [candidate(transfer(DEV_ACCOUNTS[0].privateKey, 1n)), candidate(transfer(DEV_ACCOUNTS[0].privateKey, 5n)) /* gap: rejected */],
      [],
    ];
    for (const transactions of blocks) {
      const head = a.getHead();
      const unsealed = { vanity: new Uint8Array(32), validators, round: 0, seals: [] as Uint8Array[] };
      const built = await a.buildBlock({
        timestamp: head.timestamp + 1n,
        coinbase,
        extraData: encodeExtraData(unsealed),
        maxBuildMs: 10_000,
        transactions,
      });
      const sealed = encodeExtraData({ ...unsealed, seals: [signCommitSeal(built.hash, dev.validatorKey)] });
      const event = await a.importBuilt(built, sealed);
      const block = await a.store.getBlock(event.head.hash);
      const imported = (await b.importBlock(b.spec.decodeBlock(block!.serialize())))!;
      t.is(bytesToHex(imported.head.hash), bytesToHex(event.head.hash));
      t.is(bytesToHex(imported.head.stateRoot), bytesToHex(event.head.stateRoot));
      const receiptsA = await a.store.getReceipts(event.head.hash);
      const receiptsB = await b.store.getReceipts(imported.head.hash);
      t.deepEqual(receiptsB, receiptsA);
      for (const chain of [a, b]) t.is(await chain.store.getBlockSize(event.head.hash), block!.serialize().length);
    }
    t.is(await a.store.getBlockSize(new Uint8Array(32)), undefined);
    t.is(a.getHead().number, 3n);
    // Block 1 holds both transactions; in block 2 the gapped nonce was rejected, the nonce-1 transfer kept.
    t.is((await a.store.getBlockByNumber(1n))!.transactions.length, 2);
    t.is((await a.store.getBlockByNumber(2n))!.transactions.length, 1);

    // A block whose state root lies is refused, and the chain stays at its head.
    const good = (await a.store.getBlockByNumber(3n))!;
    const forgedHeader = { ...good.header.toJSON(), stateRoot: bytesToHex(new Uint8Array(32).fill(1)) };
    const c = await Chain.open(tempDataPath(), await chainSpecFromGenesis(genesisJson));
    try {
      for (let n = 1n; n <= 2n; n++) await c.importBlock(c.spec.decodeBlock((await a.store.getBlockByNumber(n))!.serialize()));
      const forged = c.spec.createBlock(forgedHeader as never, [...good.transactions], good.withdrawals);
      await t.throwsAsync(() => c.importBlock(forged), { message: /invalid block stateRoot/ });
      t.is(c.getHead().number, 2n);
      // and it still imports the true block afterwards
      await c.importBlock(c.spec.decodeBlock(good.serialize()));
      t.is(c.getHead().number, 3n);
    } finally {
      await c.close();
    }
  } finally {
    await a.close();
    await b.close();
    removeDataPath(pathA);
    removeDataPath(pathB);
  }
});

test('a QBFT chain whose London starts at block 2: the builder doubles the gas limit there, and the block imports', async (t) => {
  const genesis = structuredClone(dev.genesisJson) as { config: Record<string, unknown>; baseFeePerGas?: string };
  // Berlin-era start, London (and nothing later) at block 2.
  for (const key of Object.keys(genesis.config)) if (/^(shanghai|cancun|prague|osaka)Time$/i.test(key) || /^londonBlock$/i.test(key)) delete genesis.config[key];
  genesis.config.londonBlock = 2;
  delete genesis.baseFeePerGas;
  const json = JSON.stringify(genesis);
  const pathA = tempDataPath();
  const pathB = tempDataPath();
  const a = await Chain.open(pathA, await chainSpecFromGenesis(json));
  const b = await Chain.open(pathB, await chainSpecFromGenesis(json));
  try {
    const validators = decodeExtraData(a.getHead().extraData).validators;
    const limits: bigint[] = [a.getHeadBlock().header.gasLimit];
    for (let i = 0; i < 3; i++) {
      const head = a.getHead();
      const unsealed = { vanity: new Uint8Array(32), validators, round: 0, seals: [] as Uint8Array[] };
      const built = await a.buildBlock({ timestamp: head.timestamp + 1n, coinbase: addressOf(dev.validatorKey), extraData: encodeExtraData(unsealed), maxBuildMs: 1000, transactions: [] });
      const event = await a.importBuilt(built, encodeExtraData({ ...unsealed, seals: [signCommitSeal(built.hash, dev.validatorKey)] }));
      const block = await a.store.getBlock(event.head.hash);
      limits.push(block!.header.gasLimit);
      const imported = (await b.importBlock(b.spec.decodeBlock(block!.serialize())))!;
      t.is(bytesToHex(imported.head.hash), bytesToHex(event.head.hash));
    }
    t.deepEqual(limits.slice(1), [limits[0]!, limits[0]! * 2n, limits[0]! * 2n], 'doubled at the London block, kept after');
    t.is(a.getHeadBlock().header.baseFeePerGas !== undefined, true);
  } finally {
    await a.close();
    await b.close();
    removeDataPath(pathA);
    removeDataPath(pathB);
  }
});
