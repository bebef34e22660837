/**
 * Crash campaign: N rounds of sustained transfer load on a dev node, `kill -9` at a random moment,
 * restart on the same data path, and check that every receipt returned before the kill is still
 * returned identically, that the head's state agrees with its blocks, and that the node produces
 * again (round logic in lib/crash-campaign.ts, shared with test/e2e/node-crash.test.ts). Prints
 * each round and the totals; exits 1 when any round found an inconsistency or a lost receipt.
 *
 *   npm run build && node dist/bench/crash-campaign.js [--rounds=100] [--seed=N]
 */
import { parseFlags } from './lib/args.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { CampaignAborted, CrashCampaign, describeRound, type RoundReport } from './lib/crash-campaign.js';
import { fixed, log, printTable } from './lib/format.js';
import { percentile } from './lib/stats.js';
import { removeDataPath, tempDataPath } from '../test/helpers/node-process.js';

const flags = parseFlags('dist/bench/crash-campaign.js', {
  rounds: { default: 100, min: 1, description: 'kill-and-restart rounds' },
  seed: { default: -1, min: -1, description: 'campaign seed (kill moments, values, extra senders); -1: random' },
  'extra-senders': { default: 5, min: 0, description: 'funded senders besides the three dev accounts' },
  'kill-min-ms': { default: 300, min: 0, description: 'earliest kill, ms after the load starts' },
  'kill-max-ms': { default: 4000, min: 1, description: 'latest kill, ms after the load starts' },
  'max-unmined': { default: 40, min: 1, description: 'transactions a sender may have in flight before seeing them mined' },
  'txs-per-sender': { default: 600, min: 1, description: 'pre-signed transactions per sender and round' },
  'max-seconds': { default: 7200, min: 10, description: 'ceiling on the whole run' },
});

runBenchmark(main, flags['max-seconds']);

async function main(): Promise<void> {
  const seed = flags.seed >= 0 ? flags.seed : Math.floor(Math.random() * 2 ** 31);
  const dataPath = tempDataPath();
  onCleanup(`data path ${dataPath}`, () => removeDataPath(dataPath));
  log(`crash campaign: ${flags.rounds} rounds, seed ${seed}, data path ${dataPath}`);
  const campaign = await CrashCampaign.start({
    dataPath,
    seed,
    extraSenders: flags['extra-senders'],
    killWindowMs: [flags['kill-min-ms'], Math.max(flags['kill-min-ms'], flags['kill-max-ms'])],
    maxUnminedPerSender: flags['max-unmined'],
    txsPerSenderPerRound: flags['txs-per-sender'],
  });
  onCleanup('campaign node', () => campaign.stop());

  const reports: RoundReport[] = [];
  const started = performance.now();
  for (let round = 1; round <= flags.rounds; round++) {
    let report: RoundReport;
    try {
      report = await campaign.runRound(round);
    } catch (err) {
      if (!(err instanceof CampaignAborted)) throw err;
      reports.push(err.report);
      log(describeRound(err.report, seed));
      break;
    }
    reports.push(report);
    log(describeRound(report, seed));
  }
  const sweep = await campaign.sweep();
  const minutes = (performance.now() - started) / 60_000;

  const inconsistencies = reports.reduce((sum, r) => sum + r.inconsistencies.length, 0);
  const lost = reports.reduce((sum, r) => sum + r.lostReceipts.length, 0);
  const restarts = Float64Array.from(reports.filter((r) => r.restartMs > 0).map((r) => r.restartMs / 1000)).sort();
  const phases = reports.flatMap((r) => (r.msSinceLastImport === undefined ? [] : [r.msSinceLastImport]));
  const aheadOfLog = reports.filter((r) => r.headAfterRestart > r.lastLoggedImport).length;
  const aheadOfClient = reports.filter((r) => r.headAfterRestart > r.headSeen).length;
  console.log('');
  printTable(
    ['figure', 'value'],
    [
      ['campaign seed', String(seed)],
      ['rounds', `${reports.length} of ${flags.rounds} in ${fixed(minutes, 1)} min`],
      ['inconsistencies', String(inconsistencies)],
      ['receipts returned during the load / checked after a kill', `${reports.reduce((sum, r) => sum + r.receiptsSeen, 0)} / ${reports.reduce((sum, r) => sum + r.receiptsChecked, 0)}`],
      ['lost receipts (checked after each kill)', String(lost)],
      ['lost receipts (final sweep of all seen)', `${sweep.lost.length} of ${sweep.checked}`],
      ['transactions submitted', String(reports.reduce((sum, r) => sum + r.submitted, 0))],
      ['blocks / transactions checked against the ledger', `${reports.reduce((s, r) => s + r.blocksChecked, 0)} / ${reports.reduce((s, r) => s + r.txsChecked, 0)}`],
      ['restart s p50 / p90 / max', `${fixed(percentile(restarts, 50), 1)} / ${fixed(percentile(restarts, 90), 1)} / ${fixed(restarts.at(-1) ?? NaN, 1)}`],
      ['kill ms after the last imported block p10 / p50 / p90', phaseFigures(phases)],
      ['rounds restarted ahead of the last logged import', String(aheadOfLog)],
      ['rounds restarted ahead of the last head the client saw', String(aheadOfClient)],
    ],
  );
  for (const line of sweep.lost.slice(0, 20)) console.log(`lost in the final sweep: ${line}`);
  if (inconsistencies > 0 || lost > 0 || sweep.lost.length > 0 || reports.length < flags.rounds) process.exitCode = 1;
}

function phaseFigures(phases: number[]): string {
  const sorted = Float64Array.from(phases).sort();
  return [10, 50, 90].map((p) => fixed(percentile(sorted, p), 0)).join(' / ');
}
