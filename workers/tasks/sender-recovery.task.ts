/**
 * Piscina task for `blocks import`: recovers the sender public key of every transaction of a batch
 * of encoded blocks, so that the chain thread, which must execute blocks one after another, spends
 * no time on signature recovery (libsecp256k1 through the chain's Common). Recovery is stateless and
 * the batches ahead of the one executing are recovered meanwhile on other cores.
 *
 * The worker learns the chain's rules once, from `workerData.genesisJson`.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../../src/shared/util/hex-builtins.js';
import { workerData } from 'node:worker_threads';
import { RLP } from '@ethereumjs/rlp';
import { createTxFromBlockBodyData } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToBigInt } from '@ethereumjs/util';
import { createChainCommon } from '../../src/shared/ethereum/common.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { nameThisThread } from '../../src/shared/util/thread-name.js';

nameThisThread('tx-recovery');

export interface SenderRecoveryWorkerData {
  genesisJson: string;
}

/** Per block, the 64-byte sender public key of each transaction; null where decoding or recovery failed. */
export type RecoveredSenders = (Uint8Array[] | null)[];

function isSenderRecoveryData(value: unknown): value is SenderRecoveryWorkerData {
  return typeof value === 'object' && value !== null && 'genesisJson' in value && typeof value.genesisJson === 'string';
}

const data: unknown = workerData;
if (!isSenderRecoveryData(data)) throw new Error('the sender recovery pool was started without the chain genesis');
const common = createChainCommon(parseGenesisJson(data.genesisJson));

/** Header field positions in every fork's header list. */
const NUMBER_FIELD = 8;
const TIMESTAMP_FIELD = 11;

function sendersOf(encodedBlock: Uint8Array): Uint8Array[] | null {
  try {
    const [header, transactions] = RLP.decode(encodedBlock) as unknown as [Uint8Array[], (Uint8Array | Uint8Array[])[]];
    common.setHardforkBy({ blockNumber: bytesToBigInt(header[NUMBER_FIELD]!), timestamp: bytesToBigInt(header[TIMESTAMP_FIELD]!) });
    return transactions.map((data) => {
      const tx: TypedTransaction = createTxFromBlockBodyData(data as never, { common });
      return tx.getSenderPublicKey();
    });
  } catch {
    // The chain thread decodes the block itself and reports what is wrong with it.
    return null;
  }
}

export default function recoverSenders({ blocks }: { blocks: Uint8Array[] }): RecoveredSenders {
  return blocks.map(sendersOf);
}
