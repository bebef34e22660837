/**
 * The transaction pool actor in the test's own process, without threads: decoding in-line (as a decode
 * thread does, errors as `{code, message}`), every sender's account funded with nonce 0.
 */
import type { HeadInfo } from '../../src/shared/actors/messages.js';
import type { Genesis } from '../../src/shared/ethereum/genesis.js';
import { toRpcErrorObject } from '../../src/shared/rpc/errors.js';
import { Logger } from '../../src/shared/util/log.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import type { BlobVerifier } from '../../src/tasks/transaction-decode.js';
import { TxPoolActor } from '../../src/txpool/txpool-actor.js';
import type { TxPoolActorDeps } from '../../src/txpool/txpool-actor.js';

/** A chain head at `number` whose next block is of `nextHardfork`; the other fields are what the pool reads. */
export function poolHead(number: bigint, nextHardfork = 'prague'): HeadInfo {
  return {
    number,
    hash: new Uint8Array(32).fill(Number(number) + 1),
    timestamp: number,
    gasLimit: 30_000_000n,
    baseFeePerGas: 7n,
    nextBaseFeePerGas: 7n,
    nextHardfork,
    stateRoot: new Uint8Array(32),
    coinbase: new Uint8Array(20),
    extraData: new Uint8Array(0),
    totalDifficulty: number + 1n,
  };
}

/** Decodes as the decode threads do, with `kzg` for blob transactions. */
export function inlineDecode(kzg?: BlobVerifier): TxPoolActorDeps['decode'] {
  return async (raw, rules) => {
    try {
      return { ok: decodeRawTransaction(raw, rules, kzg) };
    } catch (err) {
      return { error: toRpcErrorObject(err) };
    }
  };
}

/**
 * A pool actor set to `head`; `decode` replaces the in-line decoder (to count or hold decodes),
 * `loadPendingView` the loading of the pending-transaction view (to count loads).
 */
export function poolActor(
  genesis: Genesis,
  head: HeadInfo,
  decode: TxPoolActorDeps['decode'] = inlineDecode(),
  loadPendingView?: TxPoolActorDeps['loadPendingView'],
): TxPoolActor {
  const pool = new TxPoolActor({
    genesis,
    loadPendingView,
    pool: {},
    decode,
    accounts: async (addresses) => ({ head, accounts: addresses.map(() => ({ nonce: 0n, balance: 10n ** 20n, hasCode: false })) }),
    log: new Logger('TxPool'),
  });
  pool.setHead(head);
  return pool;
}
