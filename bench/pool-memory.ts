/**
 * Memory of a full transaction pool: fills the pool core in-process (src/txpool/pool.ts, the class the
 * txpool actor wraps) to its limits — the prioritized layer's transaction count, then the ready and
 * sparse layers' byte capacities (`--tx-pool-layer-max-capacity`, 25 MB each by default) — with signed
 * EIP-1559 transfers, then keeps adding to show that eviction holds it there. Prints the pool's own
 * estimate of what it holds (`memorySizeOf`, what the capacities count) beside the heap and RSS growth
 * measured after garbage collection.
 *
 * Transactions are decoded as the node decodes them and passed through `structuredClone`, as they
 * arrive in the pool actor from the decode threads, so the objects measured are the ones the node keeps.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { bigIntToBytes, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { DEFAULT_POOL_OPTIONS, TransactionPool, type AdmissionContext } from '../src/txpool/pool.js';
import { decodeRawTransaction } from '../src/tasks/transaction-decode.js';
import { txRulesFor } from '../src/txpool/tx-rules.js';
import { parseFlags } from './lib/args.js';
import { fixed, log, printTable } from './lib/format.js';
import { accountFromKey, signTx, signingCommon, type Account } from './lib/signing.js';

const flags = parseFlags('dist/bench/pool-memory.js', {
  'layer-max-capacity': { default: DEFAULT_POOL_OPTIONS.layerMaxCapacity, description: 'bytes per ready/sparse layer (--tx-pool-layer-max-capacity)', min: 1 },
  'max-prioritized': { default: DEFAULT_POOL_OPTIONS.maxPrioritized, description: 'prioritized transactions (--tx-pool-max-prioritized)', min: 0 },
  'per-sender': { default: 10, description: 'consecutive nonces per sender', min: 1 },
  'data-bytes': { default: 0, description: 'calldata bytes per transaction (0: plain transfers)', min: 0 },
  'extra': { default: 5000, description: 'transactions added once full, to show eviction keeps the pool there', min: 0 },
});

const CHAIN_ID = 1337;
const common = signingCommon(CHAIN_ID);
const rules = txRulesFor(BigInt(CHAIN_ID), 'cancun');
const data = bytesToHex(new Uint8Array(flags['data-bytes']).fill(0xab));
const RICH = 10n ** 30n;

/** `node --expose-gc` is not needed: the flag can be set at run time and `gc` fetched from a fresh context. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => {
    for (let i = 0; i < 3; i++) gc();
  };
}

function sender(index: number): Account {
  return accountFromKey(bytesToHex(keccak_256(setLengthLeft(bigIntToBytes(BigInt(index) + 1n), 32))));
}

function memory(): { heap: number; external: number; rss: number } {
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, external: usage.external, rss: usage.rss };
}

const mb = (bytes: number): string => `${fixed(bytes / 1e6, 1)} MB`;

function main(): void {
  const gc = collector();
  let evicted = 0;
  const pool = new TransactionPool(
    { layerMaxCapacity: flags['layer-max-capacity'], maxPrioritized: flags['max-prioritized'] },
    (txs, reason) => {
      if (reason === 'evicted') evicted += txs.length;
    },
  );
  const ctx: AdmissionContext = { account: { nonce: 0n, balance: RICH, hasCode: false }, blockGasLimit: 30_000_000n, local: false, now: Date.now() };
  let senders = 0;
  const add = (account: Account, nonce: bigint, stateNonce: bigint): void => {
    const { raw } = signTx(common, account, {
      nonce,
      to: '0x000000000000000000000000000000000000c0fe',
      value: 1n,
      data,
      gasLimit: 21_000n + 16n * BigInt(flags['data-bytes']),
      maxFeePerGas: 2_000_000_000n + BigInt(senders % 1000),
      maxPriorityFeePerGas: 1_000_000n,
    });
    const tx = structuredClone(decodeRawTransaction(hexToBytes(raw as `0x${string}`), rules));
    pool.add(tx, { ...ctx, account: { ...ctx.account, nonce: stateNonce } });
  };

  gc();
  const before = memory();
  const started = Date.now();

  // Executable transactions until the ready layer overflows into sparse.
  while (pool.layerStats().sparse.count === 0) {
    const account = sender(senders++);
    for (let n = 0n; n < BigInt(flags['per-sender']); n++) add(account, n, 0n);
  }
  log(`prioritized and ready full after ${pool.size} transactions from ${senders} senders`);
  // Future transactions (a nonce gap before them) until the sparse layer evicts.
  while (evicted === 0) {
    const account = sender(senders++);
    for (let n = 1n; n <= BigInt(flags['per-sender']); n++) add(account, n, 0n);
  }
  const fullAt = pool.size;
  log(`sparse full (first eviction) at ${fullAt} transactions; adding ${flags.extra} more`);
  for (let i = 0; i < flags.extra; i += flags['per-sender']) {
    const account = sender(senders++);
    for (let n = 1n; n <= BigInt(flags['per-sender']); n++) add(account, n, 0n);
  }
  const fillSeconds = (Date.now() - started) / 1000;

  gc();
  const after = memory();
  const stats = pool.layerStats();
  let prioritizedBytes = 0;
  for (const entry of pool.entries()) if (entry.layer === 'prioritized') prioritizedBytes += entry.size;
  const estimated = prioritizedBytes + stats.ready.bytes + stats.sparse.bytes;
  const measured = after.heap - before.heap + (after.external - before.external);

  console.log();
  printTable(
    ['layer', 'transactions', 'estimated bytes'],
    [
      ['prioritized', String(stats.prioritized.count), mb(prioritizedBytes)],
      ['ready', String(stats.ready.count), mb(stats.ready.bytes)],
      ['sparse', String(stats.sparse.count), mb(stats.sparse.bytes)],
      ['pool', String(pool.size), mb(estimated)],
    ],
  );
  console.log();
  printTable(
    ['figure', 'value'],
    [
      ['transactions added', String(pool.size + evicted)],
      ['evicted', String(evicted)],
      ['pool size at first eviction / at end', `${fullAt} / ${pool.size}`],
      ['raw transaction bytes', String(hexToBytes(signTx(common, sender(0), { nonce: 0n, to: '0x000000000000000000000000000000000000c0fe', value: 1n, data, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }).raw as `0x${string}`).length)],
      ['estimated (memorySizeOf)', mb(estimated)],
      ['measured: heap + external growth', mb(measured)],
      ['measured per transaction', `${fixed(measured / pool.size, 0)} B`],
      ['estimated per transaction', `${fixed(estimated / pool.size, 0)} B`],
      ['measured / estimated', fixed(measured / estimated, 2)],
      ['RSS growth', mb(after.rss - before.rss)],
      ['RSS at end', mb(after.rss)],
      ['fill time', `${fixed(fillSeconds, 1)} s`],
    ],
  );
}

main();
