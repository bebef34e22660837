/**
 * The block-level system operations of Cancun and Prague for the chain's own block building loop:
 * EIP-4788 (parent beacon root), EIP-2935 (parent hash history) before the transactions, and EIP-7685
 * requests (EIP-6110 deposits, EIP-7002 withdrawals, EIP-7251 consolidations) after them.
 *
 * Import (block-execution.ts) and building must produce the very same state and requests hash as
 * ethereumjs' runBlock, so they call its own functions: ethereumjs defines them in its runBlock and
 * requests modules but does not export them from the package entry, so those modules are loaded from
 * beside it (the same module instances the entry uses).
 */
import { genRequestsRoot } from '@ethereumjs/block';
import { sha256 } from '@noble/hashes/sha2.js';
import type { CLRequest, CLRequestType } from '@ethereumjs/util';
import type { RunTxResult, VM } from '@ethereumjs/vm';

interface RunBlockInternals {
  accumulateParentBeaconBlockRoot(vm: VM, root: Uint8Array, timestamp: bigint): Promise<void>;
  accumulateParentBlockHash(vm: VM, currentBlockNumber: bigint, parentHash: Uint8Array): Promise<void>;
}

interface RequestsInternals {
  accumulateRequests(vm: VM, txResults: RunTxResult[], blockGasLimit: bigint, generate?: boolean): Promise<CLRequest<CLRequestType>[]>;
}

const vmEntry = import.meta.resolve('@ethereumjs/vm');
const internals = Promise.all([
  import(new URL('./runBlock.js', vmEntry).href) as Promise<RunBlockInternals>,
  import(new URL('./requests.js', vmEntry).href) as Promise<RequestsInternals>,
]);

/** What a block's header commits to before its transactions run: the beacon root and the parent hash. */
export interface PreTransactionContext {
  number: bigint;
  timestamp: bigint;
  parentHash: Uint8Array;
  parentBeaconBlockRoot: Uint8Array;
}

/** EIP-4788 and EIP-2935 writes, where active (each skipped when its contract has no code, as on import). */
export async function runPreTransactionSystemCalls(vm: VM, block: PreTransactionContext): Promise<void> {
  const [runBlockModule] = await internals;
  if (vm.common.isActivatedEIP(4788)) {
    await runBlockModule.accumulateParentBeaconBlockRoot(vm, block.parentBeaconBlockRoot, block.timestamp);
  }
  if (vm.common.isActivatedEIP(2935)) await runBlockModule.accumulateParentBlockHash(vm, block.number, block.parentHash);
}

/**
 * EIP-7685: the requests of a block whose transactions gave `txResults` (deposit logs, then the
 * withdrawal and consolidation contracts' queues, which the system calls dequeue), and their hash.
 * `building` is runBlock's `generate`: a block being built, not one being checked.
 */
export async function collectRequests(
  vm: VM,
  txResults: RunTxResult[],
  blockGasLimit: bigint,
  building = true,
): Promise<{ requests: CLRequest<CLRequestType>[]; requestsHash: Uint8Array }> {
  const [, requestsModule] = await internals;
  const requests = await requestsModule.accumulateRequests(vm, txResults, blockGasLimit, building);
  return { requests, requestsHash: genRequestsRoot(requests, sha256) };
}
