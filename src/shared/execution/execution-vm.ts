import type { StateManagerInterface } from '@ethereumjs/common';
import { createVM } from '@ethereumjs/vm';
import type { VM } from '@ethereumjs/vm';
import type { ChainSpec } from './chain-spec.js';
import { fastEipLookup } from './evm-tuning.js';
import { installPointEvaluation } from './kzg-point-evaluation.js';
import type { PointEvaluationInput } from './kzg-point-evaluation.js';

/** What the VM asks for BLOCKHASH: the hash of a block by number, on the branch it executes. */
export interface BlockHashSource {
  getBlock(blockId: number): Promise<{ hash(): Uint8Array }>;
  putBlock(): Promise<void>;
  shallowCopy(): BlockHashSource;
}

/**
 * A VM over `stateManager` as every VM of this node is made, on the chain thread and on reader
 * threads alike: its own copy of the spec's Common with the fast EIP lookup, the point-evaluation
 * precompile checked in a KZG thread, and `blockHashes` for BLOCKHASH.
 */
export async function createExecutionVm(
  spec: ChainSpec,
  stateManager: StateManagerInterface,
  blockHashes: BlockHashSource,
  verifyKzg: (input: PointEvaluationInput) => Promise<boolean>,
): Promise<VM> {
  const vm = await createVM({ common: spec.common.copy(), stateManager, blockchain: blockHashes as never });
  fastEipLookup(vm.common);
  if (vm.evm.common !== vm.common) fastEipLookup(vm.evm.common);
  installPointEvaluation(vm.evm, verifyKzg);
  return vm;
}
