/**
 * The interpreter tuning (src/shared/execution/evm-tuning.ts) changes how fast the EVM runs, never
 * what it computes: each program here runs on identical fresh states once through the tuned loop
 * and once through the library's own loop (a `step` listener, as a tracer attaches, selects it), and
 * both must end alike — gas, output, error, logs and storage.
 */
import test from 'ava';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createEVM, type EVM } from '@ethereumjs/evm';
import { Account, Address, bigIntToBytes, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { keccak256 } from 'ethers';
import { fastEipLookup, libraryStorageHandlers, tuneInterpreter, word32 } from '../../src/shared/execution/evm-tuning.js';

const LOOPER = new Address(hexToBytes('0x00000000000000000000000000000000000000c1'));
const CALLER = new Address(hexToBytes('0x00000000000000000000000000000000000000c2'));
const SENDER = new Address(hexToBytes('0x00000000000000000000000000000000000000ee'));

/**
 * for i in 0..9: mem[0] = i; sstore(i, keccak(mem[0..32])); then mem[32] = sload(5); LOG2(mem[0..64],
 * 0xbb, 0xaa); return mem[0..64]. Jumps, memory, hashing, state reads and writes, a log.
 */
const LOOPER_CODE = '0x60005b806000526020600020815560010180600a1160025760055460205260aa60bb60406000a260406000f3';
/** CALLs the looper (an asynchronous opcode in the middle of synchronous ones) and returns its output. */
const CALLER_CODE = `0x604060006000600060007300000000000000000000000000000000000000c15af15060406000f3`;

const PROGRAMS: Record<string, { code: string; gasLimit?: bigint }> = {
  'loop with storage, hashing and a log': { code: LOOPER_CODE },
  'a call into another contract': { code: CALLER_CODE },
  'revert with data': { code: '0x602a60005260206000fd' },
  'invalid opcode': { code: '0x6001fe' },
  'stack underflow': { code: '0x01' },
  'out of gas in an endless loop': { code: '0x5b600056', gasLimit: 10_000n },
  'jump to a non-destination': { code: '0x6003560000' },
  'memory expansion far out': { code: '0x602a6210000052600160005260206000f3' },
  'out of gas in a storage write': { code: LOOPER_CODE, gasLimit: 30_000n },
};

async function freshEvm(code: string): Promise<EVM> {
  const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork: Hardfork.Prague }) });
  await evm.stateManager.putAccount(SENDER, new Account(0n, 10n ** 18n));
  for (const [address, bytes] of [
    [LOOPER, LOOPER_CODE],
    [CALLER, CALLER_CODE],
  ] as const) {
    await evm.stateManager.putAccount(address, new Account());
    await evm.stateManager.putCode(address, hexToBytes(bytes));
  }
  const target = new Address(hexToBytes('0x00000000000000000000000000000000000000d1'));
  await evm.stateManager.putAccount(target, new Account());
  await evm.stateManager.putCode(target, hexToBytes(code as `0x${string}`));
  return evm;
}

/** Calls of the library's per-opcode `runStep`, counted by a wrapper around it. */
let runStepCalls = 0;
/** Every interpreter `run` was called on since the last outcome, recorded by a wrapper around it. */
let interpreters: Array<{ _runState: { memory: { _store: Uint8Array } } & Record<string, unknown> } & Record<string, unknown>> = [];

async function outcome(code: string, gasLimit: bigint, traced: boolean) {
  const evm = await freshEvm(code);
  let steps = 0;
  if (traced) evm.events.on('step', () => void steps++);
  runStepCalls = 0;
  interpreters = [];
  const to = new Address(hexToBytes('0x00000000000000000000000000000000000000d1'));
  const { execResult } = await evm.runCall({ caller: SENDER, origin: SENDER, to, gasLimit });
  const storage: string[] = [];
  for (const address of [to, LOOPER]) {
    for (let i = 0; i < 10; i++) storage.push(bytesToHex(await evm.stateManager.getStorage(address, setLengthLeft(Uint8Array.of(i), 32))));
  }
  return {
    outcome: {
      gasUsed: execResult.executionGasUsed,
      gasRefund: execResult.gasRefund,
      returnValue: bytesToHex(execResult.returnValue),
      error: execResult.exceptionError?.error,
      logs: (execResult.logs ?? []).map(([address, topics, data]) => [bytesToHex(address), topics.map(bytesToHex), bytesToHex(data)]),
      storage,
    },
    steps,
    runStepCalls,
    interpreters,
  };
}

test.before(async () => {
  await tuneInterpreter();
  const url = new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm'));
  const { Interpreter } = (await import(url.href)) as {
    Interpreter: { prototype: { runStep: (...args: unknown[]) => Promise<void>; run: (...args: unknown[]) => Promise<unknown> } };
  };
  const runStep = Interpreter.prototype.runStep;
  Interpreter.prototype.runStep = function (...args: unknown[]) {
    runStepCalls++;
    return runStep.apply(this, args);
  };
  const run = Interpreter.prototype.run;
  Interpreter.prototype.run = function (this: (typeof interpreters)[number], ...args: unknown[]) {
    interpreters.push(this);
    return run.apply(this, args);
  };
});

for (const [name, { code, gasLimit = 1_000_000n }] of Object.entries(PROGRAMS)) {
  test.serial(`${name}: the tuned loop ends as the library's`, async (t) => {
    const tuned = await outcome(code, gasLimit, false);
    const library = await outcome(code, gasLimit, true);
    t.true(library.steps > 0, 'the traced run went through the library loop');
    t.deepEqual(tuned.outcome, library.outcome);
  });
}

test.serial('the tuned loop runs synchronous opcodes inline: only state reads and writes go through runStep', async (t) => {
  const tuned = await outcome(LOOPER_CODE, 1_000_000n, false);
  const library = await outcome(LOOPER_CODE, 1_000_000n, true);
  t.is(library.runStepCalls, library.steps);
  // 10 SSTOREs and one SLOAD.
  t.is(tuned.runStepCalls, 11);
});

test.serial('the programs do what they are meant to (the comparison compares something)', async (t) => {
  const loop = (await outcome(LOOPER_CODE, 1_000_000n, false)).outcome;
  t.is(loop.error, undefined);
  t.is(loop.logs.length, 1);
  t.true(loop.storage.slice(0, 10).every((value) => value !== '0x'));
  // Known values: slot i holds keccak(i as a word), the output is [9, keccak(5)], the log has topics 0xbb, 0xaa.
  const hashOf = (i: number) => keccak256(setLengthLeft(Uint8Array.of(i), 32));
  t.deepEqual(loop.storage.slice(0, 10), Array.from({ length: 10 }, (_, i) => hashOf(i)));
  t.is(loop.returnValue as string, bytesToHex(setLengthLeft(Uint8Array.of(9), 32)) + hashOf(5).slice(2));
  t.deepEqual(loop.logs[0]![1], [bytesToHex(setLengthLeft(Uint8Array.of(0xbb), 32)), bytesToHex(setLengthLeft(Uint8Array.of(0xaa), 32))]);
  t.is(loop.logs[0]![2], loop.returnValue);
  const call = (await outcome(CALLER_CODE, 1_000_000n, false)).outcome;
  t.is(call.returnValue, loop.returnValue);
  t.deepEqual(call.storage.slice(10), loop.storage.slice(0, 10));
  t.is((await outcome(PROGRAMS['revert with data']!.code, 100_000n, false)).outcome.error, 'revert');
  t.is((await outcome(PROGRAMS['out of gas in an endless loop']!.code, 10_000n, false)).outcome.error, 'out of gas');
  t.regex((await outcome(PROGRAMS['jump to a non-destination']!.code, 10_000n, false)).outcome.error ?? '', /^invalid JUMP/);
  t.is((await outcome(PROGRAMS['stack underflow']!.code, 10_000n, false)).outcome.error, 'stack underflow');
});

test.serial("frames open with memory cut from a shared buffer, on interpreters with the library constructor's fields", async (t) => {
  const tuned = await outcome(CALLER_CODE, 1_000_000n, false);
  const library = await outcome(CALLER_CODE, 1_000_000n, true);
  // The caller's frame and the looper's.
  t.is(tuned.interpreters.length, 2);
  t.is(library.interpreters.length, 2);
  const [first, second] = tuned.interpreters.map((interpreter) => interpreter._runState.memory._store);
  // Each frame's memory a 1 kB view of its own in one 64 kB buffer; the library's an 8 kB array each.
  t.is(first!.buffer, second!.buffer);
  t.is(first!.buffer.byteLength, 64 * 1024);
  t.not(first!.byteOffset, second!.byteOffset);
  t.is(first!.byteLength, 1024);
  for (const interpreter of library.interpreters) t.is(interpreter._runState.memory._store.buffer.byteLength, 8192);
  // Field for field what the library's constructor sets (a library upgrade that adds one fails here).
  for (const [index, interpreter] of tuned.interpreters.entries()) {
    const made = library.interpreters[index]!;
    t.deepEqual(Object.keys(interpreter), Object.keys(made));
    t.deepEqual(Object.keys(interpreter._runState), Object.keys(made._runState));
    t.is(Object.getPrototypeOf(interpreter._runState.memory), Object.getPrototypeOf(made._runState.memory));
  }
});

test('word32 makes the 32-byte word the library makes of a stack value', (t) => {
  const values = [0n, 1n, 0xffn, 0x100n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 200n + 1n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 64n, 2n ** 128n + 5n, 2n ** 192n, 2n ** 255n, 2n ** 256n - 1n];
  for (let i = 0n; i < 200n; i++) values.push((i * 0x9e3779b97f4a7c15f39cc0605cedc834n) ** (i % 3n + 1n) % 2n ** 256n);
  for (const value of values) t.is(bytesToHex(word32(value)), bytesToHex(setLengthLeft(bigIntToBytes(value), 32)), `value ${value}`);
  t.throws(() => word32(2n ** 256n));
});

test('gteHardfork answers as the library does as the hardfork changes, and copies answer for their own hardfork', (t) => {
  const common = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun });
  const library = new Common({ chain: Mainnet, hardfork: Hardfork.Cancun });
  fastEipLookup(common);
  const forks = [Hardfork.Homestead, Hardfork.SpuriousDragon, Hardfork.London, Hardfork.Shanghai, Hardfork.Cancun, Hardfork.Prague, Hardfork.Osaka];
  const answers = (c: Common) => forks.map((hf) => c.gteHardfork(hf));
  t.deepEqual(answers(common), answers(library));
  t.deepEqual(answers(common), [true, true, true, true, true, false, false]);
  common.setHardfork(Hardfork.Prague);
  library.setHardfork(Hardfork.Prague);
  t.deepEqual(answers(common), answers(library));
  const copy = common.copy();
  copy.setHardfork(Hardfork.London);
  t.deepEqual(answers(copy), [true, true, true, false, false, false, false]);
  t.deepEqual(answers(common), answers(library));
});

test.serial('warm addresses share no slots: a slot made warm is warm for its address only, and the access list keeps its own sets', async (t) => {
  const url = new URL('./journal.js', import.meta.resolve('@ethereumjs/evm'));
  const { Journal } = (await import(url.href)) as {
    Journal: new (stateManager: unknown, common: Common) => {
      accessList?: Map<string, Set<string>>;
      addAlwaysWarmAddress(address: unknown, addToAccessList?: boolean): void;
      addAlwaysWarmSlot(address: string, slot: string, addToAccessList?: boolean): void;
      isWarmedAddress(address: Uint8Array): boolean;
      isWarmedStorage(address: Uint8Array, slot: Uint8Array): boolean;
      cleanJournal(): void;
    };
  };
  const journal = new Journal({}, new Common({ chain: Mainnet, hardfork: Hardfork.Prague }));
  journal.cleanJournal();
  const a: `0x${string}` = `0x${'aa'.repeat(20)}`;
  const b = 'bb'.repeat(20);
  const c: `0x${string}` = `0x${'cc'.repeat(20)}`;
  const slot: `0x${string}` = `0x${'01'.repeat(32)}`;
  journal.addAlwaysWarmAddress(a);
  journal.addAlwaysWarmAddress(b);
  t.true(journal.isWarmedAddress(hexToBytes(a)), 'a prefixed address is warm');
  t.true(journal.isWarmedAddress(hexToBytes(`0x${b}`)), 'an unprefixed one too');
  t.false(journal.isWarmedAddress(hexToBytes(c)));
  journal.addAlwaysWarmSlot(a, slot);
  t.true(journal.isWarmedStorage(hexToBytes(a), hexToBytes(slot)));
  t.false(journal.isWarmedStorage(hexToBytes(`0x${b}`), hexToBytes(slot)), 'the other warm address did not get the slot');
  journal.addAlwaysWarmAddress(c);
  t.false(journal.isWarmedStorage(hexToBytes(c), hexToBytes(slot)), 'nor does one made warm later');

  journal.accessList = new Map();
  journal.addAlwaysWarmAddress(b, true);
  journal.addAlwaysWarmSlot(c, slot, true);
  t.deepEqual([...journal.accessList.keys()], [b, c.slice(2)]);
  t.deepEqual([...journal.accessList.get(b)!], []);
  t.deepEqual([...journal.accessList.get(c.slice(2))!], [slot.slice(2)]);
  t.throws(() => journal.addAlwaysWarmAddress(42), { message: /stripHexPrefix/ }, 'the library error for a non-string');
});

/**
 * EIP-2200's test cases (two SSTOREs to slot 0, or three), each run with slot 0 holding 0 and then 1
 * before the call; then SLOADs cold and warm, full-width keys and values, SSTORE at the EIP-2200
 * sentry (2,300 gas left and one more), and an SSTORE under STATICCALL.
 */
const WIDE = 'f0'.repeat(31) + '0f';
const STORAGE_PROGRAMS: Array<{ code: string; gasLimit?: bigint }> = [
  ...[
    '60006000556000600055',
    '60006000556001600055',
    '60016000556000600055',
    '60016000556002600055',
    '60016000556001600055',
    '60026000556000600055',
    '60026000556003600055',
    '60026000556001600055',
    '60026000556002600055',
    '600160005560006000556001600055',
    '600060005560016000556000600055',
  ].map((code) => ({ code: `0x${code}` })),
  // SLOAD slot 0 twice (cold, then warm), then SSTORE what it read + 1 and return it.
  { code: '0x6000545060005460010160005560005460005260206000f3' },
  // A full-width value under a full-width key, read back; then the key cleared.
  { code: `0x7f${WIDE}7f${WIDE}557f${WIDE}5460005260007f${WIDE}5560206000f3` },
  // PUSH1, PUSH1 (6 gas) then SSTORE with 2,300 and 2,301 gas left: the sentry traps the first.
  { code: '0x6001600055', gasLimit: 2306n },
  { code: '0x6001600055', gasLimit: 2307n },
  { code: '0x6001600055', gasLimit: 25_000n },
  // STATICCALL to the 0x…c1 contract (whose code stores 1 at slot 0 here), returning the call's success flag.
  { code: `0x60006000600060007300000000000000000000000000000000000000c15afa60005260206000f3` },
];
const STORAGE_FORKS = [Hardfork.Petersburg, Hardfork.Constantinople, Hardfork.Istanbul, Hardfork.Berlin, Hardfork.London, Hardfork.Cancun, Hardfork.Prague, Hardfork.Osaka];

async function storageOutcome(hardfork: string, code: string, gasLimit: bigint, slotZero: bigint, withLibraryHandlers: boolean) {
  const evm = await createEVM({ common: new Common({ chain: Mainnet, hardfork }) });
  if (withLibraryHandlers) {
    const map = (evm as unknown as { _opcodeMap: Array<Record<string, unknown>> })._opcodeMap;
    map[0x54] = { ...map[0x54], gasHandler: libraryStorageHandlers.sloadGas };
    map[0x55] = { ...map[0x55], gasHandler: libraryStorageHandlers.sstoreGas, opHandler: libraryStorageHandlers.sstore };
  }
  const to = new Address(hexToBytes('0x00000000000000000000000000000000000000d1'));
  const word = (value: bigint) => setLengthLeft(bigIntToBytes(value), 32);
  await evm.stateManager.putAccount(SENDER, new Account(0n, 10n ** 18n));
  for (const [address, bytes] of [
    [to, code],
    [LOOPER, '0x6001600055'],
  ] as const) {
    await evm.stateManager.putAccount(address, new Account());
    await evm.stateManager.putCode(address, hexToBytes(bytes as `0x${string}`));
    if (slotZero !== 0n) await evm.stateManager.putStorage(address, word(0n), bigIntToBytes(slotZero));
  }
  const { execResult } = await evm.runCall({ caller: SENDER, origin: SENDER, to, gasLimit });
  const slots = [word(0n), hexToBytes(`0x${WIDE}`)];
  return {
    gasUsed: execResult.executionGasUsed,
    gasRefund: execResult.gasRefund,
    returnValue: bytesToHex(execResult.returnValue),
    error: execResult.exceptionError?.error,
    storage: await Promise.all([to, LOOPER].flatMap((address) => slots.map(async (slot) => bytesToHex(await evm.stateManager.getStorage(address, slot))))),
  };
}

test.serial("SLOAD and SSTORE with words made by word32 charge, refund, store and trap as the library's handlers, Petersburg to Osaka", async (t) => {
  t.is(typeof libraryStorageHandlers.sstoreGas, 'function', 'the tuning kept the handlers it replaced');
  const refunds = new Set<bigint>();
  const errors = new Set<string | undefined>();
  for (const hardfork of STORAGE_FORKS) {
    for (const { code, gasLimit = 100_000n } of STORAGE_PROGRAMS) {
      for (const slotZero of [0n, 1n]) {
        const tuned = await storageOutcome(hardfork, code, gasLimit, slotZero, false);
        const library = await storageOutcome(hardfork, code, gasLimit, slotZero, true);
        t.deepEqual(tuned, library, `${hardfork} ${code} gas ${gasLimit} slot 0 = ${slotZero}`);
        refunds.add(tuned.gasRefund ?? 0n);
        errors.add(tuned.error);
      }
    }
  }
  // The programs reach the rules they are meant to: refunds of several sizes, the sentry's out-of-gas.
  t.true(refunds.size >= 4, `refunds seen: ${[...refunds].join(', ')}`);
  t.true(errors.has('out of gas'));
  t.true(errors.has(undefined));
});

test.serial('SSTORE under STATICCALL fails the inner call; a full-width value is stored and read back whole', async (t) => {
  const staticCall = await storageOutcome(Hardfork.Prague, STORAGE_PROGRAMS.at(-1)!.code, 100_000n, 0n, false);
  t.is(staticCall.returnValue, bytesToHex(setLengthLeft(Uint8Array.of(0), 32)), 'the STATICCALL returned failure');
  t.is(staticCall.storage[2], '0x', 'and the callee stored nothing');
  const wide = await storageOutcome(Hardfork.Prague, STORAGE_PROGRAMS[12]!.code, 100_000n, 0n, false);
  t.is(wide.returnValue, `0x${WIDE}`);
  t.is(wide.storage[1], '0x', 'then cleared');
});
