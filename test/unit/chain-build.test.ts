/**
 * Chain.buildBlock's verdicts on candidates it leaves out, in one process: the pool decides from them
 * whether a transaction stays, so each failure must say why (a used nonce, a nonce ahead of the
 * account, a balance short of the upfront cost, anything else), and a sender's later nonces behind a
 * left-out transaction are skipped without a verdict.
 */
import test from 'ava';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import type { FeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import type { PoolTxForBlock } from '../../src/shared/actors/messages.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const dev = loadDevNetwork();
const txCommon = txCommonFor(1337n, 'cancun');
const ETH = 10n ** 18n;
const GWEI = 10n ** 9n;
const [FRESH_KEY, OTHER_FRESH_KEY] = [`0x${'42'.repeat(32)}`, `0x${'43'.repeat(32)}`];
const addressOfKey = (key: string): `0x${string}` => bytesToHex(privateToAddress(hexToBytes(key as `0x${string}`)));

function transfer(key: string, nonce: bigint, value: bigint, fields: { maxFeePerGas?: bigint; gasLimit?: bigint; to?: `0x${string}` } = {}): FeeMarket1559Tx {
  const { maxFeePerGas = 10n * GWEI, gasLimit = 21_000n, to = addressOfKey(FRESH_KEY) } = fields;
  return createFeeMarket1559Tx({ chainId: 1337n, nonce, gasLimit, maxFeePerGas, maxPriorityFeePerGas: 1n, to, value }, { common: txCommon }).sign(
    hexToBytes(key as `0x${string}`),
  );
}

function candidate(tx: FeeMarket1559Tx): PoolTxForBlock {
  const decoded = decodeRawTransaction(tx.serialize(), txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

/** A candidate the pool would never admit (it checks intrinsic gas), as block building might still meet one. */
function unchecked(tx: FeeMarket1559Tx): PoolTxForBlock {
  return { raw: tx.serialize(), hash: tx.hash(), senderPublicKey: tx.getSenderPublicKey() };
}

async function buildAndImport(chain: Chain, transactions: PoolTxForBlock[]) {
  const head = chain.getHead();
  const built = await chain.buildBlock({ timestamp: head.timestamp + 1n, coinbase: new Uint8Array(20), extraData: head.extraData, maxBuildMs: 10_000, transactions });
  await chain.importBuilt(built, head.extraData);
  return built;
}

test('each left-out candidate carries its reason; later nonces of its sender are skipped', async (t) => {
  const path = tempDataPath();
  const chain = await Chain.open(path, await chainSpecFromGenesis(JSON.stringify(dev.genesisJson)));
  try {
    const [rich0, rich1, rich2] = [DEV_ACCOUNTS[0].privateKey, DEV_ACCOUNTS[1].privateKey, DEV_ACCOUNTS[2].privateKey];
    // Block 1: fund two fresh accounts and use nonce 0 of the third dev account.
    const first = await buildAndImport(chain, [
      candidate(transfer(rich1, 0n, ETH)),
      candidate(transfer(rich1, 1n, ETH, { to: addressOfKey(OTHER_FRESH_KEY) })),
      candidate(transfer(rich2, 0n, 1n)),
    ]);
    t.deepEqual(first.rejected, []);

    // The first dev account holds 200 ETH: 150 go, then 100 more cannot.
    const spends = candidate(transfer(rich0, 0n, 150n * ETH));
    const overspends = candidate(transfer(rich0, 1n, 100n * ETH));
    const behindOverspend = candidate(transfer(rich0, 2n, 1n));
    const ahead = candidate(transfer(rich1, 5n, 1n));
    const used = candidate(transfer(rich2, 0n, 2n));
    const belowBaseFee = candidate(transfer(FRESH_KEY, 0n, 1n, { maxFeePerGas: 1n }));
    const belowIntrinsicGas = unchecked(transfer(OTHER_FRESH_KEY, 0n, 1n, { gasLimit: 20_000n }));
    const built = await buildAndImport(chain, [spends, overspends, behindOverspend, ahead, used, belowBaseFee, belowIntrinsicGas]);

    t.is(built.block.transactions.length, 1);
    t.deepEqual(bytesToHex(built.block.transactions[0]!.hash()), bytesToHex(spends.hash));
    const verdicts = built.rejected.map(({ hash, reason }) => [bytesToHex(hash), reason]);
    t.deepEqual(verdicts, [
      [bytesToHex(overspends.hash), 'insufficient-funds'],
      [bytesToHex(ahead.hash), 'nonce-too-high'],
      [bytesToHex(used.hash), 'nonce-too-low'],
      [bytesToHex(belowBaseFee.hash), 'underpriced'],
      [bytesToHex(belowIntrinsicGas.hash), 'invalid'],
    ]);
    t.regex(built.rejected[4]!.detail ?? '', /gas/i);
    t.log(`invalid: ${built.rejected[4]!.detail}`);
  } finally {
    await chain.close();
    removeDataPath(path);
  }
});
