/**
 * Receipts that are not there yet, remembered for as long as the head they were asked at.
 *
 * Clients wait for a transaction by polling eth_getTransactionReceipt (ethers' `wait`, viem's
 * `waitForTransactionReceipt`; the peer bench asks for 64 hashes every ~10 ms). The chain's store
 * remembers a lookup's miss until its next write (KvStore.rememberMisses), so the chain no longer
 * reads RocksDB for it; what each miss still cost the chain thread was the message and its answer,
 * 22.7 µs: at 14,600 misses/s, a third of a core taken from the block those clients are waiting for.
 * The answer to a miss cannot change until the chain publishes another head, so a transport asks the
 * chain once per hash and head and answers the repeats itself.
 *
 * Why a remembered null is the chain's answer at the published head: the chain publishes a head only
 * after the block is stored, so when the head version is the same before the request and after the
 * answer, the chain answered from that head or from a block stored since and not yet published. A
 * transaction absent there was absent at the published head too (a block on top only adds receipts),
 * or the chain is re-organising onto a branch without it; that head is published next, like any,
 * and a published head forgets everything remembered.
 */
import type { ActorSend } from './local-methods.js';
import { isNullResult, type RpcOutcome } from './jsonrpc.js';
import type { HeadReader } from '../shared/shared-memory/head-view.js';
import type { TransactionHashParams } from '../shared/rpc/methods/param-shapes.js';
import { RecentKeys } from '../shared/util/recent-keys.js';

/** More distinct hashes than any client polls in one block time; past it the oldest are forgotten. */
const DEFAULT_CAPACITY = 8192;

const NULL_OUTCOME: RpcOutcome = { result: null };

/** `send`, answering eth_getTransactionReceipt itself for a hash the chain had no receipt for at the current head. */
export function rememberAbsentReceipts(send: ActorSend, head: HeadReader, capacity = DEFAULT_CAPACITY): ActorSend {
  let rememberedAt = 0;
  let absent = new RecentKeys(capacity);
  /** The misses remembered at head `version`: none once another head is published. */
  const absentAt = (version: number): RecentKeys => {
    if (version !== rememberedAt) {
      absent = new RecentKeys(capacity);
      rememberedAt = version;
    }
    return absent;
  };

  return async (owner, method, params) => {
    if (method !== 'eth_getTransactionReceipt') return send(owner, method, params);
    const before = head.version();
    // 0: no head published yet; odd: a publish is in progress.
    const usable = before !== 0 && (before & 1) === 0;
    const key = Buffer.from((params as unknown as TransactionHashParams).hash).toString('latin1');
    if (usable && absentAt(before).has(key)) return NULL_OUTCOME;
    const outcome = await send(owner, method, params);
    if (usable && isNullResult(outcome) && head.version() === before) absentAt(before).add(key);
    return outcome;
  };
}
