/**
 * The dev network runs today's EVM (Osaka at genesis): an EIP-7702 set-code transaction end to end,
 * Osaka opcodes and precompiles, block and call tracing with the struct-log tracer on blocks with
 * storage writes and reverts, eth_simulateV1 with each option and error code, and the blob fee
 * methods, against a real node over HTTP.
 */
import test from 'ava';
import { RLP } from '@ethereumjs/rlp';
import { createEOACode7702Tx, createFeeMarket1559Tx } from '@ethereumjs/tx';
import { genWithdrawalsTrieRoot } from '@ethereumjs/block';
import { bytesToHex, createWithdrawal, eoaCode7702SignAuthorization, hexToBytes } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import * as secp from '@noble/secp256k1';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { STORED_EVENT_TOPIC, revertingDeployCode, storeAndLogDeployCode } from '../helpers/contracts.js';
import { removeDataPath, startNode, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

// @noble/secp256k1 v3 signs only once given its hash functions.
secp.hashes.sha256 = sha256;
secp.hashes.hmacSha256 = (k: Uint8Array, m: Uint8Array) => hmac(sha256, k, m);

const common = txCommonFor(1337n, 'osaka');
const [A, B, C] = DEV_ACCOUNTS;
const key = (k: string) => hexToBytes(k as `0x${string}`);
const contractAddress = (from: string, nonce: number) =>
  bytesToHex(keccak_256(RLP.encode([hexToBytes(from as `0x${string}`), nonce === 0 ? new Uint8Array() : Uint8Array.of(nonce)])).subarray(12));

let node: NodeProcess;
const STORE = contractAddress(A.address, 0);
const REVERTER = contractAddress(A.address, 1);
/** The block holding a storage write and a revert, and the set-code transaction. */
let mixedBlock: { number: string; hash: string; txCount: number };
let setCodeTxHash: string;

type Receipt = { status: string; blockNumber: string; blockHash: string; type: string };

async function send(privateKey: string, nonce: number, to: `0x${string}` | undefined, data = '0x', gasLimit = 300_000n): Promise<string> {
  const tx = createFeeMarket1559Tx(
    { chainId: 1337n, nonce: BigInt(nonce), gasLimit, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, to, data: hexToBytes(data as `0x${string}`) },
    { common },
  ).sign(key(privateKey));
  return node.rpc<string>('eth_sendRawTransaction', [bytesToHex(tx.serialize())]);
}

const receipt = (hash: string) => waitFor(`receipt of ${hash}`, () => node.rpc<Receipt | null>('eth_getTransactionReceipt', [hash]), (r) => r !== null, 30_000) as Promise<Receipt>;

test.before(async () => {
  node = await startNode({ args: ['--rpc-http-api=ETH,NET,WEB3,DEBUG'] });
  await receipt(await send(A.privateKey, 0, undefined, storeAndLogDeployCode()));
  await receipt(await send(A.privateKey, 1, undefined, revertingDeployCode()));
  // B's set-code transaction makes C delegate to the store contract (C signs the authorization).
  const authorization = eoaCode7702SignAuthorization({ chainId: '0x539', address: STORE, nonce: '0x0' }, key(C.privateKey));
  const setCode = createEOACode7702Tx(
    { chainId: 1337n, nonce: 0n, gasLimit: 200_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, to: C.address, authorizationList: [authorization] },
    { common },
  ).sign(key(B.privateKey));
  // One block: a storage write (with a log), a revert and the set-code transaction, sent back to back.
  const hashes = [
    await send(A.privateKey, 2, STORE, `0x${'00'.repeat(31)}2a`),
    await send(A.privateKey, 3, REVERTER),
    (setCodeTxHash = await node.rpc<string>('eth_sendRawTransaction', [bytesToHex(setCode.serialize())])),
  ];
  const receipts = await Promise.all(hashes.map(receipt));
  const last = receipts[receipts.length - 1]!;
  const block = await node.rpc<{ number: string; hash: string; transactions: string[] }>('eth_getBlockByNumber', [receipts[0]!.blockNumber, false]);
  mixedBlock = { number: block.number, hash: block.hash, txCount: block.transactions.length };
  void last;
});

test.after.always(async () => {
  if (node) {
    await node.stop();
    removeDataPath(node.dataPath);
  }
});

test('EIP-7702: a set-code transaction mines as type 4, shows its authorization list, and leaves a delegation designator', async (t) => {
  const mined = await receipt(setCodeTxHash);
  t.is(mined.type, '0x4');
  t.is(mined.status, '0x1');
  const tx = await node.rpc<{ type: string; authorizationList: { chainId: string; address: string; nonce: string; yParity: string; r: string; s: string }[] }>(
    'eth_getTransactionByHash',
    [setCodeTxHash],
  );
  t.is(tx.type, '0x4');
  t.deepEqual(Object.keys(tx.authorizationList[0]!), ['chainId', 'address', 'nonce', 'yParity', 'r', 's']);
  t.like(tx.authorizationList[0], { chainId: '0x539', address: STORE, nonce: '0x0' });
  t.is(await node.rpc('eth_getCode', [C.address, 'latest']), `0xef0100${STORE.slice(2)}`);
  const blockReceipts = await node.rpc<{ type: string }[]>('eth_getBlockReceipts', [mined.blockNumber]);
  t.true(blockReceipts.some((r) => r.type === '0x4'));
  // The pool refuses a set-code transaction with no authorizations (Besu: no RPC code for it).
  const empty = RLP.encode([1337n, 1n, 1n, 10n ** 11n, 100_000n, hexToBytes(C.address), 0n, new Uint8Array(), [], [], 0n, 1n, 1n].map((v) => (typeof v === 'bigint' ? (v === 0n ? new Uint8Array() : hexToBytes(`0x${v.toString(16).padStart(2 * Math.ceil(v.toString(16).length / 2), '0')}`)) : v)) as never);
  const error = await node.rpcError('eth_sendRawTransaction', [bytesToHex(Uint8Array.of(4, ...empty))]);
  t.true(error.code === -32603 || error.code === -32002, JSON.stringify(error));
});

test('Osaka EVM: CLZ (EIP-7939) runs, P256VERIFY (EIP-7951) charges 6,900 gas, the EIP-7623 calldata floor applies', async (t) => {
  // PUSH1 0xff, CLZ, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN: 0xff has 248 leading zero bits.
  const clz = '0x60ff1e60005260206000f3';
  const probe = `0x${'99'.repeat(20)}`;
  t.is(BigInt(await node.rpc<string>('eth_call', [{ to: probe }, 'latest', { [probe]: { code: clz } }])), 248n);
  // Same calldata to the precompile and to a plain account (both warm as a transaction's `to`): the difference is its price.
  const input = `0x${'00'.repeat(160)}`;
  const [block] = await node.rpc<SimBlock[]>('eth_simulateV1', [
    { blockStateCalls: [{ calls: [{ to: '0x0000000000000000000000000000000000000100', data: input }, { to: `0x${'dd'.repeat(20)}`, data: input }] }] },
  ]);
  // 21,000 + 160 zero bytes × 4 + 6,900; the plain call pays EIP-7623's calldata floor, 21,000 + 160 × 10.
  t.is(BigInt(block!.calls[0]!.gasUsed), 21_000n + 640n + 6900n);
  t.is(BigInt(block!.calls[1]!.gasUsed), 21_000n + 1600n);
  // EIP-7825: a call asking for more than 2^24 gas is refused.
  t.deepEqual(await node.rpcError('eth_call', [{ to: probe, gas: '0x1000001' }, 'latest']), { code: -32005, message: 'Transaction gas limit cap exceeded' });
});

test('Osaka EVM: MODEXP is priced by EIP-7883 (no divisor, 16 per iteration for short operands, 500 at least)', async (t) => {
  // base 0x02, a 32-byte exponent 2^255 (255 iterations), modulus 0x05: EIP-7883 charges 16 × 255 = 4,080
  // (EIP-2565 charged max(200, 1 × 255 / 3) = 200).
  const lengths = [1n, 32n, 1n].map((n) => n.toString(16).padStart(64, '0')).join('');
  const input = `0x${lengths}02${'80'.padEnd(64, '0')}05`;
  const [block] = await node.rpc<SimBlock[]>('eth_simulateV1', [{ blockStateCalls: [{ calls: [{ to: '0x0000000000000000000000000000000000000005', data: input }] }] }]);
  t.is(block!.calls[0]!.returnData, '0x01', '2^(2^255) mod 5 (2 has order 4 mod 5)');
  // 21,000 + calldata (124 zero bytes × 4 + 6 other bytes × 16) + 4,080 (above EIP-7623's floor of 21,000 + 148 tokens × 10).
  t.is(BigInt(block!.calls[0]!.gasUsed), 21_000n + 124n * 4n + 6n * 16n + 4080n);
});

type StructLog = { op: string; storage?: Record<string, string>; memory?: string[]; stack?: string[] };
type Trace = { gas: number; failed: boolean; returnValue: string; structLogs: StructLog[] };

test('debug_traceBlockByNumber / ByHash / traceBlock trace every transaction of a block with a storage write and a revert', async (t) => {
  t.true(mixedBlock.txCount >= 2);
  const byNumber = await node.rpc<Trace[]>('debug_traceBlockByNumber', [mixedBlock.number]);
  t.is(byNumber.length, mixedBlock.txCount);
  const store = byNumber.find((trace) => trace.structLogs.some((log) => log.op === 'SSTORE'))!;
  t.false(store.failed);
  const sstore = store.structLogs.find((log) => log.op === 'SSTORE')!;
  t.deepEqual(sstore.storage, { ['0'.repeat(64)]: `${'0'.repeat(62)}2a` }, 'storage words as Besu prints them');
  t.true(sstore.memory!.every((word) => /^[0-9a-f]{64}$/.test(word)));
  const reverted = byNumber.find((trace) => trace.failed)!;
  t.regex(reverted.returnValue, /^08c379a0/, 'the revert data, bare hex');
  t.is(reverted.structLogs[reverted.structLogs.length - 1]!.op, 'REVERT');

  t.deepEqual(await node.rpc('debug_traceBlockByHash', [mixedBlock.hash]), byNumber);
  const raw = await node.rpc<string>('debug_getRawBlock', [mixedBlock.number]);
  t.deepEqual(await node.rpc('debug_traceBlock', [raw]), byNumber);
  const lean = await node.rpc<Trace[]>('debug_traceBlockByNumber', [mixedBlock.number, { disableStorage: true, disableMemory: true, disableStack: true }]);
  t.true(lean.every((trace) => trace.structLogs.every((log) => log.storage === undefined && log.memory === undefined && log.stack === undefined)));

  // Besu: no trace for the genesis block (it has no parent state) nor for an unknown block.
  t.is(await node.rpc('debug_traceBlockByNumber', ['0x0']), null);
  t.is(await node.rpc('debug_traceBlockByNumber', ['0xffffff']), null);
  t.is(await node.rpc('debug_traceBlockByHash', [`0x${'12'.repeat(32)}`]), null);
  const genesisRaw = await node.rpc<string>('debug_getRawBlock', ['0x0']);
  t.deepEqual(await node.rpcError('debug_traceBlock', [genesisRaw]), { code: -32000, message: 'Parent block not found' });
  t.deepEqual(await node.rpcError('debug_traceBlock', ['0x1234']), { code: -32602, message: 'Invalid block param (block not found)' });
  t.deepEqual(await node.rpcError('debug_traceBlockByNumber', [mixedBlock.number, { disableStorage: 'yes' }]), { code: -32602, message: 'Invalid transaction trace params' });
});

test('debug_traceCall traces a call as debug_traceTransaction traces a transaction', async (t) => {
  const traced = await node.rpc<Trace>('debug_traceCall', [{ from: A.address, to: STORE, data: `0x${'00'.repeat(31)}07` }, 'latest', {}]);
  t.false(traced.failed);
  t.true(traced.structLogs.some((log) => log.op === 'LOG1'));
  const reverted = await node.rpc<Trace>('debug_traceCall', [{ to: REVERTER }, 'latest']);
  t.true(reverted.failed);
  t.deepEqual(await node.rpcError('debug_traceCall', [{ to: REVERTER }, '0xffffff']), { code: -32000, message: 'Block not found' });
});

type SimBlock = { number: string; timestamp: string; hash: string; baseFeePerGas: string; transactions: unknown[]; calls: { status: string; returnData: string; gasUsed: string; logs: { address: string; topics: string[]; data: string }[]; error?: { code: number; message: string; data?: string } }[] };

test('eth_simulateV1: blocks of calls with overrides, state carried across blocks, logs, traceTransfers and full transactions', async (t) => {
  const fresh = `0x${'ab'.repeat(20)}`;
  const head = await node.rpc<{ number: string; timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  const blocks = await node.rpc<SimBlock[]>('eth_simulateV1', [
    {
      blockStateCalls: [
        {
          stateOverrides: { [fresh]: { balance: '0xde0b6b3a7640000' } },
          calls: [
            { from: fresh, to: `0x${'cd'.repeat(20)}`, value: '0x64' },
            { from: fresh, to: STORE, data: `0x${'00'.repeat(31)}05` },
            { from: fresh, to: REVERTER },
          ],
        },
        { blockOverrides: { number: `0x${(BigInt(head.number) + 3n).toString(16)}`, baseFeePerGas: '0x0' }, calls: [{ from: fresh, to: `0x${'cd'.repeat(20)}`, value: '0x1' }] },
      ],
      traceTransfers: true,
      returnFullTransactions: true,
    },
    // The head just read, not 'latest': the node seals blocks meanwhile.
    head.number,
  ]);
  // The gap (head+2) is filled but not returned.
  t.deepEqual(blocks.map((b) => BigInt(b.number)), [BigInt(head.number) + 1n, BigInt(head.number) + 3n]);
  t.is(BigInt(blocks[0]!.timestamp), BigInt(head.timestamp) + 12n);
  t.is(BigInt(blocks[1]!.timestamp), BigInt(head.timestamp) + 36n);
  const [transfer, stored, reverted] = blocks[0]!.calls;
  t.is(transfer!.status, '0x1');
  t.is(transfer!.logs[0]!.address, `0x${'ee'.repeat(20)}`, 'traceTransfers: a Transfer log from 0xeeee…');
  t.is(BigInt(transfer!.logs[0]!.data), 100n);
  t.is(stored!.logs[0]!.topics[0], STORED_EVENT_TOPIC);
  t.is(reverted!.status, '0x0');
  t.is(reverted!.error!.code, 3);
  t.regex(reverted!.error!.data!, /^0x08c379a0/);
  t.is(typeof blocks[0]!.transactions[0], 'object', 'returnFullTransactions');
  // The state carries into the next block: the sender's nonce went up with each call.
  t.is(blocks[1]!.calls[0]!.status, '0x1');
  const hashes = await node.rpc<SimBlock[]>('eth_simulateV1', [{ blockStateCalls: [{ calls: [{ to: STORE }] }] }]);
  t.is(typeof hashes[0]!.transactions[0], 'string');
});

test('eth_simulateV1: moving a precompile, and each error code', async (t) => {
  // ecrecover moved to 0x…1234: the old address is plain, the new one recovers.
  const moved = `0x${'00'.repeat(18)}1234`;
  const digest = keccak_256(new TextEncoder().encode('basalt'));
  const signature = secp.sign(digest, key(A.privateKey), { prehash: false, format: 'recovered' });
  const input = bytesToHex(Uint8Array.from([...digest, ...new Uint8Array(31), 27 + signature[0]!, ...signature.subarray(1)]));
  const [block] = await node.rpc<SimBlock[]>('eth_simulateV1', [
    { blockStateCalls: [{ stateOverrides: { '0x0000000000000000000000000000000000000001': { movePrecompileToAddress: moved } }, calls: [{ to: moved, data: input }, { to: '0x0000000000000000000000000000000000000001', data: input }] }] },
  ]);
  t.is(block!.calls[0]!.returnData, `0x${'00'.repeat(12)}${A.address.slice(2)}`, 'the moved precompile recovers the signer');
  t.is(block!.calls[1]!.returnData, '0x', 'the old address has no code now');

  const simulateError = (request: unknown) => node.rpcError('eth_simulateV1', [request, 'latest']);
  const blocksOf = (...calls: unknown[]) => ({ blockStateCalls: calls });
  const codeOf = async (request: unknown) => (await simulateError(request)).code;
  t.is(await codeOf({ ...blocksOf({ calls: [{ from: A.address, to: STORE, nonce: '0x0' }] }), validation: true }), -38010);
  t.is(await codeOf({ ...blocksOf({ calls: [{ from: A.address, to: STORE, nonce: '0xffff' }] }), validation: true }), -38011);
  t.is(await codeOf({ ...blocksOf({ calls: [{ from: A.address, to: STORE, maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x1' }] }), validation: true }), -38012);
  t.is(await codeOf(blocksOf({ calls: [{ to: STORE, gas: '0x100' }] })), -38013);
  t.is(await codeOf({ ...blocksOf({ calls: [{ from: `0x${'ab'.repeat(20)}`, to: STORE, value: '0x1', maxFeePerGas: '0x3b9aca00', maxPriorityFeePerGas: '0x0' }] }), validation: true }), -38014);
  t.is(await codeOf(blocksOf({ blockOverrides: { gasLimit: '0x5208' }, calls: [{ to: STORE, gas: '0x10000' }] })), -38015);
  t.is(await codeOf(blocksOf({ blockOverrides: { number: '0x1' }, calls: [] })), -38020);
  t.is(await codeOf(blocksOf({ blockOverrides: { time: '0x1' }, calls: [] })), -38021);
  const one = '0x0000000000000000000000000000000000000001';
  t.is(await codeOf(blocksOf({ stateOverrides: { [one]: { movePrecompileToAddress: one } }, calls: [] })), -38022);
  t.is(await codeOf(blocksOf({ stateOverrides: { [one]: { movePrecompileToAddress: moved }, '0x0000000000000000000000000000000000000002': { movePrecompileToAddress: moved } }, calls: [] })), -38023);
  t.is(await codeOf({ ...blocksOf({ calls: [{ from: STORE, to: A.address }] }), validation: true }), -38024);
  t.is(await codeOf({ ...blocksOf({ calls: [{ from: A.address, data: `0x${'00'.repeat(49153)}`, gas: '0xf00000' }] }), validation: true }), -38025);
  t.deepEqual(await simulateError(blocksOf(...Array.from({ length: 257 }, () => ({ calls: [] })))), { code: -38026, message: 'Too many block calls' });
  t.deepEqual(await simulateError({ blockStateCalls: 'none' }), { code: -32602, message: 'Invalid params' });
  // A call that halts (INVALID opcode) fails alone with -32015; the request still answers.
  const probe = `0x${'98'.repeat(20)}`;
  const [halted] = await node.rpc<SimBlock[]>('eth_simulateV1', [blocksOf({ stateOverrides: { [probe]: { code: '0xfe' } }, calls: [{ to: probe }] })]);
  t.is(halted!.calls[0]!.error!.code, -32015);
});

test('eth_simulateV1 limits: 256 blocks a call; no count of calls per block, only the block\'s gas (-38015)', async (t) => {
  // Besu's limits as far as the spec and fixtures show them: the number of blocks (-38026, above) and gas.
  // A block of 300 calls, more than the block limit, answers every one of them.
  const calls = Array.from({ length: 300 }, (_, i) => ({ from: A.address, to: STORE, data: `0x${i.toString(16).padStart(64, '0')}` }));
  const [block] = await node.rpc<SimBlock[]>('eth_simulateV1', [{ blockStateCalls: [{ calls }] }, 'latest']);
  t.is(block!.calls.length, 300);
  t.true(block!.calls.every((call) => call.status === '0x1'));
  // 256 blocks answer; the calls' gas is bounded by the block's gas limit.
  const most = await node.rpc<SimBlock[]>('eth_simulateV1', [{ blockStateCalls: Array.from({ length: 256 }, () => ({ calls: [] })) }, 'latest']);
  t.is(most.length, 256);
  t.deepEqual(
    await node.rpcError('eth_simulateV1', [{ blockStateCalls: [{ blockOverrides: { gasLimit: '0xa410' }, calls: [{ to: STORE, gas: '0x5208' }, { to: STORE, gas: '0x5209' }] }] }, 'latest']),
    { code: -38015, message: 'Block gas limit exceeded by the block\'s transactions' },
  );
});

test('eth_simulateV1 block overrides: blobBaseFee is what BLOBBASEFEE reads; withdrawals are credited after the calls and rooted in the header', async (t) => {
  // Returns BLOBBASEFEE; the other returns the balance of the withdrawal recipient.
  const blobFeeProbe = `0x${'b1'.repeat(20)}`;
  const recipient = `0x${'5a'.repeat(20)}`;
  const balanceProbe = `0x${'b2'.repeat(20)}`;
  const stateOverrides = {
    [blobFeeProbe]: { code: '0x4a60005260206000f3' },
    [balanceProbe]: { code: `0x73${recipient.slice(2)}3160005260206000f3` },
  };
  const withdrawals = [
    { index: '0x7', validatorIndex: '0x2', address: recipient, amount: '0x3' },
    { index: '0x8', validatorIndex: '0x3', address: recipient, amount: '0x4' },
  ];
  const blocks = await node.rpc<(SimBlock & { withdrawals: unknown[]; withdrawalsRoot: string; excessBlobGas: string })[]>('eth_simulateV1', [
    {
      blockStateCalls: [
        { stateOverrides, blockOverrides: { blobBaseFee: '0x1234', withdrawals }, calls: [{ to: blobFeeProbe }, { to: balanceProbe }] },
        { calls: [{ to: blobFeeProbe }, { to: balanceProbe }] },
      ],
    },
    'latest',
  ]);
  const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
  t.is(blocks[0]!.calls[0]!.returnData, word(0x1234n));
  t.is(blocks[1]!.calls[0]!.returnData, word(1n), 'without the override: the chain\'s blob base fee');
  t.is(blocks[0]!.excessBlobGas, blocks[1]!.excessBlobGas, 'the header keeps the chain\'s excess blob gas');
  // Credited after the block's calls: the first block's call sees nothing yet, the next block 7 gwei.
  t.is(blocks[0]!.calls[1]!.returnData, word(0n));
  t.is(blocks[1]!.calls[1]!.returnData, word(7n * 10n ** 9n));
  t.deepEqual(blocks[0]!.withdrawals, withdrawals);
  const root = await genWithdrawalsTrieRoot(withdrawals.map((w) => createWithdrawal(w as never)));
  t.is(blocks[0]!.withdrawalsRoot, bytesToHex(root));
  t.deepEqual(blocks[1]!.withdrawals, []);
  t.is(blocks[1]!.withdrawalsRoot, '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421', 'the empty trie root');
  t.deepEqual(await node.rpcError('eth_simulateV1', [{ blockStateCalls: [{ blockOverrides: { withdrawals: [{ index: '0x0' }] } }] }]), { code: -32602, message: 'Invalid params' });
});

test('blob fee methods and eth_config on an Osaka chain; eth_getHeaderByNumber is not a Besu method', async (t) => {
  t.is(await node.rpc('eth_blobBaseFee'), '0x1');
  const history = await node.rpc<{ baseFeePerBlobGas: string[]; blobGasUsedRatio: number[] }>('eth_feeHistory', ['0x2', 'latest', []]);
  t.is(history.baseFeePerBlobGas.length, 3);
  t.is(history.blobGasUsedRatio.length, 2);
  const config = await node.rpc<{ current: { blobSchedule: unknown; precompiles: Record<string, string> }; next: null }>('eth_config');
  t.deepEqual(config.current.blobSchedule, { baseFeeUpdateFraction: 5007716, max: 9, target: 6 });
  t.is(config.current.precompiles.P256VERIFY, '0x0000000000000000000000000000000000000100');
  t.is(config.next, null);
  t.is(await node.rpc('eth_syncing'), false);
  t.is((await node.rpcError('eth_getHeaderByNumber', ['latest'])).code, -32601);
});

test('the dev genesis system contracts: EIP-2935 serves block hashes, EIP-4788 timestamps, EIP-7002 requests reach the requests hash', async (t) => {
  const history = '0x0000f90827f1c53a10cb7a02335b175320002935';
  const beaconRoots = '0x000f3df6d732807ef1319fb7b8bb8522d0beac02';
  const withdrawalRequests = '0x00000961ef480eb55e80d19ad83579a64c007002';
  const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
  const head = await node.rpc<{ number: string; timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  const parent = await node.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${(BigInt(head.number) - 1n).toString(16)}`, false]);
  t.is(await node.rpc('eth_call', [{ to: history, data: word(BigInt(head.number) - 1n) }, head.number]), parent.hash);
  // A QBFT block has a zero parent beacon block root; a timestamp no block had is refused.
  t.is(await node.rpc('eth_call', [{ to: beaconRoots, data: word(BigInt(head.timestamp)) }, head.number]), word(0n));
  t.is((await node.rpcError('eth_call', [{ to: beaconRoots, data: word(BigInt(head.timestamp) + 1_000_000n) }, head.number])).code, 3);

  // B (nonce 1 after its set-code transaction) asks for a withdrawal of 5 gwei for a validator key, paying the 1 wei fee.
  const validatorKey = new Uint8Array(48).fill(0x4b);
  const request = createFeeMarket1559Tx(
    { chainId: 1337n, nonce: 1n, gasLimit: 300_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, to: withdrawalRequests, value: 1n, data: new Uint8Array([...validatorKey, 0, 0, 0, 0, 0, 0, 0, 5]) },
    { common },
  ).sign(key(B.privateKey));
  const mined = await receipt(await node.rpc<string>('eth_sendRawTransaction', [bytesToHex(request.serialize())]));
  t.is(mined.status, '0x1');
  const block = await node.rpc<{ requestsHash: string }>('eth_getBlockByNumber', [mined.blockNumber, false]);
  // The request as the contract hands it out: source address, validator key, amount little-endian.
  const requestBytes = new Uint8Array([0x01, ...hexToBytes(B.address as `0x${string}`), ...validatorKey, 5, 0, 0, 0, 0, 0, 0, 0]);
  t.is(block.requestsHash, bytesToHex(sha256(sha256(requestBytes))));
});
