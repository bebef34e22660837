/**
 * Transaction throughput of a fresh dev node: S funded senders, T pre-signed transactions submitted
 * with raw `eth_sendRawTransaction` bodies over keep-alive HTTP at a fixed number of requests in
 * flight; workloads one after the other: (a) plain transfers, (b) calls to the storeAndLog contract
 * (one SSTORE and one log each), (c) ERC-20 transfers of the peer benchmarks' token to a fresh
 * recipient each (two balance slots, one of them new, and one Transfer event). With `--bursts=N` each
 * workload runs N times on the same node: the first burst meets a fresh node's unoptimized code, the
 * later ones warm code. Prints figures; asserts nothing.
 *
 *   npm run build && node dist/bench/tx-throughput.js [--senders=200] [--txs=10000] [--concurrency=64] [--workloads=erc20] [--phase=0.25] [--bursts=1]
 */
import { resolve } from 'node:path';
import { getCreateAddress, hexlify, randomBytes, toBeHex, zeroPadValue } from 'ethers';
import { DEV_ACCOUNTS } from '../test/helpers/dev-accounts.js';
import { storeAndLogDeployCode } from '../test/helpers/contracts.js';
import { parseFlags } from './lib/args.js';
import { TOKEN_DEPLOY_CODE, tokenInterface } from './lib/contracts.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { startBenchNode } from './lib/dev-node.js';
import { fixed, log, megabytes, printTable, rate } from './lib/format.js';
import { jsonPostRequest, rpcBody, RpcClient, runClosedLoop, type LoadJob } from './lib/http-client.js';
import { blockFill, includedRate, sendAllOrThrow, sleep, startInclusionWatch, tallyError, waitForNonces, type InclusionFigures } from './lib/tx-load.js';
import { ownCpuMsSince, readCpuMs, readThreadCpuMs, RssSampler, threadCpuSince } from './lib/proc.js';
import { describeThreadSamples, PerfRecording } from './lib/perf-threads.js';
import { HEAP_SNAPSHOT_DIR_ENV } from '../src/main/supervisor/memory.js';
import { describeNodeMemory, NodeMemoryLog } from './lib/node-memory-log.js';
import { accountFromKey, randomAccount, signingCommon, signTx, type Account, type SignedTx, type UnsignedFields } from './lib/signing.js';
import { LatencyRecorder, MessageTally, summarizeLatencies, type LatencySummary } from './lib/stats.js';
import type { Common } from '@ethereumjs/common';

const HOST = '127.0.0.1';
const GWEI = 10n ** 9n;
const TRANSFER_GAS = 21_000n;
/** Above the storing call's worst case (~47k: cold zero→non-zero SSTORE plus LOG1). */
const CONTRACT_CALL_GAS = 100_000n;
/** Above a token transfer's worst case (~52k: a cold zero→non-zero balance slot plus LOG3). */
const TOKEN_TRANSFER_GAS = 120_000n;
/** Tokens minted to each sender: far more than it can send one at a time. */
const TOKEN_MINT = 10n ** 24n;
const WORKLOADS = ['transfers', 'storeAndLog', 'erc20'] as const;
type WorkloadName = (typeof WORKLOADS)[number];
/** Gas each workload's transaction may use, for the senders' budgets. */
const WORKLOAD_GAS: Record<WorkloadName, bigint> = { transfers: TRANSFER_GAS, storeAndLog: CONTRACT_CALL_GAS, erc20: TOKEN_TRANSFER_GAS };
const POLL_MS = 100;
/** Once submission ended: fine enough to time the last block against its proposer's timer. */
const POLL_MS_AFTER_SUBMISSION = 5;

const flags = parseFlags('dist/bench/tx-throughput.js', {
  senders: { default: 200, min: 1, description: 'number of sending accounts' },
  txs: { default: 10_000, min: 1, description: 'transactions per workload, spread over the senders' },
  concurrency: { default: 64, min: 1, description: 'eth_sendRawTransaction requests in flight' },
  'rpc-http-workers': { default: 0, min: 0, description: 'node HTTP worker threads (0: the node default)' },
  'include-timeout': { default: 60, min: 1, description: 'seconds to wait for inclusion once submission ended' },
  'cpu-prof-dir': { default: '', description: 'run the node with --cpu-prof, profiles into this directory' },
  'heap-snapshot-dir': { default: '', description: 'after the load, write a heap snapshot of every node thread into this directory' },
  perf: { default: false, description: "sample the node with Linux perf during each workload and print how each thread's samples split: running, compiling, collecting garbage, in the kernel" },
  'node-args': { default: '', description: "more node options, space-separated (e.g. '--metrics-enabled')" },
  build: { default: '', description: "another checkout's directory whose built node runs instead of this one (e.g. main's, to compare)" },
  workloads: { default: WORKLOADS.join(','), description: `comma-separated, run in this order: ${WORKLOADS.join(', ')}` },
  bursts: {
    default: 1,
    min: 1,
    description: "bursts of each workload, one after the other on the same node: the first runs code V8 has not optimized yet (a fresh node's), the later ones warm code",
  },
  phase: {
    default: 0,
    min: 0,
    below: 1,
    description: 'start each burst this many seconds (0–1) before the next whole second, where a one-second QBFT block timer fires; 0: as soon as signed',
  },
  'max-seconds': { default: 300, min: 10, description: 'ceiling on the whole run' },
});
const workloads = flags.workloads.split(',').map((name) => {
  const known = WORKLOADS.find((w) => w.toLowerCase() === name.trim().toLowerCase());
  if (known === undefined) {
    console.error(`unknown workload "${name}": choose from ${WORKLOADS.join(', ')}`);
    process.exit(2);
  }
  return known;
});

interface WorkloadFigures {
  name: string;
  count: number;
  accepted: number;
  rejected: MessageTally;
  transportErrors: number;
  submitMs: number;
  latency: LatencySummary;
  inclusion: InclusionFigures;
  peakRssKb: number | undefined;
  /** Node CPU (all threads) from submission start until the last transaction was included, per accepted transaction. */
  cpuMsPerTx: number;
  /** Every included transaction's receipt, then the transaction itself, read back afterwards. */
  receipts: ReadBackFigures;
  transactions: ReadBackFigures;
}

interface ReadBackFigures {
  read: number;
  missing: number;
  wallMs: number;
  latency: LatencySummary;
}

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const started = performance.now();
  const workers = flags['rpc-http-workers'];
  const nodeArgs = [...(workers > 0 ? [`--rpc-http-workers=${workers}`] : []), ...flags['node-args'].split(' ').filter((arg) => arg !== '')];
  log(`starting a dev node${flags.build === '' ? '' : ` from ${flags.build}`}${nodeArgs.length > 0 ? ` with ${nodeArgs.join(' ')}` : ''}`);
  const memoryLog = new NodeMemoryLog();
  const bench = await startBenchNode({
    args: nodeArgs,
    cpuProfileDir: flags['cpu-prof-dir'] || undefined,
    ...(flags.build === '' ? {} : { bin: `${flags.build}/bin/run.js` }),
    // The node logs its memory every second: idle after start, each thread's share at the peak, after load.
    env: { ...NodeMemoryLog.env(1), ...(flags['heap-snapshot-dir'] ? { [HEAP_SNAPSHOT_DIR_ENV]: resolve(flags['heap-snapshot-dir']) } : {}) },
    onLine: memoryLog.onLine,
  });
  const port = bench.port;
  const rpc = new RpcClient(HOST, port);
  onCleanup('setup RPC connection', () => rpc.close());
  const rss = new RssSampler(bench.pid);
  onCleanup('RSS sampler', () => rss.stop());
  log(`node pid ${bench.pid} serving on ${bench.url}, RSS ${megabytes(rss.current())}`);
  log(`node memory after start: ${describeNodeMemory(await memoryLog.next())}`);

  const chainId = Number(await rpc.call<string>('eth_chainId'));
  const common = signingCommon(chainId);
  const head = await rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
  const baseFee = BigInt(head.baseFeePerGas ?? '0x0');
  const maxPriorityFeePerGas = 1n * GWEI;
  // Base fee can only fall on this chain (blocks stay far below the gas target), so this always suffices.
  const maxFeePerGas = 2n * baseFee + maxPriorityFeePerGas;
  log(`chain ${chainId}, base fee ${baseFee} wei; transactions pay maxFee ${maxFeePerGas}, tip ${maxPriorityFeePerGas}`);

  const senders = Array.from({ length: flags.senders }, () => randomAccount());
  const perSender = (index: number): number => Math.floor(flags.txs / senders.length) + (index < flags.txs % senders.length ? 1 : 0);
  const gasPerSender = workloads.reduce((sum, w) => sum + WORKLOAD_GAS[w], 0n);
  const budget = BigInt(perSender(0) * flags.bursts) * gasPerSender * maxFeePerGas * 2n + 10n ** 17n;
  const contracts = await fundAndDeploy(rpc, common, port, senders, budget, maxFeePerGas, maxPriorityFeePerGas, workloads.includes('erc20'));

  const nextNonce = senders.map(() => 0n);
  const results: WorkloadFigures[] = [];
  const run = (name: string, fieldsFor: Parameters<typeof runWorkload>[9]): Promise<WorkloadFigures> =>
    runWorkload(name, rpc, common, port, senders, perSender, nextNonce, rss, memoryLog, fieldsFor);
  // A recipient address no account or token balance has: a random prefix, then the sequence number.
  const recipientPrefix = hexlify(randomBytes(8));
  // Counted across bursts, so that every burst writes new slots and pays new recipients as the first did.
  let stored = 0;
  let tokenRecipients = 0;
  const workloadRuns: Record<WorkloadName, { name: string; fieldsFor: Parameters<typeof run>[1] }> = {
    transfers: { name: 'transfers', fieldsFor: (index) => ({ to: senders[(index + 1) % senders.length]!.address, value: 1n, gasLimit: TRANSFER_GAS }) },
    storeAndLog: {
      name: 'storeAndLog calls',
      fieldsFor: () => ({ to: contracts.storeAndLog, value: 0n, data: zeroPadValue(toBeHex(++stored), 32), gasLimit: CONTRACT_CALL_GAS }),
    },
    erc20: {
      name: 'ERC-20 transfers',
      fieldsFor: () => ({
        to: contracts.token,
        value: 0n,
        data: tokenInterface.encodeFunctionData('transfer', [recipientPrefix + toBeHex(tokenRecipients++, 12).slice(2), 1n]),
        gasLimit: TOKEN_TRANSFER_GAS,
      }),
    },
  };
  for (const workload of workloads) {
    const { name, fieldsFor } = workloadRuns[workload];
    for (let burst = 1; burst <= flags.bursts; burst++) results.push(await run(flags.bursts > 1 ? `${name}, burst ${burst}` : name, fieldsFor));
  }

  console.log('\n=== summary ===');
  console.log(`senders ${senders.length}, ${flags.txs} transactions per workload, ${flags.concurrency} in flight, node HTTP workers: ${workers > 0 ? workers : 'default'}`);
  printTable(
    ['workload', 'accepted', 'submitted tx/s', 'included tx/s', 'all included after', 'p50 ms', 'p90 ms', 'p99 ms', 'rejected', 'peak RSS', 'node CPU ms/tx', 'receipts/s', 'tx by hash/s'],
    results.map((r) => [
      r.name,
      `${r.accepted}/${r.count}`,
      fixed(rate(r.accepted, r.submitMs)),
      fixed(includedRate(r.inclusion)),
      r.inclusion.allIncludedAfterMs === undefined ? `${r.inclusion.notIncluded} missing` : `${fixed(r.inclusion.allIncludedAfterMs / 1000, 2)} s`,
      fixed(r.latency.p50, 2),
      fixed(r.latency.p90, 2),
      fixed(r.latency.p99, 2),
      String(r.rejected.total + r.transportErrors),
      megabytes(r.peakRssKb),
      fixed(r.cpuMsPerTx, 3),
      fixed(rate(r.receipts.read, r.receipts.wallMs)),
      fixed(rate(r.transactions.read, r.transactions.wallMs)),
    ]),
  );
  await memoryLog.next();
  log(`node memory after load: ${describeNodeMemory(memoryLog.latest)}`);
  if (flags['heap-snapshot-dir']) {
    process.kill(bench.pid, 'SIGUSR2');
    const written = /Heap snapshots written: .*|Could not write heap snapshots.*/;
    while (!written.test(bench.output())) await new Promise((r) => setTimeout(r, 200));
    log(written.exec(bench.output())![0]);
  }
  log(`total run time ${fixed((performance.now() - started) / 1000)} s; stopping the node`);
  rss.stop();
  await bench.stop();
}

/**
 * Sends every sender `budget` wei from the dev accounts and deploys the storeAndLog contract and the
 * token, all in one batch, then, with `mintTokens`, mints tokens to every sender; waits until each
 * batch is mined. Returns the contracts' addresses.
 */
async function fundAndDeploy(
  rpc: RpcClient,
  common: Common,
  port: number,
  senders: Account[],
  budget: bigint,
  maxFeePerGas: bigint,
  maxPriorityFeePerGas: bigint,
  mintTokens: boolean,
): Promise<{ storeAndLog: string; token: string }> {
  const funders = DEV_ACCOUNTS.map((a) => accountFromKey(a.privateKey));
  const nonces = await Promise.all(funders.map(async (f) => BigInt(await rpc.call<string>('eth_getTransactionCount', [f.address, 'latest']))));
  const signed: SignedTx[] = [];

  const deployer = funders[0]!;
  const fees = { maxFeePerGas, maxPriorityFeePerGas };
  const storeAndLog = getCreateAddress({ from: deployer.address, nonce: nonces[0]! }).toLowerCase();
  signed.push(signTx(common, deployer, { nonce: nonces[0]!++, value: 0n, data: storeAndLogDeployCode(), gasLimit: 200_000n, ...fees }));
  const token = getCreateAddress({ from: deployer.address, nonce: nonces[0]! }).toLowerCase();
  signed.push(signTx(common, deployer, { nonce: nonces[0]!++, value: 0n, data: TOKEN_DEPLOY_CODE, gasLimit: 1_000_000n, ...fees }));
  const owed = funders.map(() => 0n);
  senders.forEach((sender, index) => {
    const f = index % funders.length;
    owed[f]! += budget + TRANSFER_GAS * maxFeePerGas;
    signed.push(signTx(common, funders[f]!, { nonce: nonces[f]!++, to: sender.address, value: budget, gasLimit: TRANSFER_GAS, ...fees }));
  });
  for (const [f, funder] of funders.entries()) {
    const balance = BigInt(await rpc.call<string>('eth_getBalance', [funder.address, 'latest']));
    if (balance < owed[f]!) throw new Error(`dev account ${funder.address} holds ${balance} wei, funding needs ${owed[f]}: use fewer senders or transactions`);
  }

  log(`funding ${senders.length} senders with ${budget} wei each, deploying storeAndLog at ${storeAndLog} and the token at ${token}`);
  await submitAndAwait(rpc, port, funders, nonces, signed, 'funding');
  for (const contract of [storeAndLog, token]) {
    if ((await rpc.call<string>('eth_getCode', [contract, 'latest'])) === '0x') throw new Error(`the contract at ${contract} was not deployed`);
  }
  if (mintTokens) {
    // Only now: a mint ahead of the deployment would call an empty account and succeed doing nothing.
    const mints = senders.map((sender, index) => {
      const f = index % funders.length;
      const data = tokenInterface.encodeFunctionData('mint', [sender.address, TOKEN_MINT]);
      return signTx(common, funders[f]!, { nonce: nonces[f]!++, to: token, value: 0n, data, gasLimit: 100_000n, ...fees });
    });
    log(`minting ${TOKEN_MINT} tokens to each sender`);
    await submitAndAwait(rpc, port, funders, nonces, mints, 'minting');
    const last = senders[senders.length - 1]!.address;
    const balance = BigInt(await rpc.call<string>('eth_call', [{ to: token, data: tokenInterface.encodeFunctionData('balanceOf', [last]) }, 'latest']));
    if (balance !== TOKEN_MINT) throw new Error(`sender ${last} holds ${balance} tokens after minting, not ${TOKEN_MINT}`);
  }
  log('funded and deployed');
  return { storeAndLog, token };
}

/** Submits `signed` (the funders' transactions up to `nonces`) and waits until all are mined. */
async function submitAndAwait(rpc: RpcClient, port: number, funders: Account[], nonces: bigint[], signed: SignedTx[], what: string): Promise<void> {
  await sendAllOrThrow(HOST, port, signed, Math.min(16, flags.concurrency), what);
  await waitForNonces(rpc, funders, nonces, 60_000, `${what} transactions`);
}

async function runWorkload(
  name: string,
  rpc: RpcClient,
  common: Common,
  port: number,
  senders: Account[],
  perSender: (senderIndex: number) => number,
  nextNonce: bigint[],
  rss: RssSampler,
  memoryLog: NodeMemoryLog,
  fieldsFor: (senderIndex: number) => Omit<UnsignedFields, 'nonce' | 'maxFeePerGas' | 'maxPriorityFeePerGas'>,
): Promise<WorkloadFigures> {
  console.log(`\n=== workload: ${name} ===`);
  const head = await rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
  const maxPriorityFeePerGas = 1n * GWEI;
  const maxFeePerGas = 2n * BigInt(head.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas;

  // Nonce-major order: every sender's nonce n goes out before anyone's nonce n+1, so with more
  // senders than requests in flight no transaction arrives ahead of its predecessor.
  const signStarted = performance.now();
  const signed: SignedTx[] = [];
  const rounds = Math.max(...senders.map((_, i) => perSender(i)));
  for (let round = 0; round < rounds; round++) {
    for (let s = 0; s < senders.length; s++) {
      if (round >= perSender(s)) continue;
      signed.push(signTx(common, senders[s]!, { ...fieldsFor(s), nonce: nextNonce[s]!++, maxFeePerGas, maxPriorityFeePerGas }));
    }
  }
  const requests = signed.map((tx, i) => jsonPostRequest(HOST, port, rpcBody('eth_sendRawTransaction', [tx.raw], i + 1)));
  const signMs = performance.now() - signStarted;
  log(`signed and encoded ${signed.length} transactions in ${fixed(signMs / 1000, 2)} s (${fixed(rate(signed.length, signMs), 0)} tx/s; excluded from the figures)`);

  const pending = new Set(signed.map((tx) => tx.hash));
  const fromBlock = Number(await rpc.call<string>('eth_blockNumber')) + 1;
  rss.resetPeak();
  memoryLog.resetPeak();
  const cpuAtStart = readCpuMs(rss.pid);
  const threadCpuAtStart = readThreadCpuMs(rss.pid);
  const perf = flags.perf ? await PerfRecording.start(rss.pid, log) : undefined;
  const latencies = new LatencyRecorder();
  const rejected = new MessageTally();
  let accepted = 0;
  let hashMismatches = 0;

  // The dev network's block timer fires on whole seconds: how long before it a burst starts decides
  // whether its last transactions wait for the next period, the largest spread between runs.
  if (flags.phase > 0) await sleep((2_000 - flags.phase * 1_000 - (Date.now() % 1_000)) % 1_000);
  const firstSendWallMs = Date.now();
  const generatorCpuAtStart = process.cpuUsage();
  const { submissionStarted, submissionEnded, result: watching } = startInclusionWatch(HOST, port, {
    fromBlock,
    pending,
    includeTimeoutSeconds: flags['include-timeout'],
    maxSeconds: flags['max-seconds'],
    pollMs: POLL_MS,
    pollMsAfterSubmission: POLL_MS_AFTER_SUBMISSION,
  });

  let next = 0;
  const submission = await runClosedLoop({ host: HOST, port, connections: flags.concurrency, maxRunMs: 120_000 }, (): LoadJob | undefined => {
    const index = next++;
    const bytes = requests[index];
    if (!bytes) return undefined;
    return {
      bytes,
      onAnswer(answer, latencyMs) {
        latencies.add(latencyMs);
        if (answer.status !== 200) {
          rejected.add(`HTTP ${answer.status}`);
          pending.delete(signed[index]!.hash);
        } else if (tallyError(answer.body, rejected)) {
          accepted++;
          if (!answer.body.includes(signed[index]!.hash)) hashMismatches++;
        } else {
          pending.delete(signed[index]!.hash);
        }
      },
    };
  });
  submissionEnded();
  const submissionEndedWallMs = Date.now();
  const generatorCpuMs = ownCpuMsSince(generatorCpuAtStart);
  const latency = summarizeLatencies(latencies);
  log(`first send ${1_000 - (firstSendWallMs % 1_000)} ms before the next whole second (a one-second period's block timer)`);
  log(
    `submitted: ${accepted} accepted of ${signed.length} in ${fixed(submission.wallMs / 1000, 2)} s → ${fixed(rate(accepted, submission.wallMs))} tx/s; ` +
      `latency p50 ${fixed(latency.p50, 2)} ms, p90 ${fixed(latency.p90, 2)} ms, p99 ${fixed(latency.p99, 2)} ms, max ${fixed(latency.max, 2)} ms`,
  );
  // On a machine of few cores the load generator shares them with the node: what it took is CPU the node did not have.
  log(`load generator (this process) CPU while submitting: ${Math.round(generatorCpuMs)} ms, ${fixed((generatorCpuMs * 1000) / signed.length, 0)} µs per request`);
  if (rejected.total > 0) log(`rejected ${rejected.total}: ${rejected.entries().map(([m, n]) => `${n}× "${m}"`).join(', ')}`);
  if (submission.transportErrors > 0) log(`transport errors ${submission.transportErrors}: ${submission.transportErrorMessages.join('; ')}`);
  if (hashMismatches > 0) log(`WARNING: ${hashMismatches} answers carried a different transaction hash than the one signed`);

  const inclusion = await watching;
  const perfSamples = await perf?.stop();
  const peakRssKb = rss.peak();
  const cpuMsPerTx = ((readCpuMs(rss.pid) ?? Number.NaN) - (cpuAtStart ?? Number.NaN)) / accepted;
  const threadCpu = threadCpuSince(threadCpuAtStart, readThreadCpuMs(rss.pid)).filter(([, ms]) => ms > 0);
  const ourBlocks = inclusion.blocks.filter((b) => b.ours > 0);
  log(
    `included: ${inclusion.included} in ${ourBlocks.length} blocks (${inclusion.txsInSpan} txs over ${inclusion.spanSeconds} s of block time → ` +
      `${fixed(includedRate(inclusion))} tx/s); ` +
      (inclusion.allIncludedAfterMs === undefined
        ? `${inclusion.notIncluded} NOT included within ${flags['include-timeout']} s after submission`
        : `all included ${fixed(inclusion.allIncludedAfterMs / 1000, 2)} s after submission started`),
  );
  const lastBlock = ourBlocks.at(-1);
  if (lastBlock !== undefined && inclusion.allIncludedAfterMs !== undefined) {
    // A QBFT proposer's round-0 timer fires at the new block's timestamp (whole seconds) unless the
    // parent came late, so the wait splits into the block period's (last answer to the timestamp)
    // and the node's (timestamp to the block being readable).
    const timestampWallMs = lastBlock.timestamp * 1000;
    log(
      `last block ${lastBlock.number}: its timestamp came ${Math.round(timestampWallMs - submissionEndedWallMs)} ms after the last transaction was accepted; ` +
        `the block was seen ${Math.round(lastBlock.seenAtWallMs - timestampWallMs)} ms after its timestamp (building what was not yet executed, sealing, committing; polled every ${POLL_MS_AFTER_SUBMISSION} ms)`,
    );
  }
  // A gap above the 1-second period means building or importing the previous block overran it.
  const fill = blockFill(inclusion);
  log(`transactions per block (seconds since the previous block): ${fill.join(', ')}`);
  // Where the node's CPU went: the chain against admission (transports, pool, decoding) and V8's own threads (`node`: GC helpers, compilers).
  if (threadCpu.length > 0) log(`node CPU by thread (ms): ${threadCpu.map(([name, ms]) => `${name} ${Math.round(ms)}`).join(', ')}`);
  log(`node peak RSS during the workload: ${megabytes(peakRssKb)}; the node's memory line with the highest RSS: ${describeNodeMemory(memoryLog.peak)}`);
  if (perfSamples !== undefined) {
    // `node`: the main thread and V8's platform threads, which compile and collect garbage for every thread's isolate.
    log(`perf samples over the workload (${perfSamples.reduce((sum, thread) => sum + thread.samples, 0)}), by thread (\`node\`: the main thread and V8's own threads):`);
    for (const line of describeThreadSamples(perfSamples)) log(`  ${line}`);
  }
  const receipts = await readBack(port, signed, senders.length, 'eth_getTransactionReceipt');
  const transactions = await readBack(port, signed, senders.length, 'eth_getTransactionByHash');
  for (const [what, figures] of [['receipts', receipts], ['transactions by hash', transactions]] as const) {
    log(
      `${what} read back: ${figures.read} of ${signed.length} in ${fixed(figures.wallMs / 1000, 2)} s → ${fixed(rate(figures.read, figures.wallMs))}/s ` +
        `(${flags.concurrency} in flight, each sender's in nonce order); latency p50 ${fixed(figures.latency.p50, 2)} ms, p99 ${fixed(figures.latency.p99, 2)} ms` +
        (figures.missing > 0 ? `; ${figures.missing} answered null` : ''),
    );
  }
  return {
    name,
    count: signed.length,
    accepted,
    rejected,
    transportErrors: submission.transportErrors,
    submitMs: submission.wallMs,
    latency,
    inclusion,
    peakRssKb,
    cpuMsPerTx,
    receipts,
    transactions,
  };
}

/**
 * Reads every transaction's receipt (or the transaction, by hash), sender by sender in nonce order, as
 * a client checking its own transactions does: each sender's run crosses every block of the workload,
 * so a workload of more transactions than the node keeps decoded (8,192) reads blocks no longer in memory.
 */
async function readBack(port: number, signed: SignedTx[], senderCount: number, method: 'eth_getTransactionReceipt' | 'eth_getTransactionByHash'): Promise<ReadBackFigures> {
  const order = signed.map((_, i) => i).sort((a, b) => (a % senderCount) - (b % senderCount) || a - b);
  const latencies = new LatencyRecorder();
  let read = 0;
  let missing = 0;
  let next = 0;
  const run = await runClosedLoop({ host: HOST, port, connections: flags.concurrency, maxRunMs: 120_000 }, (): LoadJob | undefined => {
    const index = order[next++];
    if (index === undefined) return undefined;
    return {
      bytes: jsonPostRequest(HOST, port, rpcBody(method, [signed[index]!.hash], index + 1)),
      onAnswer(answer, latencyMs) {
        latencies.add(latencyMs);
        if (answer.status === 200 && answer.body.includes('"blockHash"')) read++;
        else missing++;
      },
    };
  });
  return { read, missing, wallMs: run.wallMs, latency: summarizeLatencies(latencies) };
}
