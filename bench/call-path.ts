/**
 * The cost of one eth_call on a state reader, without HTTP or threads: a dev chain in this process
 * with the peer benchmarks' ERC-20 deployed, a StateReader wired to it (test/helpers/in-process-reader.ts),
 * and `balanceOf(holder)` at `latest` answered one after the other (parameters parsed, answer as JSON
 * text, as a transport hands it on). Prints µs per call (wall and CPU) for each round; run it under `--cpu-prof` to
 * see where a call goes. Asserts nothing.
 *
 *   npm run build && node dist/bench/call-path.js [--calls=20000] [--rounds=5]
 */
// First, as in a state reader thread's entry (workers/reader.worker.ts): before @noble/hashes is evaluated.
import '../src/shared/util/hex-builtins.js';
import { bytesToHex } from '@ethereumjs/util';
import type { Chain } from '../src/chain/chain.js';
import { lookupMethod } from '../src/shared/rpc/registry.js';
import { serveMethodsAsJsonText } from '../src/shared/rpc/dispatch.js';
import { tokenBalanceOfCallData, tokenDeployCode, tokenMintCallData } from '../test/helpers/contracts.js';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { candidate, openDevChain, proposeAndCommit, signedTx } from '../test/helpers/dev-chain.js';
import { openInProcessReader } from '../test/helpers/in-process-reader.js';
import { removeDataPath, tempDataPath } from '../test/helpers/node-process.js';
import { ownCpuMsSince } from './lib/proc.js';
import { parseFlags } from './lib/args.js';
import { fixed, printTable } from './lib/format.js';

const flags = parseFlags('dist/bench/call-path.js', {
  calls: { default: 20_000, min: 1, description: 'calls per round' },
  rounds: { default: 5, min: 1, description: 'rounds, each timed on its own (the first warms up)' },
});

const path = tempDataPath();
let chain: Chain | undefined;
try {
  chain = await openDevChain(path);
  const opened = chain;
  const { reader } = await openInProcessReader(opened, 'bench');
  const serve = serveMethodsAsJsonText('reader', reader.handlers);

  const key = DEV_ACCOUNTS[0].privateKey;
  const holder = DEV_ACCOUNTS[0].address;
  await proposeAndCommit(opened, [candidate(signedTx(key, 0n, { data: tokenDeployCode() }))]);
  const token = bytesToHex((await opened.store.getReceipts(opened.getHead().hash))![0]!.contractAddress!);
  await proposeAndCommit(opened, [candidate(signedTx(key, 1n, { to: token, data: tokenMintCallData(holder, 10n ** 24n) }))]);

  const spec = lookupMethod('eth_call')!;
  const raw = [{ to: token, data: tokenBalanceOfCallData(holder) }, 'latest'];
  const expected = JSON.stringify(`0x${(10n ** 24n).toString(16).padStart(64, '0')}`);
  const first = await serve('eth_call', spec.parseParams(raw) as never);
  if (first !== expected) throw new Error(`balanceOf answered ${first}, expected ${expected}`);

  const rows: string[][] = [];
  for (let round = 1; round <= flags.rounds; round++) {
    const started = process.hrtime.bigint();
    const cpuStarted = process.cpuUsage();
    for (let i = 0; i < flags.calls; i++) await serve('eth_call', spec.parseParams(raw) as never);
    const cpuMs = ownCpuMsSince(cpuStarted);
    const micros = Number(process.hrtime.bigint() - started) / 1000 / flags.calls;
    rows.push([String(round), fixed(micros, 1), fixed((cpuMs * 1000) / flags.calls, 1), fixed(1_000_000 / micros, 0)]);
  }
  // CPU time counts what V8's helper threads (GC) spent too: on a loaded machine it moves less than wall time.
  printTable(['round', 'µs/call', 'CPU µs/call', 'calls/s'], rows);
} finally {
  await chain?.close();
  removeDataPath(path);
}
