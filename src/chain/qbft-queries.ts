/**
 * The chain reads QBFT needs, run inside the chain actor (workers/chain.worker.ts answers the
 * consensus* requests with these): header summaries for the vote tally and the qbft_* methods, and
 * the read-only call of the validator contract (qbft-and-p2p.md §7).
 */
import type { Block } from '@ethereumjs/block';
import { Address, equalsBytes } from '@ethereumjs/util';
import type { Chain } from './chain.js';
import type { HeaderSummary } from '../shared/qbft/validators.js';

export function headerSummary(block: Block): HeaderSummary {
  const h = block.header;
  return { number: h.number, hash: block.hash(), coinbase: h.coinbase.bytes, extraData: h.extraData, timestamp: h.timestamp, gasLimit: h.gasLimit };
}

/** Canonical headers `from..to` inclusive; stops at the first missing block. */
export async function headerSummaries(chain: Chain, from: bigint, to: bigint): Promise<HeaderSummary[]> {
  const result: HeaderSummary[] = [];
  const head = chain.getHead().number;
  for (let n = from < 0n ? 0n : from; n <= to && n <= head; n++) {
    const block = await chain.store.getBlockByNumber(n);
    if (!block) break;
    result.push(headerSummary(block));
  }
  return result;
}

export async function headerSummaryByHash(chain: Chain, hash: Uint8Array): Promise<HeaderSummary | null> {
  const block = await chain.store.getBlock(hash);
  if (!block) return null;
  // Only canonical blocks count (a QBFT chain has no others, but a stale entry must not answer).
  const canonical = await chain.store.getCanonicalHash(block.header.number);
  return canonical && equalsBytes(canonical, hash) ? headerSummary(block) : null;
}

/**
 * `to.call(data)` from the zero address on the state after block `blockNumber`, with the block's gas
 * limit and no balance checks, as Besu calls the validator contract. Throws when the call fails.
 */
export async function callOnState(chain: Chain, blockNumber: bigint, to: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const block = await chain.store.getBlockByNumber(blockNumber);
  if (!block) throw new Error(`block ${blockNumber} is not in the chain`);
  return callOnBlockState(chain, block, to, data);
}

/** `callOnState` on the state after `block`, which may be a block off the canonical chain. */
export function callOnBlockState(chain: Chain, block: Block, to: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  return chain.withStateAt(block.header.stateRoot, async (vm) => {
    vm.common.setHardforkBy({ blockNumber: block.header.number, timestamp: block.header.timestamp });
    await vm.evm.journal.checkpoint();
    try {
      const result = await vm.evm.runCall({
        to: new Address(to),
        caller: new Address(new Uint8Array(20)),
        origin: new Address(new Uint8Array(20)),
        data,
        gasLimit: block.header.gasLimit,
        skipBalance: true,
        block,
      });
      const error = result.execResult.exceptionError;
      if (error) throw new Error(`call to ${new Address(to).toString()} failed: ${error.error}`);
      return result.execResult.returnValue;
    } finally {
      await vm.evm.journal.revert();
    }
  });
}
