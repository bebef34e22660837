/**
 * Import speed of a long chain: generates `--blocks` blocks (default 10,000) of mixed value
 * transfers and contract calls with the chain core in-process, writes them as an RLP blocks file,
 * then times the real `blocks import` CLI on a fresh data path. Prints blocks/s, Mgas/s and tx/s.
 *
 * The chain is post-merge from genesis (London, terminal total difficulty 0): no ethash seals, so
 * the figures measure validation, execution and storage. The contract adds calldata to a per-caller
 * counter and logs the caller, so each call reads and writes storage and emits a log.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesToHex, hexToBytes, setLengthLeft, bigIntToBytes } from '@ethereumjs/util';
import secp256k1 from 'secp256k1';
import { Chain } from '../src/chain/chain.js';
import { chainSpecFromGenesis } from '../src/shared/execution/network-spec.js';
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { fixed, log, printTable, rate } from './lib/format.js';
import { accountFromKey, signTx, signingCommon, type Account } from './lib/signing.js';

const flags = parseFlags('dist/bench/import-speed.js', {
  blocks: { default: 10_000, description: 'blocks to generate and import', min: 1 },
  'txs-per-block': { default: 10, description: 'transactions per block (half transfers, half contract calls)', min: 1 },
  senders: { default: 50, description: 'funded sender accounts', min: 1 },
  'max-seconds': { default: 1800, description: 'abandon the run after this long', min: 10 },
});

const CHAIN_ID = 4242;
const COUNTER = '0x000000000000000000000000000000000000c0de';
/** sstore(caller, sload(caller) + calldataload(0)); log1(0, 0, caller); stop */
const COUNTER_CODE = '0x33546000350133553360006000a100';
const MAX_FEE = 100_000_000_000n;

function senders(count: number): Account[] {
  return Array.from({ length: count }, (_, i) => accountFromKey(bytesToHex(setLengthLeft(bigIntToBytes(BigInt(i + 1) * 7919n), 32))));
}

function genesisJson(accounts: Account[]): string {
  const alloc: Record<string, unknown> = { [COUNTER.slice(2)]: { balance: '0x0', code: COUNTER_CODE } };
  for (const a of accounts) alloc[a.address.slice(2)] = { balance: '0x21e19e0c9bab2400000' };
  return JSON.stringify({
    config: { chainId: CHAIN_ID, londonBlock: 0, terminalTotalDifficulty: 0 },
    nonce: '0x0',
    timestamp: '0x60000000',
    gasLimit: '0x1c9c380',
    difficulty: '0x0',
    baseFeePerGas: '0x3b9aca00',
    mixHash: '0x0000000000000000000000000000000000000000000000000000000000000000',
    coinbase: '0x0000000000000000000000000000000000000000',
    extraData: '0x',
    alloc,
  });
}

/** Builds the chain in-process and writes every block to `file`; returns totals. */
async function generate(dataPath: string, genesis: string, file: string, accounts: Account[]): Promise<{ txs: number; gas: bigint }> {
  // A throwaway chain that only feeds the file: no fsync per block (as in `blocks import`).
  const chain = await Chain.open(dataPath, await chainSpecFromGenesis(genesis), { syncEachBlock: false });
  const common = signingCommon(CHAIN_ID);
  const publicKeys = accounts.map((a) => secp256k1.publicKeyCreate(a.privateKey, false).subarray(1));
  const nonces = accounts.map(() => 0n);
  const out = openSync(file, 'w');
  let txs = 0;
  let gas = 0n;
  let senderCursor = 0;
  try {
    const perBlock = flags['txs-per-block'];
    for (let b = 0; b < flags.blocks; b++) {
      const candidates = [];
      for (let i = 0; i < perBlock; i++) {
        const s = senderCursor++ % accounts.length;
        const call = i % 2 === 1;
        const signed = signTx(common, accounts[s]!, {
          nonce: nonces[s]!++,
          to: call ? COUNTER : accounts[(s + 1) % accounts.length]!.address,
          value: call ? 0n : 1n,
          data: call ? bytesToHex(setLengthLeft(bigIntToBytes(BigInt(b + 1)), 32)) : '0x',
          gasLimit: call ? 100_000n : 21_000n,
          maxFeePerGas: MAX_FEE,
          maxPriorityFeePerGas: 1n,
        });
        candidates.push({ raw: hexToBytes(signed.raw as `0x${string}`), hash: hexToBytes(signed.hash as `0x${string}`), senderPublicKey: publicKeys[s]! });
      }
      const head = chain.getHead();
      const built = await chain.buildBlock({
        timestamp: head.timestamp + 12n,
        coinbase: new Uint8Array(20),
        extraData: new Uint8Array(),
        maxBuildMs: 60_000,
        transactions: candidates,
      });
      if (built.rejected.length > 0) throw new Error(`block ${b + 1}: ${built.rejected.length} transactions rejected`);
      // A post-merge header: block building writes the QBFT difficulty of 1.
      built.headerData.difficulty = 0n;
      await chain.importBuilt(built, new Uint8Array());
      const block = await chain.store.getBlock(chain.getHead().hash);
      writeSync(out, block!.serialize());
      txs += block!.transactions.length;
      gas += block!.header.gasUsed;
      if ((b + 1) % 1000 === 0) log(`generated ${b + 1} blocks`);
    }
  } finally {
    closeSync(out);
    await chain.close();
  }
  return { txs, gas };
}

function runImport(dataPath: string, genesisFile: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const bin = new URL('../../bin/run.js', import.meta.url).pathname;
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, `--data-path=${dataPath}`, `--genesis-file=${genesisFile}`, 'blocks', 'import', `--from=${file}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stopChild = onCleanup('blocks import', async () => {
      child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => {
      stopChild();
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

runBenchmark(async () => {
  const work = mkdtempSync(join(tmpdir(), 'basalt-import-bench-'));
  onCleanup('temporary files', async () => rmSync(work, { recursive: true, force: true }));
  const accounts = senders(flags.senders);
  const genesis = genesisJson(accounts);
  const genesisFile = join(work, 'genesis.json');
  writeFileSync(genesisFile, genesis);
  const blocksFile = join(work, 'chain.blocks');

  log(`generating ${flags.blocks} blocks of ${flags['txs-per-block']} transactions`);
  const generationStart = Date.now();
  const totals = await generate(join(work, 'source'), genesis, blocksFile, accounts);
  const generationMs = Date.now() - generationStart;
  log(`generated in ${fixed(generationMs / 1000)} s: ${totals.txs} transactions, ${fixed(Number(totals.gas) / 1e6)} Mgas`);

  log('importing with `basalt blocks import`');
  const run = await runImport(join(work, 'target'), genesisFile, blocksFile);
  if (run.code !== 0) throw new Error(`blocks import exited with ${run.code}:\n${run.stdout}\n${run.stderr}`);
  const summary = /Import complete: .* in ([\d.]+) s/.exec(run.stdout);
  const loopMs = summary ? Number(summary[1]) * 1000 : Number.NaN;
  console.log();
  printTable(
    ['measure', 'blocks/s', 'Mgas/s', 'tx/s', 'seconds'],
    [
      ['import loop (validate + execute + store)', fixed(rate(flags.blocks, loopMs)), fixed(rate(Number(totals.gas) / 1e6, loopMs), 2), fixed(rate(totals.txs, loopMs)), fixed(loopMs / 1000)],
      ['whole command (incl. start-up, file read)', fixed(rate(flags.blocks, run.ms)), fixed(rate(Number(totals.gas) / 1e6, run.ms), 2), fixed(rate(totals.txs, run.ms)), fixed(run.ms / 1000)],
      ['generation (build + import in-process)', fixed(rate(flags.blocks, generationMs)), fixed(rate(Number(totals.gas) / 1e6, generationMs), 2), fixed(rate(totals.txs, generationMs)), fixed(generationMs / 1000)],
    ],
  );
  console.log(`\n${run.stdout.trim().split('\n').pop()}`);
}, flags['max-seconds']);
