/**
 * Plain calls run as bare EVM messages (CallSimulator's lean path) answer exactly as the same calls
 * run through ethereumjs' runTx: output, status, gas used (after refunds and the EIP-7623 floor), the
 * error and its message, the gas estimate. The calls probe what runTx sets up for a transaction:
 * warm addresses (sender, target, precompiles, coinbase, access list), the sender's balance and
 * nonce, value transfers, refunds, reverts and halts, EIP-7702 delegation of the target, calls from
 * a contract. On the dev network (Osaka), in one process.
 */
import test from 'ava';
import type { Block } from '@ethereumjs/block';
import { bytesToHex } from '@ethereumjs/util';
import type { Chain } from '../../src/chain/chain.js';
import { CallSimulator, simulationGasCap } from '../../src/shared/execution/simulation.js';
import { parseCallRequest, parseStateOverrides } from '../../src/shared/rpc/params.js';
import { revertingDeployCode, storeAndLogDeployCode, tokenBalanceOfCallData, tokenDeployCode, tokenMintCallData } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const word = (value: bigint | string): string => (typeof value === 'bigint' ? value.toString(16) : value.replace(/^0x/, '')).padStart(64, '0');

/**
 * Returns, as 32-byte words: BALANCE(CALLER), BALANCE(COINBASE), SELFBALANCE, GASPRICE, BALANCE(0x04),
 * BALANCE(0x…c0ffee), then GAS: any difference in warm addresses or balances shows.
 */
const PROBE_CODE =
  '0x' +
  '3331600052' + // BALANCE(CALLER) → 0x00
  '4131602052' + // BALANCE(COINBASE) → 0x20
  '47604052' + // SELFBALANCE → 0x40
  '3a606052' + // GASPRICE → 0x60
  '600431608052' + // BALANCE(0x04) → 0x80
  '73' + '0000000000000000000000000000000000c0ffee' + '3160a052' + // BALANCE(0x…c0ffee) → 0xa0
  '5a60c052' + // GAS → 0xc0
  '60e06000f3'; // RETURN(0, 0xe0)
/** CREATE of empty code, returning the new address (which follows the creator's nonce). */
const CREATOR_CODE = '0x600060006000f0600052' + '60206000f3';
/** CALLs its caller back and returns the first word of the answer. */
const CALLBACK_CODE = '0x60206000600060006000335af150' + '60206000f3';

const PROBE = '0x00000000000000000000000000000000000000b1';
const CREATOR = '0x00000000000000000000000000000000000000b2';
const CALLBACK = '0x00000000000000000000000000000000000000b3';
const INVALID = '0x00000000000000000000000000000000000000b4';
const DELEGATED = '0x00000000000000000000000000000000000000b5';
const UNFUNDED = '0x00000000000000000000000000000000000000b6';

/** Everything a caller of the simulator sees of one call. */
async function outcomes(simulator: CallSimulator, block: Block, raw: object, overridesRaw?: object): Promise<unknown> {
  const call = parseCallRequest(raw);
  const overrides = parseStateOverrides(overridesRaw);
  const settle = async (run: () => Promise<unknown>): Promise<unknown> => {
    try {
      const value = await run();
      return value instanceof Uint8Array ? bytesToHex(value) : value;
    } catch (err) {
      const { code, message, data } = err as { code?: number; message: string; data?: unknown };
      return { error: { code, message, data } };
    }
  };
  return {
    call: await settle(() => simulator.call(call, block, overrides)),
    estimate: await settle(() => simulator.estimateGas(call, block, overrides)),
    run: overrides === undefined ? await settle(async () => {
      const { status, gasUsed, output } = await simulator.run(call, block);
      return { status, gasUsed, output: bytesToHex(output) };
    }) : 'n/a',
  };
}

test('plain calls run as messages answer as through runTx: output, gas, errors, estimates', async (t) => {
  const path = tempDataPath();
  let chain: Chain | undefined;
  try {
    chain = await openDevChain(path);
    const opened = chain;
    const key = DEV_ACCOUNTS[0].privateKey;
    const holder = DEV_ACCOUNTS[0].address;
    await proposeAndCommit(opened, [
      candidate(signedTx(key, 0n, { data: tokenDeployCode() })),
      candidate(signedTx(key, 1n, { data: storeAndLogDeployCode() })),
      candidate(signedTx(key, 2n, { data: revertingDeployCode() })),
    ]);
    const [token, store, reverting] = (await opened.store.getReceipts(opened.getHead().hash))!.map((r) => bytesToHex(r.contractAddress!));
    await proposeAndCommit(opened, [
      candidate(signedTx(key, 3n, { to: token!, data: tokenMintCallData(holder, 10n ** 24n) })),
      candidate(signedTx(key, 4n, { to: store!, data: `0x${word(42n)}` })),
    ]);
    const block = opened.getHeadBlock();

    const gasCap = (at: Block) => simulationGasCap(at, 0n);
    const asMessages = new CallSimulator(opened, gasCap);
    const asTransactions = new CallSimulator(opened, gasCap, false);
    const transfer = (to: string, amount: bigint) => `0xa9059cbb${word(to)}${word(amount)}`;
    const cases: [string, object, object?][] = [
      ['ERC-20 balanceOf', { to: token, data: tokenBalanceOfCallData(holder) }],
      ['ERC-20 balanceOf from the holder', { from: holder, to: token, data: tokenBalanceOfCallData(holder) }],
      ['ERC-20 transfer (storage written, log)', { from: holder, to: token, data: transfer(UNFUNDED, 5n) }],
      ['ERC-20 transfer beyond the balance (revert with reason)', { from: UNFUNDED, to: token, data: transfer(holder, 5n) }],
      ['storeAndLog read', { to: store, data: '0x' }],
      ['storeAndLog clears its slot (refund)', { from: holder, to: store, data: `0x${word(0n)}` }],
      ['reverting contract', { to: reverting, data: '0x' }],
      ['out of gas', { to: token, data: tokenBalanceOfCallData(holder), gas: '0x5a00' }],
      ['intrinsic gas above the limit', { to: token, data: tokenBalanceOfCallData(holder), gas: '0x5000' }],
      ['gas below the EIP-7623 calldata floor', { to: store, data: `0x${'00'.repeat(2000)}`, gas: `0x${(21_000 + 4 * 2000 + 100).toString(16)}` }],
      ['value to an account', { from: holder, to: UNFUNDED, value: '0x5' }],
      ['value from an unfunded sender, not strict', { from: UNFUNDED, to: PROBE, value: '0x7', strict: false }, { [PROBE]: { code: PROBE_CODE } }],
      ['value beyond the balance, strict', { from: UNFUNDED, to: PROBE, value: '0x7' }, { [PROBE]: { code: PROBE_CODE } }],
      ['probe: warm sender, target, precompiles, coinbase', { from: holder, to: PROBE, value: '0x3' }, { [PROBE]: { code: PROBE_CODE } }],
      ['probe with an access list', { from: holder, to: PROBE, accessList: [{ address: '0x0000000000000000000000000000000000c0ffee', storageKeys: [`0x${word(1n)}`] }] }, { [PROBE]: { code: PROBE_CODE } }],
      ['probe with zero 1559 fees', { from: holder, to: PROBE, maxFeePerGas: '0x0', maxPriorityFeePerGas: '0x0' }, { [PROBE]: { code: PROBE_CODE } }],
      ['probe with a price (runs as a transaction either way)', { from: holder, to: PROBE, gasPrice: '0x3b9aca00' }, { [PROBE]: { code: PROBE_CODE } }],
      ['a contract creates', { to: CREATOR }, { [CREATOR]: { code: CREATOR_CODE, nonce: '0x4' } }],
      ['called from a contract that creates when called back (its nonce bumped)', { from: CREATOR, to: CALLBACK }, { [CREATOR]: { code: CREATOR_CODE, nonce: '0x4' }, [CALLBACK]: { code: CALLBACK_CODE } }],
      ['invalid opcode', { to: INVALID }, { [INVALID]: { code: '0xfe' } }],
      ['target delegated by EIP-7702 to the probe', { from: holder, to: DELEGATED }, { [PROBE]: { code: PROBE_CODE }, [DELEGATED]: { code: `0xef0100${PROBE.slice(2)}` } }],
      ['precompile (identity)', { to: '0x0000000000000000000000000000000000000004', data: '0xdeadbeef' }],
      ['contract creation (runs as a transaction either way)', { from: holder, data: storeAndLogDeployCode() }],
    ];
    for (const [name, raw, overrides] of cases) {
      const answer = await outcomes(asMessages, block, raw, overrides);
      if (process.env.SHOW_OUTCOMES) console.log(name, JSON.stringify(answer, (_, v) => (typeof v === 'bigint' ? String(v) : v)));
      t.deepEqual(answer, await outcomes(asTransactions, block, raw, overrides), name);
    }
    const balance = (await outcomes(asMessages, block, cases[0]![1])) as { call: string };
    t.is(balance.call, `0x${word(10n ** 24n)}`);

    // The lean path is the one taken: runTx announces each transaction it runs, a message run does not.
    let transactionsRun = 0;
    await opened.withStateAt(block.header.stateRoot, async (vm) => {
      vm.events.on('beforeTx', () => void transactionsRun++);
    });
    await asTransactions.call(parseCallRequest(cases[0]![1]), block);
    t.is(transactionsRun, 1);
    await asMessages.call(parseCallRequest(cases[0]![1]), block);
    t.is(transactionsRun, 1);
  } finally {
    await chain?.close();
    removeDataPath(path);
  }
});
