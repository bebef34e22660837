/**
 * debug_traceTransaction with the default struct-log tracer: re-executes the block's transactions up
 * to the traced one on the parent state (inside a checkpoint that is reverted), recording one entry
 * per EVM step in Besu's shape: `{gas, failed, returnValue, structLogs: [{pc, op, gas, gasCost,
 * depth, stack, memory, storage}]}` with 32-byte words as bare hex.
 */
import type { Block } from '@ethereumjs/block';
import { bytesToHex, setLengthLeft, bigIntToBytes } from '@ethereumjs/util';
import { runTx } from '@ethereumjs/vm';
import type { VM } from '@ethereumjs/vm';
import type { InterpreterStep } from '@ethereumjs/evm';
import type { Json } from '../shared/rpc/types.js';
import type { TraceOptions } from '../shared/rpc/methods/param-shapes.js';
import type { Chain } from './chain.js';

function word(value: bigint): string {
  return value.toString(16).padStart(64, '0');
}

function bareHex(bytes: Uint8Array): string {
  return bytesToHex(bytes).slice(2);
}

function memoryWords(memory: Uint8Array, wordCount: bigint): string[] {
  const words: string[] = [];
  const length = Number(wordCount) * 32;
  for (let offset = 0; offset < length; offset += 32) {
    const chunk = new Uint8Array(32);
    chunk.set(memory.subarray(offset, Math.min(offset + 32, memory.length)));
    words.push(bareHex(chunk));
  }
  return words;
}

export async function traceTransaction(chain: Chain, block: Block, parentStateRoot: Uint8Array, index: number, options: TraceOptions): Promise<Json> {
  return chain.withStateAt(parentStateRoot, async (vm) => {
    vm.common.setHardforkBy({ blockNumber: block.header.number, timestamp: block.header.timestamp });
    await vm.evm.journal.checkpoint();
    const structLogs: Json[] = [];
    /** Storage seen so far, per contract address, as Besu reports it on each step. */
    const storageByAddress = new Map<string, Map<string, string>>();
    const onStep = async (step: InterpreterStep, resolve?: (result?: unknown) => void): Promise<void> => {
      try {
        const address = step.address.toString();
        let storage = storageByAddress.get(address);
        if (storage === undefined) {
          storage = new Map();
          storageByAddress.set(address, storage);
        }
        const stack = step.stack;
        if (step.opcode.name === 'SLOAD' && stack.length >= 1) {
          const key = stack[stack.length - 1]!;
          const value = await step.stateManager.getStorage(step.address, setLengthLeft(bigIntToBytes(key), 32));
          storage.set(word(key), bareHex(setLengthLeft(value, 32)));
        } else if (step.opcode.name === 'SSTORE' && stack.length >= 2) {
          storage.set(word(stack[stack.length - 1]!), word(stack[stack.length - 2]!));
        }
        const entry: { [key: string]: Json } = {
          pc: step.pc,
          op: step.opcode.name,
          gas: Number(step.gasLeft),
          gasCost: Number(BigInt(step.opcode.fee) + (step.opcode.dynamicFee ?? 0n)),
          depth: step.depth + 1,
        };
        if (!options.disableStack) entry.stack = stack.map(word);
        if (!options.disableMemory) entry.memory = memoryWords(step.memory, step.memoryWordCount);
        if (!options.disableStorage) entry.storage = Object.fromEntries(storage);
        structLogs.push(entry);
      } finally {
        resolve?.();
      }
    };
    try {
      for (let i = 0; i < index; i++) {
        await runTx(vm, { tx: block.transactions[i]!, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true });
      }
      vm.evm.events!.on('step', onStep);
      let result;
      try {
        result = await runTx(vm, { tx: block.transactions[index]!, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true });
      } finally {
        vm.evm.events!.off('step', onStep);
      }
      return {
        gas: Number(result.totalGasSpent),
        failed: result.execResult.exceptionError !== undefined,
        returnValue: bareHex(result.execResult.returnValue),
        structLogs,
      };
    } finally {
      await vm.evm.journal.revert();
      await reanchorAfterPreByzantium(vm, parentStateRoot);
    }
  });
}

/**
 * Before Byzantium every receipt holds the state root after its transaction, and ethereumjs gets it
 * by flushing its caches into the trie in the middle of the simulation; reverting the checkpoint
 * does not undo that. The read state is put back on its root, with clean caches, so the next read
 * at this root sees the block's state and not the simulation's.
 */
export async function reanchorAfterPreByzantium(vm: VM, stateRoot: Uint8Array): Promise<void> {
  if (!vm.common.gteHardfork('byzantium')) await vm.stateManager.setStateRoot(stateRoot, true);
}
