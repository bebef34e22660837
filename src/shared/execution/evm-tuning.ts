/**
 * Per-call and per-opcode costs of `@ethereumjs/evm` 10 that do not change what the EVM computes.
 * Each reaches into the library's internals and throws when those are not where it expects them (a
 * library upgrade must look again, not silently lose the speed-up); unit tests run them.
 */
import { Hardfork, type Common } from '@ethereumjs/common';
import { EVMError } from '@ethereumjs/evm';
import { Account, bigIntToBytes, bytesToBigInt, createZeroAddress, isHexString, setLengthLeft } from '@ethereumjs/util';
import { withFields } from '../util/with-fields.js';

interface JumpAnalysis {
  jumps: Uint8Array;
  pushes: Record<number, bigint>;
  opcodesCached: unknown[];
}
interface InterpreterPrototype {
  _getValidJumpDestinations(this: { _evm: { _opcodeMap: object } }, code: Uint8Array): JumpAnalysis;
}

let jumpAnalysisCached: Promise<void> | undefined;
let inlineStepsInstalled: Promise<void> | undefined;
let wordHandlersInstalled: Promise<void> | undefined;
let storageHandlersInstalled: Promise<void> | undefined;
let frameResultsInstalled: Promise<void> | undefined;
let callFramesInstalled: Promise<void> | undefined;
let warmAddressesInstalled: Promise<void> | undefined;

/**
 * A module of `@ethereumjs/evm` by its path in the package (its internals are not exported): the
 * instance the EVM itself loaded, as the URL is the same.
 */
async function evmModule<T>(path: string): Promise<T> {
  const url = new URL(path, import.meta.resolve('@ethereumjs/evm'));
  return (await import(url.href)) as T;
}

/** Every tuning of the interpreter this node runs with; once per thread, before the first EVM runs. */
export async function tuneInterpreter(): Promise<void> {
  await Promise.all([cacheJumpAnalysis(), runSynchronousOpcodesInline(), convertWordsDirectly(), convertStorageWordsDirectly(), mergeFrameStateWithAssign(), openCallFramesWithAssign(), warmAddressesWithoutSets()]);
}

/**
 * The interpreter analyses a contract's jump destinations and push values on every call that jumps:
 * for a 3 kB ERC-20 a 3 kB array, a 3 kB pointer array and a bigint per PUSH, each call, then garbage.
 * The analysis depends only on the code and on the opcode table of the fork, so it is kept per code
 * buffer (state managers hand out the same buffer for the same code while it is cached) and opcode
 * table, in weak maps: nothing is held once the code or the table is gone. Nothing mutates the
 * result (the interpreter only reads `validJumps`, `cachedPushes` and the opcode entries).
 */
export function cacheJumpAnalysis(): Promise<void> {
  jumpAnalysisCached ??= (async () => {
    const { Interpreter } = await evmModule<{ Interpreter?: { prototype: InterpreterPrototype } }>('./interpreter.js');
    const prototype = Interpreter?.prototype;
    const analyse = prototype?._getValidJumpDestinations;
    if (prototype === undefined || typeof analyse !== 'function') throw new Error('@ethereumjs/evm: Interpreter._getValidJumpDestinations not found');
    const byCode = new WeakMap<Uint8Array, WeakMap<object, JumpAnalysis>>();
    prototype._getValidJumpDestinations = function (code) {
      const opcodes = this._evm._opcodeMap;
      let byTable = byCode.get(code);
      if (byTable === undefined) {
        byTable = new WeakMap();
        byCode.set(code, byTable);
      }
      let analysis = byTable.get(opcodes);
      if (analysis === undefined) {
        analysis = analyse.call(this, code);
        byTable.set(opcodes, analysis);
      }
      return analysis;
    };
  })();
  return jumpAnalysisCached;
}

/**
 * `Common.isActivatedEIP` scans an array of every EIP of the fork (about 80), and the interpreter asks
 * it several times per opcode. This answers from a set rebuilt whenever Common rebuilds the array (on
 * a hardfork or EIP change). `gteHardfork` is remembered too (fastHardforkComparison).
 */
export function fastEipLookup(common: Common): void {
  const internals = common as unknown as { _activatedEIPsCache?: number[]; _buildActivatedEIPsCache?: () => void };
  const rebuild = internals._buildActivatedEIPsCache;
  if (!Array.isArray(internals._activatedEIPsCache) || typeof rebuild !== 'function') {
    throw new Error('@ethereumjs/common: the activated-EIP cache is not where it was');
  }
  let active = new Set(internals._activatedEIPsCache);
  internals._buildActivatedEIPsCache = () => {
    rebuild.call(common);
    active = new Set(internals._activatedEIPsCache);
  };
  common.isActivatedEIP = (eip: number) => active.has(eip);
  fastHardforkComparison(common);
}

/**
 * `Common.gteHardfork` walks the chain's list of hardforks comparing names, and the interpreter and
 * the transaction loop ask it for every SSTORE, CALL and transaction. Its answer depends only on the
 * hardfork set and the list, which a Common keeps once made: this remembers it per hardfork asked
 * about, and starts over whenever the hardfork set changes.
 */
function fastHardforkComparison(common: Common): void {
  const compare = (Object.getPrototypeOf(common) as Common).gteHardfork;
  if (typeof compare !== 'function' || typeof (common as unknown as { _hardfork?: unknown })._hardfork !== 'string') {
    throw new Error('@ethereumjs/common: gteHardfork or the hardfork is not where it was');
  }
  // Per instance: a copy of this Common (copies take its own properties, this method too) keeps its own.
  const remembered = new WeakMap<Common, { hardfork: string; answers: Map<string, boolean> }>();
  common.gteHardfork = function (this: Common, hardfork: string): boolean {
    const current = (this as unknown as { _hardfork: string })._hardfork;
    let memo = remembered.get(this);
    if (memo === undefined || memo.hardfork !== current) {
      memo = { hardfork: current, answers: new Map() };
      remembered.set(this, memo);
    }
    let answer = memo.answers.get(hardfork);
    if (answer === undefined) {
      answer = compare.call(this, hardfork);
      memo.answers.set(hardfork, answer);
    }
    return answer;
  };
}

interface OpcodeEntry {
  opcodeInfo: { code: number; feeBigInt: bigint; dynamicGas: boolean; isAsync: boolean; isInvalid: boolean };
  opHandler: (runState: RunState, common: Common) => unknown;
  gasHandler?: (runState: RunState, gas: bigint, common: Common) => bigint | Promise<bigint>;
}
interface RunState {
  programCounter: number;
  opCode: number;
  code: Uint8Array;
  validJumps: Uint8Array;
  cachedPushes: Record<number, bigint>;
  shouldDoJumpAnalysis: boolean;
  gasLeft: bigint;
  eip8037BurnLeftoverAfterCreateHaltOntoAlive?: boolean;
  env: { accessWitness?: { commit(): void; revert(): void } };
}
interface RunResult {
  runState: RunState;
  exceptionError: unknown;
}

/** What of an EVM tells whether something watches it run. */
interface WatchableEvm {
  DEBUG: boolean;
  events: { listenerCount(event: string): number };
  _optsCached: { profiler?: { enabled?: boolean } };
}

/**
 * Whether DEBUG logging, the library's profiler or a tracer's step listener watch `evm`: then the tuned
 * loop, frame opening and message call step aside for the library's own code, which is what feeds them.
 */
function watched(evm: WatchableEvm): boolean {
  return evm.DEBUG || evm._optsCached.profiler?.enabled === true || evm.events.listenerCount('step') > 0;
}

interface SteppingInterpreter {
  _runState: RunState;
  _evm: WatchableEvm & { _opcodeMap: OpcodeEntry[] };
  common: Common;
  run(code: Uint8Array, opts?: { pc?: number }): Promise<RunResult>;
  runStep(opcode?: OpcodeEntry): Promise<void>;
  useGas(amount: bigint, context?: unknown): void;
  _getValidJumpDestinations(code: Uint8Array): JumpAnalysis;
}

/**
 * The interpreter's loop awaits an async `runStep` for every opcode, so each ADD or PUSH costs two
 * promises and a trip through the microtask queue: for an ERC-20 transfer (~300 opcodes, a dozen of
 * which read state) most of the interpreter's garbage and a good part of its time. Here an opcode
 * whose gas and effect are synchronous runs inline, doing exactly what `runStep` does; the rest (state
 * reads, calls) still go through `runStep`. Whenever the library's loop would do more than that — step
 * events for a tracer, DEBUG logging, its profiler, EOF code, Verkle/binary-tree witnesses — the
 * library's own `run` runs.
 */
function runSynchronousOpcodesInline(): Promise<void> {
  inlineStepsInstalled ??= (async () => {
    const [{ Interpreter }, { consumeEip7928PostTargetCallOog }] = await Promise.all([
      evmModule<{ Interpreter?: { prototype: SteppingInterpreter } }>('./interpreter.js'),
      evmModule<{ consumeEip7928PostTargetCallOog?: (runState: RunState) => void }>('./opcodes/EIP7928.js'),
    ]);
    const prototype = Interpreter?.prototype;
    const libraryRun = prototype?.run;
    if (prototype === undefined || typeof libraryRun !== 'function' || typeof prototype.runStep !== 'function' || typeof consumeEip7928PostTargetCallOog !== 'function') {
      throw new Error('@ethereumjs/evm: Interpreter.run/runStep or consumeEip7928PostTargetCallOog not found');
    }

    /** One opcode as `runStep` runs it; a promise only when its gas or its effect is asynchronous. */
    const step = (interpreter: SteppingInterpreter, runState: RunState, cached: OpcodeEntry | undefined): Promise<void> | undefined => {
      const entry = cached ?? interpreter._evm._opcodeMap[runState.opCode]!;
      const info = entry.opcodeInfo;
      if (info.isAsync) return interpreter.runStep(cached);
      let gas = info.feeBigInt;
      if (info.dynamicGas) {
        const dynamic = entry.gasHandler!(runState, gas, interpreter.common);
        if (typeof dynamic !== 'bigint') return finishStep(interpreter, runState, entry, dynamic);
        gas = dynamic;
      }
      chargeAndExecute(interpreter, runState, entry, gas);
      return undefined;
    };
    const finishStep = async (interpreter: SteppingInterpreter, runState: RunState, entry: OpcodeEntry, gas: Promise<bigint>): Promise<void> => {
      chargeAndExecute(interpreter, runState, entry, await gas);
    };
    const chargeAndExecute = (interpreter: SteppingInterpreter, runState: RunState, entry: OpcodeEntry, gas: bigint): void => {
      if (entry.opcodeInfo.isInvalid) throw new EVMError(EVMError.errorMessages.INVALID_OPCODE);
      interpreter.useGas(gas, entry.opcodeInfo);
      runState.programCounter++;
      consumeEip7928PostTargetCallOog(runState);
      entry.opHandler(runState, interpreter.common);
      runState.env.accessWitness?.commit();
    };

    prototype.run = async function (this: SteppingInterpreter, code: Uint8Array, opts: { pc?: number } = {}): Promise<RunResult> {
      const common = this.common;
      const evm = this._evm;
      if (
        (code[0] === 0xef && common.isActivatedEIP(3540)) ||
        common.isActivatedEIP(6800) ||
        common.isActivatedEIP(7864) ||
        watched(evm)
      ) {
        return libraryRun.call(this, code, opts);
      }
      const runState = this._runState;
      runState.code = code;
      runState.programCounter = opts.pc ?? runState.programCounter;
      const pc = runState.programCounter;
      if (pc !== 0 && (pc < 0 || pc >= code.length)) throw new Error('Internal error: program counter not in range');
      let err: unknown;
      let cachedOpcodes: OpcodeEntry[] | undefined;
      while (runState.programCounter < runState.code.length) {
        const programCounter = runState.programCounter;
        let opCode: number;
        let cached: OpcodeEntry | undefined;
        if (cachedOpcodes === undefined) {
          opCode = runState.code[programCounter]!;
          // As the library: jump analysis only once the code is seen to jump.
          if (opCode === 0x56 || opCode === 0x57 || opCode === 0x5e) {
            const { jumps, pushes, opcodesCached } = this._getValidJumpDestinations(runState.code);
            runState.validJumps = jumps;
            runState.cachedPushes = pushes;
            runState.shouldDoJumpAnalysis = false;
            cachedOpcodes = opcodesCached as OpcodeEntry[];
          }
        } else {
          cached = cachedOpcodes[programCounter]!;
          opCode = cached.opcodeInfo.code;
        }
        runState.opCode = opCode;
        try {
          const pending = step(this, runState, cached);
          if (pending !== undefined) await pending;
        } catch (e) {
          runState.env.accessWitness?.revert();
          // Only the EVM's own errors end the frame; anything else is a bug and propagates.
          if (!(e instanceof Object && 'errorType' in e && e.errorType === 'EVMError')) throw e;
          if ((e as EVMError).error !== EVMError.errorMessages.STOP) err = e;
          break;
        }
      }
      if (err === undefined && runState.eip8037BurnLeftoverAfterCreateHaltOntoAlive === true && runState.gasLeft > 0n) {
        runState.gasLeft = 0n;
        err = new EVMError(EVMError.errorMessages.OUT_OF_GAS);
      }
      return { runState, exceptionError: err };
    };
  })();
  return inlineStepsInstalled;
}

/** Stack values below this convert through a Number. */
const TWO_POW53 = 1n << 53n;
const TWO_POW256 = 1n << 256n;

/**
 * A stack value (0 ≤ value < 2²⁵⁶) as 32 big-endian bytes. The library's
 * `setLengthLeft(bigIntToBytes(value), 32)` goes through a hex string checked by a regular expression,
 * then pads by spreading both arrays into a new one: for every MSTORE, storage key and value and log
 * topic (40–50 a token transfer). Written here byte by byte: most values (memory offsets, lengths,
 * small slots) fit a Number; the others go 32 bits at a time. A DataView over the array would be simpler but
 * costs ~0.8 µs each time: asking a 32-byte array for its `buffer` makes V8 move it off its heap.
 */
export function word32(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  if (value === 0n) return out;
  if (value > 0n && value < TWO_POW53) {
    for (let n = Number(value), i = 31; n > 0; i--) {
      out[i] = n % 256;
      n = Math.floor(n / 256);
    }
    return out;
  }
  // Out of range: the library's conversion, and its error.
  if (value < 0n || value >= TWO_POW256) return setLengthLeft(bigIntToBytes(value), 32);
  for (let rest = value, i = 31; rest > 0n; i -= 4) {
    const limb = Number(BigInt.asUintN(32, rest));
    out[i] = limb & 0xff;
    out[i - 1] = (limb >>> 8) & 0xff;
    out[i - 2] = (limb >>> 16) & 0xff;
    out[i - 3] = limb >>> 24;
    rest >>= 32n;
  }
  return out;
}

interface WordRunState {
  opCode: number;
  stack: { pop(): bigint; popN(count: number): bigint[]; push(value: bigint): void };
  memory: { write(offset: number, size: number, value: Uint8Array): void; read(offset: number, size: number): Uint8Array };
  interpreter: { storageLoad(key: Uint8Array): Promise<Uint8Array>; log(data: Uint8Array, topicCount: number, topics: Uint8Array[]): void };
}

/**
 * MSTORE, SLOAD and LOG0–LOG4 as the library defines them (opcodes/functions.js), with the 32-byte
 * words made by `word32` and the popped values read by index rather than by destructuring (an
 * iterator per opcode). The handler table is the library's module-level map, which every EVM copies
 * when it is created or changes hardfork: this must run before the first EVM is made.
 */
function convertWordsDirectly(): Promise<void> {
  wordHandlersInstalled ??= (async () => {
    const { handlers } = await evmModule<{ handlers?: Map<number, (runState: WordRunState, common: Common) => unknown> }>('./opcodes/functions.js');
    const expected = [0x52, 0x54, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4];
    if (!(handlers instanceof Map) || expected.some((opcode) => typeof handlers.get(opcode) !== 'function')) {
      throw new Error('@ethereumjs/evm: the opcode handler map is not where it was');
    }
    handlers.set(0x52, function mstore(runState) {
      const popped = runState.stack.popN(2);
      runState.memory.write(Number(popped[0]), 32, word32(popped[1]!));
    });
    handlers.set(0x54, async function sload(runState) {
      const key = runState.stack.pop();
      const value = await runState.interpreter.storageLoad(word32(key));
      runState.stack.push(value.length > 0 ? bytesToBigInt(value) : 0n);
    });
    const log = function log(runState: WordRunState): void {
      const popped = runState.stack.popN(2);
      const memOffset = popped[0]!;
      const memLength = popped[1]!;
      const topicsCount = runState.opCode - 0xa0;
      const topics = runState.stack.popN(topicsCount);
      const topicsBuf = new Array<Uint8Array>(topicsCount);
      for (let i = 0; i < topicsCount; i++) topicsBuf[i] = word32(topics[i]!);
      const data = memLength !== 0n ? runState.memory.read(Number(memOffset), Number(memLength)) : new Uint8Array(0);
      runState.interpreter.log(data, topicsCount, topicsBuf);
    };
    for (let opcode = 0xa0; opcode <= 0xa4; opcode++) handlers.set(opcode, log);
  })();
  return wordHandlersInstalled;
}

/** A 32-byte storage value as the library's `setLengthLeftStorage` makes it: empty when zero, else left-padded to 32 bytes. */
function storageWord(value: Uint8Array, libraryStorageWord: (value: Uint8Array) => Uint8Array): Uint8Array {
  let first = 0;
  while (first < value.length && value[first] === 0) first++;
  if (first === value.length) return new Uint8Array(0);
  if (value.length === 32) return value;
  // Longer than a word: the library's conversion, and its error.
  if (value.length > 32) return libraryStorageWord(value);
  const out = new Uint8Array(32);
  out.set(value, 32 - value.length);
  return out;
}

/** A nonzero stack value in its shortest big-endian bytes, as `bigIntToBytes` gives it. */
function shortestBytes(value: bigint): Uint8Array {
  const word = word32(value);
  let first = 0;
  while (first < 31 && word[first] === 0) first++;
  return word.slice(first);
}

interface StorageRunState {
  stack: { peek(count?: number): bigint[]; popN(count: number): bigint[] };
  interpreter: {
    isStatic(): boolean;
    storageLoad(key: Uint8Array, original?: boolean, trackBal?: boolean): Promise<Uint8Array>;
    storageStore(key: Uint8Array, value: Uint8Array): Promise<void>;
  };
}
type StorageGasHandler = (runState: StorageRunState, gas: bigint, common: Common) => Promise<bigint>;
type StorageOpHandler = (runState: StorageRunState, common: Common) => Promise<void>;
type SstoreGasRule = (runState: StorageRunState, current: Uint8Array, original: Uint8Array, value: Uint8Array, ...rest: unknown[]) => bigint;

/** The library's SLOAD and SSTORE handlers that `convertStorageWordsDirectly` replaced: tests run both. */
export const libraryStorageHandlers: { sloadGas?: StorageGasHandler; sstoreGas?: StorageGasHandler; sstore?: StorageOpHandler } = {};

/**
 * SLOAD's and SSTORE's gas and SSTORE's effect (opcodes/gas.js and functions.js) turn the stack's key
 * and value into bytes with `setLengthLeft(bigIntToBytes(x), 32)`: a hex string, a regular
 * expression and a pad by spreading two arrays, ~1.5 µs each against ~0.35 µs for `word32`; a token
 * transfer makes about twelve. These are the library's handlers with the words made by `word32`, for
 * the forks up to Osaka. Where a later EIP changes them (Verkle or binary-tree witnesses 6800/7864,
 * block-level access lists 7928, state gas 8037/8038), the library's own handler runs.
 */
function convertStorageWordsDirectly(): Promise<void> {
  storageHandlersInstalled ??= (async () => {
    const [{ handlers }, { dynamicGasHandlers }, eip2929, eip2200, eip1283, util] = await Promise.all([
      evmModule<{ handlers?: Map<number, StorageOpHandler> }>('./opcodes/functions.js'),
      evmModule<{ dynamicGasHandlers?: Map<number, StorageGasHandler> }>('./opcodes/gas.js'),
      evmModule<{ accessStorageEIP2929?: (runState: StorageRunState, key: Uint8Array, isSstore: boolean, common: Common, charge: boolean) => bigint }>('./opcodes/EIP2929.js'),
      evmModule<{ updateSstoreGasEIP2200?: SstoreGasRule }>('./opcodes/EIP2200.js'),
      evmModule<{ updateSstoreGasEIP1283?: SstoreGasRule }>('./opcodes/EIP1283.js'),
      evmModule<{ updateSstoreGas?: (runState: StorageRunState, current: Uint8Array, value: Uint8Array, common: Common) => bigint; setLengthLeftStorage?: (value: Uint8Array) => Uint8Array; trap?: (message: string) => never }>('./opcodes/util.js'),
    ]);
    const sloadGas = dynamicGasHandlers?.get(0x54);
    const sstoreGas = dynamicGasHandlers?.get(0x55);
    const sstore = handlers?.get(0x55);
    const { accessStorageEIP2929 } = eip2929;
    const { updateSstoreGasEIP2200 } = eip2200;
    const { updateSstoreGasEIP1283 } = eip1283;
    const { updateSstoreGas, setLengthLeftStorage, trap } = util;
    if (
      handlers === undefined ||
      dynamicGasHandlers === undefined ||
      typeof sloadGas !== 'function' ||
      typeof sstoreGas !== 'function' ||
      typeof sstore !== 'function' ||
      typeof accessStorageEIP2929 !== 'function' ||
      typeof updateSstoreGasEIP2200 !== 'function' ||
      typeof updateSstoreGasEIP1283 !== 'function' ||
      typeof updateSstoreGas !== 'function' ||
      typeof setLengthLeftStorage !== 'function' ||
      typeof trap !== 'function'
    ) {
      throw new Error('@ethereumjs/evm: the SLOAD/SSTORE handlers or their gas rules are not where they were');
    }
    Object.assign(libraryStorageHandlers, { sloadGas, sstoreGas, sstore });
    const witnessed = (common: Common) => common.isActivatedEIP(6800) || common.isActivatedEIP(7864);
    const sstoreChanged = (common: Common) => witnessed(common) || common.isActivatedEIP(7928) || common.isActivatedEIP(8037) || common.isActivatedEIP(8038);

    dynamicGasHandlers.set(0x54, async function sloadGasWithWords(runState, gas, common) {
      if (witnessed(common)) return sloadGas(runState, gas, common);
      if (common.isActivatedEIP(2929)) gas += accessStorageEIP2929(runState, word32(runState.stack.peek()[0]!), false, common, true);
      return gas;
    });
    dynamicGasHandlers.set(0x55, async function sstoreGasWithWords(runState, gas, common) {
      if (sstoreChanged(common)) return sstoreGas(runState, gas, common);
      if (runState.interpreter.isStatic()) trap(EVMError.errorMessages.STATIC_STATE_CHANGE);
      const peeked = runState.stack.peek(2);
      const key = word32(peeked[0]!);
      const val = peeked[1]!;
      const value = val === 0n ? new Uint8Array(0) : word32(val);
      const current = storageWord(await runState.interpreter.storageLoad(key, false, false), setLengthLeftStorage);
      const original = storageWord(await runState.interpreter.storageLoad(key, true, false), setLengthLeftStorage);
      if (common.hardfork() === Hardfork.Constantinople) gas += updateSstoreGasEIP1283(runState, current, original, value, common);
      else if (common.gteHardfork(Hardfork.Istanbul)) gas += updateSstoreGasEIP2200(runState, current, original, value, key, common);
      else gas += updateSstoreGas(runState, current, value, common);
      if (common.isActivatedEIP(2929)) gas += accessStorageEIP2929(runState, key, true, common, true);
      return gas;
    });
    handlers.set(0x55, async function sstoreWithWords(runState, common) {
      if (common.isActivatedEIP(8037)) return sstore(runState, common);
      const popped = runState.stack.popN(2);
      const val = popped[1]!;
      await runState.interpreter.storageStore(word32(popped[0]!), val === 0n ? new Uint8Array(0) : shortestBytes(val));
    });
  })();
  return storageHandlersInstalled;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- a copy of the library's untyped internals */
type FrameMessage = any;

/**
 * `EVM.runInterpreter` (one per call frame: every transaction to a contract has at least one) ends by
 * merging the frame's run state, result and environment with `{ ...a, ...b, ...c }`: V8 makes a
 * literal with more than one spread of objects this size property by property on a slow path, about
 * 40 µs on this machine, more than the rest of an ERC-20 transfer's frame. This is the library's
 * method (evm.js, 10.1) with that merge done by `Object.assign`, which copies the same own properties
 * in the same order onto a plain object, its result made by `withFields` (the literal `{ ...result,
 * runState, ... }` takes the same slow path, ~9 µs per eth_call), and its interpreter opened with
 * memory from a shared buffer (`interpreterWithSlabMemory`).
 */
function mergeFrameStateWithAssign(): Promise<void> {
  frameResultsInstalled ??= (async () => {
    const [{ EVM: EvmClass, defaultBlock }, { Interpreter }, { Memory }, { Stack }] = await Promise.all([
      evmModule<{ EVM?: { prototype: { runInterpreter?: unknown } }; defaultBlock?: () => unknown }>('./evm.js'),
      evmModule<{ Interpreter?: new (...args: any[]) => any }>('./interpreter.js'),
      evmModule<{ Memory?: new () => { _store: Uint8Array } }>('./memory.js'),
      evmModule<{ Stack?: new () => unknown }>('./stack.js'),
    ]);
    const prototype = EvmClass?.prototype;
    if (prototype === undefined || typeof prototype.runInterpreter !== 'function' || typeof defaultBlock !== 'function' || Interpreter === undefined) {
      throw new Error('@ethereumjs/evm: EVM.runInterpreter, defaultBlock or Interpreter not found');
    }
    if (Memory === undefined || Stack === undefined || !(new Memory()._store instanceof Uint8Array)) throw new Error('@ethereumjs/evm: Memory or Stack not found');
    const openInterpreter = interpreterWithSlabMemory(Interpreter, Memory, Stack);
    prototype.runInterpreter = async function (this: any, message: FrameMessage, opts: any = {}) {
      let contract = await this.stateManager.getAccount(message.to ?? createZeroAddress());
      if (!contract) contract = new Account();
      const env = {
        address: message.to ?? createZeroAddress(),
        caller: message.caller ?? createZeroAddress(),
        callData: message.data ?? Uint8Array.from([0]),
        callValue: message.value ?? 0n,
        code: message.code,
        isStatic: message.isStatic ?? false,
        isCreate: message.isCreate ?? false,
        depth: message.depth ?? 0,
        gasPrice: this._tx.gasPrice,
        origin: this._tx.origin ?? message.caller ?? createZeroAddress(),
        block: this._block ?? defaultBlock(),
        contract,
        codeAddress: message.codeAddress,
        gasRefund: message.gasRefund,
        chargeCodeAccesses: message.chargeCodeAccesses,
        blobVersionedHashes: message.blobVersionedHashes ?? [],
        accessWitness: message.accessWitness,
        createdAddresses: message.createdAddresses,
        initialLogs: opts.initialLogs,
      };
      const interpreter = openInterpreter(this, env, message.gasLimit);
      if (message.selfdestruct) interpreter._result.selfdestruct = message.selfdestruct;
      if (message.createdAddresses) interpreter._result.createdAddresses = message.createdAddresses;
      const interpreterRes = await interpreter.run(message.code, opts);
      let result = interpreter._result;
      let gasUsed = message.gasLimit - interpreterRes.runState.gasLeft;
      if (interpreterRes.exceptionError) {
        const error = interpreterRes.exceptionError.error;
        if (error !== EVMError.errorMessages.REVERT && error !== EVMError.errorMessages.INVALID_EOF_FORMAT) gasUsed = message.gasLimit;
        // Clear the result on error
        result = withFields(result, { logs: [], selfdestruct: new Map(), createdAddresses: new Set() });
      }
      message.accessWitness?.commit();
      // The library's `{ ...result, runState: ..., ... }`: withFields builds the same object off V8's slow path.
      return withFields(result, {
        runState: Object.assign({}, interpreterRes.runState, result, interpreter._env),
        exceptionError: interpreterRes.exceptionError,
        gas: interpreterRes.runState?.gasLeft,
        executionGasUsed: gasUsed,
        gasRefund: interpreterRes.runState.gasRefund,
        stateGasSpilled: interpreterRes.runState.stateGasSpilled,
        returnValue: result.returnValue ?? new Uint8Array(0),
      });
    };
  })();
  return frameResultsInstalled;
}

/** Bytes of EVM memory a frame starts with: an ERC-20 call's frames use a few hundred. */
const FRAME_MEMORY_BYTES = 1024;
/** Frames' first memory cut from one buffer: 64 kB stays under glibc's 128 kB mmap threshold. */
const FRAMES_PER_SLAB = 64;

/**
 * `new Interpreter(...)` as the library's constructor (interpreter.js, 10.1) makes it, field for field,
 * but with the frame's memory cut from a shared buffer. The library gives every frame a fresh 8 kB
 * `Uint8Array`: an allocation outside V8's heap, counted as external memory, and once the external
 * memory allocated since the last full collection passes V8's limit (64 MB, reached every few blocks
 * of thousands of transfers), every such allocation does a step of incremental marking before it
 * returns. Profiled, `new Memory()` took 30 µs per frame on the chain thread (build and import of
 * 2,000-transfer blocks, bench/block-building.ts) and 7 µs per eth_call on a reader. Here a frame's
 * memory starts as a 1 kB view into a 64 kB buffer shared by 64 frames, zeroed as the library's and
 * never handed to another frame; memory growing past it is extended by the library's own `Memory.extend`
 * into an array of its own, as before. A view another frame still holds (call data passed down)
 * keeps the buffer alive, as it kept the frame's own array alive.
 *
 * Step listeners (tracers), DEBUG and the profiler get the library's constructor, as they get its loop.
 */
function interpreterWithSlabMemory(
  Interpreter: new (...args: any[]) => any,
  Memory: new () => { _store: Uint8Array },
  Stack: new () => unknown,
): (evm: any, env: any, gasLeft: bigint) => any {
  let slab = new ArrayBuffer(0);
  let nextInSlab = FRAMES_PER_SLAB;
  const frameMemory = () => {
    if (nextInSlab === FRAMES_PER_SLAB) {
      slab = new ArrayBuffer(FRAMES_PER_SLAB * FRAME_MEMORY_BYTES);
      nextInSlab = 0;
    }
    const memory = Object.create(Memory.prototype) as { _store: Uint8Array };
    memory._store = new Uint8Array(slab, FRAME_MEMORY_BYTES * nextInSlab++, FRAME_MEMORY_BYTES);
    return memory;
  };
  return (evm, env, gasLeft) => {
    const common = evm.common;
    if (watched(evm) || (common.consensusType() === 'poa' && evm._optsCached.cliqueSigner === undefined)) {
      return new Interpreter(evm, evm.stateManager, evm.blockchain, env, gasLeft, evm.journal, evm.performanceLogger, evm._optsCached.profiler);
    }
    const interpreter = Object.create(Interpreter.prototype);
    interpreter.opDebuggers = {};
    interpreter._evm = evm;
    interpreter._stateManager = evm.stateManager;
    interpreter.common = common;
    interpreter._runState = {
      programCounter: 0,
      opCode: 0xfe,
      memory: frameMemory(),
      memoryWordCount: 0n,
      highestMemCost: 0n,
      stack: new Stack(),
      code: new Uint8Array(0),
      validJumps: Uint8Array.from([]),
      cachedPushes: {},
      stateManager: evm.stateManager,
      blockchain: evm.blockchain,
      env,
      shouldDoJumpAnalysis: true,
      interpreter,
      gasRefund: env.gasRefund,
      gasLeft,
      stateGasSpilled: 0n,
      returnBytes: new Uint8Array(0),
    };
    interpreter.journal = evm.journal;
    interpreter._env = env;
    interpreter._result = { logs: env.initialLogs ? [...env.initialLogs] : [], returnValue: undefined, selfdestruct: new Map() };
    interpreter.profilerOpts = evm._optsCached.profiler;
    interpreter.performanceLogger = evm.performanceLogger;
    return interpreter;
  };
}

/** EIPs whose work in `EVM._executeCall` the short path below does not do (Amsterdam's, binary trees, Verkle). */
const EXECUTE_CALL_LIBRARY_EIPS = [2780, 6800, 7708, 7864, 7928];

/**
 * `EVM._executeCall` (every message call: each transaction to a contract, each eth_call, each CALL
 * opcode) hands the frame to the interpreter as `{ ...{ codeAddress }, ...message, gasLimit }`: the
 * second spread of an object literal copies the message's 16 properties on V8's slow path, 26–32 µs on
 * this machine (`Object.assign` makes the same object in under 1 µs) — 10 % of a state reader's time
 * under eth_call. This is the library's method (evm.js, 10.1) for what this node runs: value
 * transfer, code loading, a precompile or the interpreter, the result. With any EIP of
 * `EXECUTE_CALL_LIBRARY_EIPS` active, DEBUG logging, the profiler or a tracer's step listener, the
 * library's own method runs.
 */
function openCallFramesWithAssign(): Promise<void> {
  callFramesInstalled ??= (async () => {
    const { EVM: EvmClass } = await evmModule<{ EVM?: { prototype: { _executeCall?: unknown } } }>('./evm.js');
    const prototype = EvmClass?.prototype;
    const libraryExecuteCall = prototype?._executeCall as ((this: any, message: FrameMessage) => Promise<any>) | undefined;
    if (prototype === undefined || typeof libraryExecuteCall !== 'function') throw new Error('@ethereumjs/evm: EVM._executeCall not found');
    for (const method of ['_reduceSenderBalance', '_addToBalance', '_loadCode', 'runPrecompile', 'runInterpreter', 'postMessageCleanup']) {
      if (typeof (prototype as Record<string, unknown>)[method] !== 'function') throw new Error(`@ethereumjs/evm: EVM.${method} not found`);
    }
    prototype._executeCall = async function (this: any, message: FrameMessage) {
      const common = this.common;
      if (watched(this) || EXECUTE_CALL_LIBRARY_EIPS.some((eip) => common.isActivatedEIP(eip))) {
        return libraryExecuteCall.call(this, message);
      }
      const gasLimit = message.gasLimit;
      const account = (await this.stateManager.getAccount(message.caller)) ?? new Account();
      let errorMessage: unknown;
      if (!message.delegatecall) {
        try {
          await this._reduceSenderBalance(account, message);
        } catch (e) {
          errorMessage = e;
        }
      }
      const toAccount = (await this.stateManager.getAccount(message.to)) ?? new Account();
      if (!message.delegatecall) {
        try {
          await this._addToBalance(toAccount, message);
        } catch (e) {
          errorMessage = e;
        }
      }
      await this._loadCode(message);
      if (!message.code || (typeof message.code !== 'function' && message.code.length === 0) || errorMessage !== undefined) {
        return {
          execResult: { gasRefund: message.gasRefund, executionGasUsed: 0n, exceptionError: errorMessage, returnValue: new Uint8Array(0), logs: undefined },
        };
      }
      let result;
      if (message.isCompiled) {
        result = await this.runPrecompile(message.code, message.data, gasLimit);
        result.gasRefund = message.gasRefund;
      } else {
        result = await this.runInterpreter(Object.assign({ codeAddress: message.codeAddress }, message, { gasLimit }), { initialLogs: undefined });
      }
      if (message.depth === 0) this.postMessageCleanup();
      return { execResult: result };
    };
  })();
  return callFramesInstalled;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

interface WarmJournal {
  alwaysWarmJournal: Map<string, Set<string>>;
  accessList?: Map<string, Set<string>>;
  addAlwaysWarmAddress(addressStr: string, addToAccessList?: boolean): void;
}
interface JournalPrototype {
  addAlwaysWarmAddress(this: WarmJournal, addressStr: string, addToAccessList?: boolean): void;
  addAlwaysWarmSlot(this: WarmJournal, addressStr: string, slotStr: string, addToAccessList?: boolean): void;
}

/**
 * Every transaction from Berlin on marks the precompiles, its sender, its recipient and the coinbase
 * warm (`runTx`, EIP-2929): about 20 calls of `Journal.addAlwaysWarmAddress`, each testing its
 * argument against a regular expression (`stripHexPrefix`) and giving the address a new, almost
 * always empty, set of warm slots. Here the expression is tested only on strings that start with
 * `0x` (the same result: no other string matches it), and the addresses share one empty set until a
 * slot of theirs is made warm (`addAlwaysWarmSlot`, the only writer of those sets, gives the address
 * its own set first). Readers only ask the sets whether they hold a slot. The access list that
 * `eth_createAccessList` collects keeps a set of its own per address, as before.
 */
function warmAddressesWithoutSets(): Promise<void> {
  warmAddressesInstalled ??= (async () => {
    const { Journal } = await evmModule<{ Journal?: { prototype: JournalPrototype } }>('./journal.js');
    const prototype = Journal?.prototype;
    if (prototype === undefined || typeof prototype.addAlwaysWarmAddress !== 'function' || typeof prototype.addAlwaysWarmSlot !== 'function') {
      throw new Error('@ethereumjs/evm: Journal.addAlwaysWarmAddress not found');
    }
    const { addAlwaysWarmAddress: libraryAddAddress, addAlwaysWarmSlot: libraryAddSlot } = prototype;
    const NO_WARM_SLOTS: ReadonlySet<string> = new Set();
    // The library's `stripHexPrefix`, its expression asked only of strings that start with 0x.
    const stripped = (hex: string): string => (hex.charCodeAt(0) === 48 && hex.charCodeAt(1) === 120 && isHexString(hex) ? hex.slice(2) : hex);
    prototype.addAlwaysWarmAddress = function (addressStr, addToAccessList = false) {
      // The library's error for anything but a string.
      if (typeof addressStr !== 'string') return libraryAddAddress.call(this, addressStr, addToAccessList);
      const address = stripped(addressStr);
      if (!this.alwaysWarmJournal.has(address)) this.alwaysWarmJournal.set(address, NO_WARM_SLOTS as Set<string>);
      if (addToAccessList && this.accessList !== undefined && !this.accessList.has(address)) this.accessList.set(address, new Set());
    };
    prototype.addAlwaysWarmSlot = function (addressStr, slotStr, addToAccessList = false) {
      if (typeof addressStr !== 'string' || typeof slotStr !== 'string') return libraryAddSlot.call(this, addressStr, slotStr, addToAccessList);
      const address = stripped(addressStr);
      this.addAlwaysWarmAddress(address, addToAccessList);
      let slots = this.alwaysWarmJournal.get(address)!;
      if (slots === NO_WARM_SLOTS) {
        slots = new Set();
        this.alwaysWarmJournal.set(address, slots);
      }
      const slot = stripped(slotStr);
      slots.add(slot);
      if (addToAccessList && this.accessList !== undefined) this.accessList.get(address)!.add(slot);
    };
  })();
  return warmAddressesInstalled;
}
