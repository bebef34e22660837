/**
 * In-process chains of the dev network for unit tests: a Chain on a temporary RocksDB, transactions
 * signed by the dev accounts, and blocks built and sealed by the dev validator as QBFT would commit them.
 */
import type { Block } from '@ethereumjs/block';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import type { FeeMarket1559Tx, TypedTransaction } from '@ethereumjs/tx';
import { hexToBytes } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import type { BuiltBlock } from '../../src/chain/block-assembly.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import type { PoolTxForBlock } from '../../src/shared/actors/messages.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeExtraData, encodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf, signCommitSeal } from '../../src/shared/qbft/seal.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { removeDataPath, tempDataPath } from './node-process.js';

export const devNetwork = loadDevNetwork();
const genesisJson = JSON.stringify(devNetwork.genesisJson);
const txCommon = txCommonFor(1337n, 'cancun');

export const openDevChain = async (path: string): Promise<Chain> => Chain.open(path, await chainSpecFromGenesis(genesisJson));

/** `count` dev chains, each on a temporary database, closed and removed when the test ends. */
export async function openDevChains(t: { teardown(fn: () => Promise<void>): void }, count: number): Promise<Chain[]> {
  const paths = Array.from({ length: count }, () => tempDataPath());
  const chains = await Promise.all(paths.map(openDevChain));
  t.teardown(async () => {
    await Promise.all(chains.map((chain) => chain.close()));
    paths.forEach(removeDataPath);
  });
  return chains;
}

/** A 1559 transaction of the dev account `key`: 5 wei to 0x…c0ffe by default, or a call or deployment with `data`. */
export function signedTx(key: string, nonce: bigint, options: { to?: string; data?: string; value?: bigint } = {}): FeeMarket1559Tx {
  const { data } = options;
  return createFeeMarket1559Tx(
    {
      chainId: 1337n,
      nonce,
      gasLimit: data ? 200_000n : 21_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 2n,
      to: (options.to ?? (data ? undefined : '0x00000000000000000000000000000000000c0ffe')) as `0x${string}` | undefined,
      value: options.value ?? (data ? 0n : 5n),
      data: data ? hexToBytes(data as `0x${string}`) : undefined,
    },
    { common: txCommon },
  ).sign(hexToBytes(key as `0x${string}`));
}

/** A transaction as the pool hands it to block building. */
export function candidate(tx: TypedTransaction): PoolTxForBlock {
  const decoded = decodeRawTransaction(tx.serialize(), txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

/**
 * Builds a block on `chain`'s head `timeStep` seconds after it, paying `coinbase` (the dev validator
 * by default), and stores it sealed by the dev validator; resolves with what the chain built (its
 * receipts and the candidates it left out), the unsealed proposal and the sealed block.
 */
export async function buildAndCommit(
  chain: Chain,
  transactions: PoolTxForBlock[],
  { timeStep = 1n, coinbase = addressOf(devNetwork.validatorKey) }: { timeStep?: bigint; coinbase?: Uint8Array } = {},
): Promise<{ built: BuiltBlock; proposal: Uint8Array; sealed: Block }> {
  const head = chain.getHead();
  const unsealed = { vanity: new Uint8Array(32), validators: decodeExtraData(head.extraData).validators, round: 0, seals: [] as Uint8Array[] };
  const built = await chain.buildBlock({ timestamp: head.timestamp + timeStep, coinbase, extraData: encodeExtraData(unsealed), maxBuildMs: 10_000, transactions });
  const proposal = built.block.serialize();
  const event = await chain.importBuilt(built, encodeExtraData({ ...unsealed, seals: [signCommitSeal(built.hash, devNetwork.validatorKey)] }));
  return { built, proposal, sealed: (await chain.store.getBlock(event.head.hash))! };
}

/** `buildAndCommit` paying the dev validator, where every transaction must fit. */
export async function proposeAndCommit(chain: Chain, transactions: PoolTxForBlock[], timeStep = 1n): Promise<{ proposal: Uint8Array; sealed: Block }> {
  const { built, proposal, sealed } = await buildAndCommit(chain, transactions, { timeStep });
  if (built.rejected.length > 0) throw new Error(`test setup: expected every transaction to be included, ${built.rejected.length} left out`);
  return { proposal, sealed };
}
