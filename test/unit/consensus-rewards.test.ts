/**
 * QBFT block rewards, mining beneficiary and their transitions (qbft-and-p2p.md §8) on the real chain:
 * a block built with the runTx loop and the same block imported with runBlock elsewhere credit the
 * same accounts and reach the same state root.
 */
import test from 'ava';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { Address, bytesToHex, hexToBytes } from '@ethereumjs/util';
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

const dev = loadDevNetwork();
const VALIDATOR = addressOf(dev.validatorKey);
const BENEFICIARY = '0x000000000000000000000000000000000000beef';
const ZERO = '0x0000000000000000000000000000000000000000';
const TIP = 2n;

function rewardGenesis(): string {
  const genesis = structuredClone(dev.genesisJson) as { config: Record<string, unknown> & { qbft: Record<string, unknown> }; alloc: Record<string, { code?: string }> };
  // Without the dev network's system contracts, whose per-block writes would touch the state of an empty block.
  genesis.alloc = Object.fromEntries(Object.entries(genesis.alloc).filter(([, account]) => account.code === undefined));
  genesis.config.qbft.blockreward = '0x1000';
  genesis.config.transitions = {
    qbft: [
      { block: 2, miningbeneficiary: BENEFICIARY },
      { block: 3, blockreward: '5', miningbeneficiary: '' },
      { block: 4, blockreward: '0' },
      { block: 6, blockreward: '7', miningbeneficiary: ZERO },
    ],
  };
  return JSON.stringify(genesis);
}

function transfer(nonce: bigint): PoolTxForBlock {
  const raw = createFeeMarket1559Tx(
    { chainId: 1337n, nonce, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: TIP, to: '0x00000000000000000000000000000000000c0ffe', value: 1n },
    { common: txCommonFor(1337n, 'cancun') },
  )
    .sign(hexToBytes(DEV_ACCOUNTS[0].privateKey))
    .serialize();
  const decoded = decodeRawTransaction(raw, txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

async function balance(chain: Chain, address: string | Uint8Array): Promise<bigint> {
  const head = chain.getHead();
  return chain.withStateAt(head.stateRoot, async (vm) => (await vm.stateManager.getAccount(new Address(typeof address === 'string' ? hexToBytes(address as `0x${string}`) : address)))?.balance ?? 0n);
}

async function exists(chain: Chain, address: string): Promise<boolean> {
  const head = chain.getHead();
  return chain.withStateAt(head.stateRoot, async (vm) => (await vm.stateManager.getAccount(new Address(hexToBytes(address as `0x${string}`)))) !== undefined);
}

test('block reward and fees go to the beneficiary of each block, identically when building and importing', async (t) => {
  const pathA = tempDataPath();
  const pathB = tempDataPath();
  const json = rewardGenesis();
  const a = await Chain.open(pathA, await chainSpecFromGenesis(json));
  const b = await Chain.open(pathB, await chainSpecFromGenesis(json));
  try {
    const validators = decodeExtraData(a.getHead().extraData).validators;
    let nonce = 0n;
    /** Builds a block on A (with or without one transfer), seals it, imports it into B. */
    const produce = async (withTransfer: boolean) => {
      const head = a.getHead();
      const unsealed = { vanity: new Uint8Array(32), validators, round: 0, seals: [] as Uint8Array[] };
      const built = await a.buildBlock({
        timestamp: head.timestamp + 1n,
        coinbase: VALIDATOR,
        extraData: encodeExtraData(unsealed),
        maxBuildMs: 10_000,
        transactions: withTransfer ? [transfer(nonce++)] : [],
      });
      t.is(built.block.transactions.length, withTransfer ? 1 : 0);
      const event = await a.importBuilt(built, encodeExtraData({ ...unsealed, seals: [signCommitSeal(built.hash, dev.validatorKey)] }));
      const block = await a.store.getBlock(event.head.hash);
      const imported = (await b.importBlock(b.spec.decodeBlock(block!.serialize())))!;
      t.is(bytesToHex(imported.head.stateRoot), bytesToHex(event.head.stateRoot), `state root of block ${event.head.number}`);
      t.is(bytesToHex(imported.head.hash), bytesToHex(event.head.hash));
      return event.head;
    };
    const fees = 21_000n * TIP;
    const snapshot = async () => ({ validator: await balance(a, VALIDATOR), beneficiary: await balance(a, BENEFICIARY), zero: await balance(a, ZERO) });

    let before = await snapshot();
    await produce(true); // block 1: genesis reward 0x1000 to the coinbase
    let after = await snapshot();
    t.is(after.validator - before.validator, 0x1000n + fees);
    t.is(after.beneficiary, 0n);

    before = after;
    await produce(true); // block 2: beneficiary configured, reward inherited
    after = await snapshot();
    t.is(after.validator - before.validator, 0n);
    t.is(after.beneficiary - before.beneficiary, 0x1000n + fees);

    before = after;
    await produce(false); // block 3: blank beneficiary = coinbase again; reward 5 on an empty block
    after = await snapshot();
    t.is(after.validator - before.validator, 5n);
    t.is(after.beneficiary - before.beneficiary, 0n);

    const parentRoot = a.getHead().stateRoot;
    await produce(false); // block 4: zero reward, empty block: nothing is touched
    t.is(bytesToHex(a.getHead().stateRoot), bytesToHex(parentRoot));

    before = await snapshot();
    await produce(true); // block 5: zero reward, fees only
    after = await snapshot();
    t.is(after.validator - before.validator, fees);

    t.false(await exists(a, ZERO));
    before = after;
    await produce(true); // block 6: the zero address is a real beneficiary
    after = await snapshot();
    t.is(after.zero - before.zero, 7n + fees);
    t.is(after.validator - before.validator, 0n);
  } finally {
    await a.close();
    await b.close();
    removeDataPath(pathA);
    removeDataPath(pathB);
  }
});

test('without rewards or a beneficiary the chain spec installs no reward rules', async (t) => {
  const spec = await chainSpecFromGenesis(JSON.stringify(dev.genesisJson));
  t.is(spec.blockRewards, undefined);
});
