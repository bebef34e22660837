import type { Block, HeaderData } from '@ethereumjs/block';
import { Block as BlockClass, createBlockHeader, createBlockHeaderFromBytesArray } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import type { Withdrawal } from '@ethereumjs/util';
import type { ChainSpec } from './chain-spec.js';
import { blockFromRlp, headerValuesOfBlockRlp } from '../ethereum/block-decode.js';
import { buildGenesis, genesisBlock, writeGenesisState } from '../ethereum/common.js';
import { parseGenesisJson } from '../ethereum/genesis.js';
import { MergeTransition, mergeTotalDifficulty } from '../ethereum/merge-transition.js';
import { createQbftHeader, qbftBlockFromRlp, qbftHeaderFromValues } from '../qbft/ethereumjs-blocks.js';
import { qbftBlockRewardRules } from './qbft-block-rewards.js';
import { QbftSchedule } from '../qbft/schedule.js';

/**
 * The ChainSpec of a Besu genesis: its EVM rules, genesis state and block, and the block hashing its
 * consensus uses (QBFT hashes exclude round and seals; ethash blocks hash plainly).
 */
export async function chainSpecFromGenesis(genesisJson: string, networkId?: bigint): Promise<ChainSpec> {
  const genesis = parseGenesisJson(genesisJson);
  const { common } = await buildGenesis(genesis);
  const qbft = genesis.consensus === 'qbft';
  const blockRewards = qbft ? qbftBlockRewardRules(QbftSchedule.fromGenesis(genesis)) : undefined;
  const terminalTotalDifficulty = mergeTotalDifficulty(genesis);
  return {
    ...(blockRewards ? { blockRewards } : {}),
    ...(terminalTotalDifficulty !== undefined ? { merge: new MergeTransition(terminalTotalDifficulty, common) } : {}),
    common,
    chainId: genesis.chainId,
    networkId: networkId ?? genesis.networkId,
    blockPeriodSeconds: BigInt(genesis.qbft?.blockPeriodSeconds ?? 1),
    writeGenesisState: async (stateManager) => {
      await writeGenesisState(stateManager, genesis);
    },
    genesisBlock: (stateRoot) => genesisBlock(genesis, common, stateRoot),
    decodeBlock: qbft
      ? (rlp) => qbftBlockFromRlp(rlp, common)
      : (rlp) => blockFromRlp(rlp, { common, setHardfork: true, skipConsensusFormatValidation: true }),
    decodeHeaderOfBlock: (rlp) => {
      const fields = headerValuesOfBlockRlp(rlp);
      return qbft ? qbftHeaderFromValues(fields, common) : createBlockHeaderFromBytesArray(fields, { common, setHardfork: true, skipConsensusFormatValidation: true });
    },
    createBlock: (headerData: HeaderData, transactions: TypedTransaction[], withdrawals?: Withdrawal[]): Block => {
      const opts = { common, setHardfork: true, skipConsensusFormatValidation: true } as const;
      const header = qbft ? createQbftHeader(headerData, opts) : createBlockHeader(headerData, opts);
      // The Block constructor takes the transaction objects as they are; createBlock would rebuild each.
      return new BlockClass(header, transactions, [], withdrawals, { common: header.common });
    },
  };
}
