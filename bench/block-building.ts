/**
 * Block building and import of ERC-20 transfers with the chain core in-process, no node, no pool, no
 * HTTP: what one transaction costs the chain thread. Block 1 deploys the peer benchmarks' token and
 * mints to every sender; then `--blocks` blocks of `--txs-per-block` token transfers to fresh
 * recipients are built (as consensus asks the chain to) and stored as the head, and a second chain
 * imports the same blocks as a follower would. Prints µs per transaction for each phase.
 *
 *   npm run build && node dist/bench/block-building.js [--blocks=5] [--txs-per-block=2000] [--senders=200]
 */
// First, as in the chain thread's entry (workers/chain.worker.ts): before @noble/hashes is evaluated.
import '../src/shared/util/hex-builtins.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bigIntToBytes, bytesToHex, hexToBytes, setLengthLeft } from '@ethereumjs/util';
import { getCreateAddress, toBeHex } from 'ethers';
import secp256k1 from 'secp256k1';
import { Chain } from '../src/chain/chain.js';
import { chainSpecFromGenesis } from '../src/shared/execution/network-spec.js';
import type { PoolTxForBlock } from '../src/shared/actors/messages.js';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { TOKEN_DEPLOY_CODE, tokenInterface } from './lib/contracts.js';
import { fixed, log, printTable } from './lib/format.js';
import { accountFromKey, signTx, signingCommon, type Account } from './lib/signing.js';

const flags = parseFlags('dist/bench/block-building.js', {
  blocks: { default: 5, min: 1, description: 'blocks of token transfers' },
  'txs-per-block': { default: 2000, min: 1, description: 'token transfers per block' },
  senders: { default: 200, min: 1, description: 'sending accounts' },
  'skip-import': { default: false, description: 'build only, no follower (e.g. to profile building alone)' },
  'cpu-prof': { default: '', description: 'write a CPU profile of the measured blocks (signing and setup left out) to this file' },
  'alloc-prof': { default: '', description: 'write a sampled allocation profile (.heapprofile) of the measured blocks to this file' },
  rounds: { default: 1, min: 1, description: 'times the whole measurement runs (fresh chains each time)' },
  'max-seconds': { default: 900, min: 10, description: 'ceiling on the whole run' },
});

const CHAIN_ID = 4243;
const MAX_FEE = 100_000_000_000n;
const TOKEN_TRANSFER_GAS = 120_000n;

function genesisJson(accounts: Account[]): string {
  const alloc: Record<string, unknown> = {};
  for (const a of accounts) alloc[a.address.slice(2)] = { balance: '0x21e19e0c9bab2400000' };
  const forks = ['homestead', 'eip150', 'eip155', 'eip158', 'byzantium', 'constantinople', 'petersburg', 'istanbul', 'berlin', 'london'];
  const times = ['shanghai', 'cancun', 'prague', 'osaka'];
  return JSON.stringify({
    config: {
      chainId: CHAIN_ID,
      ...Object.fromEntries(forks.map((f) => [`${f}Block`, 0])),
      ...Object.fromEntries(times.map((f) => [`${f}Time`, 0])),
      terminalTotalDifficulty: 0,
    },
    nonce: '0x0',
    timestamp: '0x60000000',
    gasLimit: '0x1fffffffffffff',
    difficulty: '0x0',
    baseFeePerGas: '0x3b9aca00',
    mixHash: '0x0000000000000000000000000000000000000000000000000000000000000000',
    coinbase: '0x0000000000000000000000000000000000000000',
    extraData: '0x',
    alloc,
  });
}

interface PhaseTimes {
  wallMs: number;
  cpuMs: number;
}

/**
 * CPU time of this process's main thread, ms (Linux: /proc, 10 ms ticks), or of the whole process
 * elsewhere. The main thread's alone leaves out V8's helper threads (parallel GC, compilation), and
 * on a shared machine says more than wall time.
 */
function mainThreadCpuMs(): number {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the command name.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  }
}

async function timed<T>(times: PhaseTimes, fn: () => Promise<T>): Promise<T> {
  const wall = performance.now();
  const cpu = mainThreadCpuMs();
  try {
    return await fn();
  } finally {
    times.wallMs += performance.now() - wall;
    times.cpuMs += mainThreadCpuMs() - cpu;
  }
}

/** Builds a block of `transactions` on the head of `chain` and stores it; answers its encoding. */
async function buildAndStore(chain: Chain, transactions: PoolTxForBlock[], build: PhaseTimes, store: PhaseTimes): Promise<Uint8Array> {
  const head = chain.getHead();
  const built = await timed(build, () =>
    chain.buildBlock({ timestamp: head.timestamp + 1n, coinbase: new Uint8Array(20), extraData: new Uint8Array(), maxBuildMs: 600_000, transactions }),
  );
  if (built.rejected.length > 0) throw new Error(`${built.rejected.length} transactions rejected: ${JSON.stringify(built.rejected[0])}`);
  if (built.block.transactions.length !== transactions.length) throw new Error(`only ${built.block.transactions.length} of ${transactions.length} included`);
  // A post-merge header: block building writes the QBFT difficulty of 1.
  built.headerData.difficulty = 0n;
  await timed(store, () => chain.importBuilt(built, new Uint8Array()));
  const block = await chain.store.getBlock(chain.getHead().hash);
  return block!.serialize();
}

async function round(accounts: Account[]): Promise<{ build: PhaseTimes; store: PhaseTimes; imported: PhaseTimes; txs: number; stateRoot: string }> {
  const work = mkdtempSync(join(tmpdir(), 'basalt-build-bench-'));
  const removeWork = onCleanup('temporary chains', async () => rmSync(work, { recursive: true, force: true }));
  const spec = await chainSpecFromGenesis(genesisJson(accounts));
  const builder = await Chain.open(join(work, 'builder'), spec, { syncEachBlock: false });
  const follower = await Chain.open(join(work, 'follower'), await chainSpecFromGenesis(genesisJson(accounts)), { syncEachBlock: false });
  try {
    const common = signingCommon(CHAIN_ID);
    const publicKeys = accounts.map((a) => secp256k1.publicKeyCreate(a.privateKey, false).subarray(1));
    const nonces = accounts.map(() => 0n);
    const candidate = (s: number, fields: { to?: string; data: string; gasLimit: bigint }): PoolTxForBlock => {
      const signed = signTx(common, accounts[s]!, { nonce: nonces[s]!++, value: 0n, maxFeePerGas: MAX_FEE, maxPriorityFeePerGas: 1n, ...fields });
      return { raw: hexToBytes(signed.raw as `0x${string}`), hash: hexToBytes(signed.hash as `0x${string}`), senderPublicKey: publicKeys[s]! };
    };
    const token = getCreateAddress({ from: accounts[0]!.address, nonce: 0 });
    const setup = [candidate(0, { data: TOKEN_DEPLOY_CODE, gasLimit: 1_000_000n })];
    accounts.forEach((a, s) => setup.push(candidate(s, { to: token, data: tokenInterface.encodeFunctionData('mint', [a.address, 10n ** 24n]), gasLimit: 100_000n })));
    const unmeasured = { wallMs: 0, cpuMs: 0 };
    await follower.importBlock(spec.decodeBlock(await buildAndStore(builder, setup, unmeasured, unmeasured)));

    const blocks: PoolTxForBlock[][] = [];
    let recipient = 0n;
    for (let b = 0; b < flags.blocks; b++) {
      const txs: PoolTxForBlock[] = [];
      for (let i = 0; i < flags['txs-per-block']; i++) {
        const to = toBeHex(0x5eed0000n * 2n ** 128n + recipient++, 20);
        txs.push(candidate(i % accounts.length, { to: token, data: tokenInterface.encodeFunctionData('transfer', [to, 1n]), gasLimit: TOKEN_TRANSFER_GAS }));
      }
      blocks.push(txs);
    }
    log(`signed ${flags.blocks} × ${flags['txs-per-block']} token transfers`);

    const build = { wallMs: 0, cpuMs: 0 };
    const store = { wallMs: 0, cpuMs: 0 };
    const imported = { wallMs: 0, cpuMs: 0 };
    const profiler = flags['cpu-prof'] === '' && flags['alloc-prof'] === '' ? undefined : new Session();
    if (profiler) {
      profiler.connect();
      if (flags['cpu-prof'] !== '') await profiler.post('Profiler.enable').then(() => profiler.post('Profiler.start'));
      if (flags['alloc-prof'] !== '') await profiler.post('HeapProfiler.enable').then(() => profiler.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }));
    }
    for (const txs of blocks) {
      const rlp = await buildAndStore(builder, txs, build, store);
      if (!flags['skip-import']) await timed(imported, () => follower.importBlock(spec.decodeBlock(rlp)));
    }
    if (profiler) {
      if (flags['cpu-prof'] !== '') writeFileSync(flags['cpu-prof'], JSON.stringify((await profiler.post('Profiler.stop')).profile));
      if (flags['alloc-prof'] !== '') writeFileSync(flags['alloc-prof'], JSON.stringify((await profiler.post('HeapProfiler.stopSampling')).profile));
      profiler.disconnect();
    }
    const stateRoot = bytesToHex(builder.getHead().stateRoot);
    if (!flags['skip-import'] && stateRoot !== bytesToHex(follower.getHead().stateRoot)) throw new Error('the follower reached another state root than the builder');
    return { build, store, imported, txs: flags.blocks * flags['txs-per-block'], stateRoot };
  } finally {
    await builder.close();
    await follower.close();
    rmSync(work, { recursive: true, force: true });
    removeWork();
  }
}

runBenchmark(async () => {
  const accounts = Array.from({ length: flags.senders }, (_, i) => accountFromKey(bytesToHex(setLengthLeft(bigIntToBytes(BigInt(i + 1) * 7919n), 32))));
  const rows: string[][] = [];
  for (let r = 1; r <= flags.rounds; r++) {
    const { build, store, imported, txs, stateRoot } = await round(accounts);
    const perTx = (ms: number): string => fixed((ms * 1000) / txs, 0);
    log(`round ${r}: state root ${stateRoot}`);
    rows.push([String(r), perTx(build.wallMs), perTx(build.cpuMs), perTx(store.wallMs), perTx(imported.wallMs), perTx(imported.cpuMs)]);
  }
  console.log(`\n${flags.blocks} blocks × ${flags['txs-per-block']} ERC-20 transfers, ${flags.senders} senders; µs per transaction`);
  printTable(['round', 'build', 'build CPU', 'store built', 'import', 'import CPU'], rows);
  console.log('(CPU: of the main thread, which runs the chain as the chain thread does in the node)');
}, flags['max-seconds']);
