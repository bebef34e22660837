/**
 * The struct-log tracer (Besu's default for debug_traceTransaction, debug_traceBlock*, debug_traceCall):
 * one entry per EVM step in Besu's shape, `{gas, failed, returnValue, structLogs: [{pc, op, gas,
 * gasCost, depth, stack, memory, storage}]}` with 32-byte words as bare hex.
 */
import type { Block } from '@ethereumjs/block';
import { bytesToHex, setLengthLeft, bigIntToBytes } from '@ethereumjs/util';
import { runTx } from '@ethereumjs/vm';
import type { VM } from '@ethereumjs/vm';
import type { InterpreterStep } from '@ethereumjs/evm';
import type { Json } from '../rpc/types.js';
import type { TraceOptions } from '../rpc/methods/param-shapes.js';
import type { StateAtBlock } from './state-views.js';
import { runPreTransactionSystemCalls } from './system-calls.js';

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

/**
 * Collects one struct log per EVM step, in Besu's shape: 32-byte words as bare hex, memory as words,
 * the storage a contract has read or written so far (as Besu reports it on each step).
 */
export class StructLogCollector {
  readonly structLogs: Json[] = [];
  /** Storage seen so far, per contract address. */
  private readonly storageByAddress = new Map<string, Map<string, string>>();

  constructor(private readonly options: TraceOptions) {}

  readonly onStep = async (step: InterpreterStep, resolve?: (result?: unknown) => void): Promise<void> => {
    try {
      const address = step.address.toString();
      let storage = this.storageByAddress.get(address);
      if (storage === undefined) {
        storage = new Map();
        this.storageByAddress.set(address, storage);
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
      if (!this.options.disableStack) entry.stack = stack.map(word);
      if (!this.options.disableMemory) entry.memory = memoryWords(step.memory, step.memoryWordCount);
      if (!this.options.disableStorage) entry.storage = Object.fromEntries(storage);
      this.structLogs.push(entry);
    } finally {
      resolve?.();
    }
  };

  /** The trace of a transaction or call that ran: `{gas, failed, returnValue, structLogs}`. */
  result(execution: { totalGasSpent: bigint; execResult: { exceptionError?: unknown; returnValue: Uint8Array } }): Json {
    return {
      gas: Number(execution.totalGasSpent),
      failed: execution.execResult.exceptionError !== undefined,
      returnValue: bareHex(execution.execResult.returnValue),
      structLogs: this.structLogs,
    };
  }
}

/** Runs `fn` with `collector` listening to the EVM's steps. */
export async function withStepListener<T>(vm: VM, onStep: StructLogCollector['onStep'] | undefined, fn: () => Promise<T>): Promise<T> {
  if (onStep === undefined) return fn();
  vm.evm.events!.on('step', onStep);
  try {
    return await fn();
  } finally {
    vm.evm.events!.off('step', onStep);
  }
}

/**
 * Re-executes a block's transactions on its parent's state (inside a checkpoint that is reverted, so
 * nothing is written) and traces those at `traced` (all when undefined). Each transaction is one
 * step of work: between them the chain thread takes other messages (block import among them), so a
 * long block trace never holds them up for more than one transaction.
 */
async function traceBlockTransactions(chain: StateAtBlock, block: Block, parentStateRoot: Uint8Array, options: TraceOptions, traced?: number): Promise<Json[]> {
  // On the trie-backed state: pre-Byzantium receipts need state roots between transactions.
  return chain.withTrieStateAt(parentStateRoot, async (vm) => {
    vm.common.setHardforkBy({ blockNumber: block.header.number, timestamp: block.header.timestamp });
    await vm.evm.journal.checkpoint();
    const traces: Json[] = [];
    try {
      // The block's own system writes (beacon root, parent hash history) come before its transactions.
      await runPreTransactionSystemCalls(vm, {
        number: block.header.number,
        timestamp: block.header.timestamp,
        parentHash: block.header.parentHash,
        parentBeaconBlockRoot: block.header.parentBeaconBlockRoot ?? new Uint8Array(32),
      });
      const last = traced ?? block.transactions.length - 1;
      for (let i = 0; i <= last; i++) {
        const collector = traced === undefined || traced === i ? new StructLogCollector(options) : undefined;
        const result = await withStepListener(vm, collector?.onStep, () =>
          runTx(vm, { tx: block.transactions[i]!, block, skipHardForkValidation: true, skipBlockGasLimitValidation: true }),
        );
        if (collector) traces.push(collector.result(result));
        if (i < last) await new Promise((resolve) => setImmediate(resolve));
      }
      return traces;
    } finally {
      await vm.evm.journal.revert();
      await reanchorAfterPreByzantium(vm, parentStateRoot);
    }
  });
}

/** debug_traceTransaction: the transaction at `index` of `block`, after the ones before it. */
export async function traceTransaction(chain: StateAtBlock, block: Block, parentStateRoot: Uint8Array, index: number, options: TraceOptions): Promise<Json> {
  return (await traceBlockTransactions(chain, block, parentStateRoot, options, index))[0]!;
}

/** debug_traceBlock*: every transaction of `block`, in order. */
export function traceBlock(chain: StateAtBlock, block: Block, parentStateRoot: Uint8Array, options: TraceOptions): Promise<Json[]> {
  return traceBlockTransactions(chain, block, parentStateRoot, options);
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
