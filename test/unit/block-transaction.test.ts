/**
 * Blocks built and imported with the chain's own transaction path (block-transaction.ts) are the
 * blocks ethereumjs' runTx makes: two chains build the same blocks from the same candidates, one
 * made to run every transaction through runTx, and must produce the same block, receipts and
 * rejections; a third imports the runTx-built blocks, executing them with the chain's own path, and
 * must accept them (it checks their state root, receipts root, bloom and gas used).
 */
import test from 'ava';
import type { Block } from '@ethereumjs/block';
import { createAccessList2930Tx, createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, createAddressFromPrivateKey, createAddressFromString, hexToBytes, randomBytes } from '@ethereumjs/util';
import { runTx } from '@ethereumjs/vm';
import type { RunTxResult, VM } from '@ethereumjs/vm';
import { getCreateAddress } from 'ethers';
import type { Chain } from '../../src/chain/chain.js';
import { commonTransaction, runCommonTransaction } from '../../src/chain/block-transaction.js';
import type { PoolTxForBlock, RejectedTx } from '../../src/shared/actors/messages.js';
import type { StoredReceipt } from '../../src/shared/ethereum/chain-records.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { buildAndCommit, candidate, openDevChains } from '../helpers/dev-chain.js';

const CHAIN_ID = 1337n;
const common = txCommonFor(CHAIN_ID, 'osaka');
const MAX_FEE = 10n ** 10n;

type Key = `0x${string}`;
const [alice, bob, carol] = DEV_ACCOUNTS.map((account) => account.privateKey as Key) as [Key, Key, Key];
const addressOfKey = (key: Key): string => createAddressFromPrivateKey(hexToBytes(key)).toString();

/** Init code that deploys `runtime` (under 256 bytes): CODECOPY of what follows the 12-byte prefix, then RETURN. */
function deploying(runtime: string): string {
  const length = (runtime.length / 2).toString(16).padStart(2, '0');
  return `0x60${length}600c60003960${length}6000f3${runtime}`;
}
/** Slots 0 to 3 set to the call's first word: cleared all at once, their refund is more than runTx lets a transaction have. */
const STORE = '600035600055600035600155600035600255600035600355' + '00';
/** BALANCE of the coinbase, of a precompile and of the caller: each costs what its warmth says. */
const PROBE = '4131506004315033315000';
/** LOG1 of 32 bytes of memory with the call's first word as topic. */
const LOG = '60003560206000a100';
/** SSTORE(0, 1), then REVERT with no data. */
const REVERT = '600160005560006000fd';
/** SELFDESTRUCT to the caller. */
const DESTRUCT = '33ff';

interface TxFields {
  to?: string;
  value?: bigint;
  data?: string;
  gasLimit?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

const word = (value: bigint): string => `0x${value.toString(16).padStart(64, '0')}`;
const bytesOf = (hex: string | undefined) => (hex === undefined ? undefined : hexToBytes(hex as Key));

function feeMarket(key: Key, nonce: bigint, fields: TxFields): TypedTransaction {
  return createFeeMarket1559Tx(
    {
      chainId: CHAIN_ID,
      nonce,
      gasLimit: fields.gasLimit ?? 200_000n,
      maxFeePerGas: fields.maxFeePerGas ?? MAX_FEE,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas ?? 2n,
      to: fields.to as Key | undefined,
      value: fields.value ?? 0n,
      data: bytesOf(fields.data),
    },
    { common },
  ).sign(hexToBytes(key));
}

function legacy(key: Key, nonce: bigint, fields: TxFields): TypedTransaction {
  return createLegacyTx({ nonce, gasPrice: MAX_FEE, gasLimit: fields.gasLimit ?? 200_000n, to: fields.to as Key | undefined, value: fields.value ?? 0n, data: bytesOf(fields.data) }, { common }).sign(hexToBytes(key));
}

function accessList(key: Key, nonce: bigint, fields: TxFields, warm: { address: string; storageKeys: string[] }[]): TypedTransaction {
  return createAccessList2930Tx(
    { chainId: CHAIN_ID, nonce, gasPrice: MAX_FEE, gasLimit: fields.gasLimit ?? 200_000n, to: fields.to as Key | undefined, value: fields.value ?? 0n, data: bytesOf(fields.data), accessList: warm as never },
    { common },
  ).sign(hexToBytes(key));
}

/** The VM a chain builds blocks with (private to Chain: tests only). */
const buildVmOf = (chain: Chain): VM => (chain as unknown as { buildVm: VM }).buildVm;

/** Builds the same block on every chain from `transactions` and stores it; answers what each built, proposed and stored. */
async function buildEverywhere(chains: Chain[], coinbase: string, transactions: PoolTxForBlock[]) {
  const outcomes: { proposal: string; receipts: StoredReceipt[]; rejected: RejectedTx[]; sealed: Block }[] = [];
  for (const chain of chains) {
    const { built, proposal, sealed } = await buildAndCommit(chain, transactions, { coinbase: hexToBytes(coinbase as Key) });
    outcomes.push({ proposal: bytesToHex(proposal), receipts: built.receipts, rejected: built.rejected, sealed });
  }
  return outcomes;
}

test('blocks built and imported by the chain’s transaction path are runTx’s', async (t) => {
  const [viaRunTx, own, follower] = await openDevChains(t, 3);
  // A listener for runTx's afterTx event: this chain's transactions all go through runTx.
  buildVmOf(viaRunTx!).events.on('afterTx', () => {});
  const chains = [viaRunTx!, own!];
  const poorKey = bytesToHex(randomBytes(32)) as Key;
  const gappedKey = bytesToHex(randomBytes(32)) as Key;
  const aliceAddress = addressOfKey(alice);
  const contract = (nonce: number) => getCreateAddress({ from: aliceAddress, nonce }).toLowerCase();
  const [store, logger, reverter, destructor, probe] = [0, 1, 2, 3, 4].map(contract) as [string, string, string, string, string];

  // Block 1: the contracts, and two accounts funded: one for a single transfer, one that skips a nonce.
  const setup = [
    feeMarket(alice, 0n, { data: deploying(STORE) }),
    feeMarket(alice, 1n, { data: deploying(LOG) }),
    feeMarket(alice, 2n, { data: deploying(REVERT) }),
    feeMarket(alice, 3n, { data: deploying(DESTRUCT) }),
    feeMarket(alice, 4n, { data: deploying(PROBE) }),
    feeMarket(bob, 0n, { to: addressOfKey(poorKey), value: 21_000n * MAX_FEE + 100n }),
    feeMarket(bob, 1n, { to: addressOfKey(gappedKey), value: 10n ** 18n }),
  ];
  // Block 2: what a block holds besides plain transfers, and what a block leaves out.
  const mix = [
    // No tip: the coinbase, absent, is touched and stays empty (EIP-161 removes it).
    feeMarket(bob, 2n, { to: addressOfKey(carol), value: 1n, gasLimit: 21_000n, maxPriorityFeePerGas: 0n }),
    legacy(alice, 5n, { to: store, data: word(7n) }),
    // Clears the slots: a refund, capped at a fifth of the gas used.
    accessList(alice, 6n, { to: store, data: word(0n) }, [{ address: store, storageKeys: [word(0n)] }]),
    feeMarket(alice, 7n, { to: logger, data: word(0xfeedn) }),
    feeMarket(alice, 8n, { to: reverter }),
    // Out of gas: the slots from zero cost more than is left after the intrinsic gas.
    feeMarket(alice, 9n, { to: store, data: word(9n), gasLimit: 30_000n }),
    // Created and destroyed in one transaction (EIP-6780 deletes it), its value back to the sender.
    feeMarket(alice, 10n, { data: `0x${DESTRUCT}`, value: 1_000n }),
    // Destroyed after the transaction that created it: only its balance moves.
    feeMarket(alice, 11n, { to: destructor, value: 77n }),
    feeMarket(alice, 12n, { to: probe }),
    // Nothing sent to an account that does not exist: touched, empty, removed.
    feeMarket(bob, 3n, { to: bytesToHex(randomBytes(20)), value: 0n, gasLimit: 21_000n }),
    feeMarket(bob, 4n, { to: '0x0000000000000000000000000000000000000004', value: 3n, data: '0xc0ffee' }),
    // 1,000 non-zero bytes to an account without code: the EIP-7623 floor is what it pays.
    feeMarket(bob, 5n, { to: addressOfKey(carol), data: `0x${'ab'.repeat(1000)}`, gasLimit: 70_000n }),
    // Left out: below the base fee; nonce already used; the balance covers one transfer, not two; a nonce ahead.
    feeMarket(carol, 0n, { to: aliceAddress, value: 1n, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }),
    feeMarket(bob, 0n, { to: aliceAddress, value: 2n, gasLimit: 21_000n }),
    feeMarket(poorKey, 0n, { to: aliceAddress, value: 1n, gasLimit: 21_000n }),
    feeMarket(poorKey, 1n, { to: aliceAddress, value: 1n, gasLimit: 21_000n }),
    feeMarket(gappedKey, 1n, { to: aliceAddress, value: 1n, gasLimit: 21_000n }),
  ];

  const blocks: [string, TypedTransaction[]][] = [
    [`0x${'c1'.repeat(20)}`, setup],
    [`0x${'c2'.repeat(20)}`, mix],
  ];
  let mixed: { receipts: StoredReceipt[]; rejected: RejectedTx[] } | undefined;
  for (const [n, [coinbase, transactions]] of blocks.entries()) {
    const [library, ours] = await buildEverywhere(chains, coinbase, transactions.map(candidate));
    t.is(ours!.proposal, library!.proposal, `block ${n + 1}: the same block (state root, receipts root, bloom, gas used)`);
    t.deepEqual(ours!.receipts, library!.receipts, `block ${n + 1}: the same receipts`);
    t.deepEqual(ours!.rejected, library!.rejected, `block ${n + 1}: the same transactions left out, for the same reasons`);
    t.truthy(await follower!.importBlock(library!.sealed), `block ${n + 1}: a follower executing it with its own path accepts runTx's block`);
    t.is(bytesToHex(follower!.getHead().stateRoot), bytesToHex(library!.sealed.header.stateRoot));
    mixed = ours!;
  }

  // The mix did what it is there for.
  const { receipts, rejected } = mixed!;
  t.deepEqual(
    receipts.map((receipt) => receipt.status),
    [1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1],
  );
  const gasUsed = receipts.map((receipt) => receipt.gasUsed);
  t.is(receipts[3]!.logs.length, 1, 'the logger logged');
  t.true(gasUsed[2]! < gasUsed[1]!, 'clearing the slots was refunded');
  t.is(gasUsed[11]!, 21_000n + 10n * 4n * 1000n, 'the calldata floor');
  t.deepEqual(
    rejected.map((rejection) => rejection.reason),
    ['underpriced', 'nonce-too-low', 'insufficient-funds', 'nonce-too-high'],
  );
});

test('a transaction runTx would refuse is left to runTx, with nothing written', async (t) => {
  const [chain] = await openDevChains(t, 1);
  const vm = buildVmOf(chain!);
  // The head block's environment (number, time, base fee): enough for a transaction's validation.
  const block = chain!.getHeadBlock();
  const aliceAddress = createAddressFromString(addressOfKey(alice));
  const before = await vm.stateManager.getAccount(aliceAddress);
  for (const tx of [
    feeMarket(alice, 5n, { to: addressOfKey(bob), value: 1n, gasLimit: 21_000n }),
    feeMarket(alice, 0n, { to: addressOfKey(bob), value: 1n, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }),
    feeMarket(alice, 0n, { to: addressOfKey(bob), value: 10n ** 30n, gasLimit: 21_000n }),
  ]) {
    const opts = { tx, block, skipHardForkValidation: true };
    t.true(commonTransaction(vm, opts));
    t.is(await runCommonTransaction(vm, opts), undefined);
    await t.throwsAsync(runTx(vm, opts));
  }
  t.deepEqual(await vm.stateManager.getAccount(aliceAddress), before);
  const result: RunTxResult | undefined = await runCommonTransaction(vm, { tx: feeMarket(alice, 0n, { to: addressOfKey(bob), value: 1n, gasLimit: 21_000n }), block, skipHardForkValidation: true });
  t.is(result?.totalGasSpent, 21_000n);
});
