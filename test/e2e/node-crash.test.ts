/**
 * Crash consistency, the CI slice of the crash campaign (bench/crash-campaign.ts runs 100 rounds of the
 * same logic): sustained transfer load, kill -9 at a random moment, restart on the same data path;
 * after each restart every receipt returned before the kill is returned identically, the head's state
 * agrees with its blocks, and the node mines a new transaction.
 */
import test from 'ava';
import { CampaignAborted, CrashCampaign, describeRound, type RoundReport } from '../../bench/lib/crash-campaign.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';

const ROUNDS = 3;
const EXTRA_SENDERS = 3;
const dataPath = tempDataPath();

test.after.always(() => removeDataPath(dataPath));

test(`${ROUNDS} rounds of kill -9 under load lose no receipt and leave a consistent head`, async (t) => {
  t.timeout(90_000);
  const seed = Math.floor(Math.random() * 2 ** 31);
  const campaign = await CrashCampaign.start({
    dataPath,
    seed,
    extraSenders: EXTRA_SENDERS,
    // Each restarted node builds its first blocks with cold code: small blocks, and kills late
    // enough that most rounds see some of their load mined.
    killWindowMs: [1000, 3000],
    maxUnminedPerSender: 15,
    txsPerSenderPerRound: 300,
  });
  const reports: RoundReport[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      let report: RoundReport;
      try {
        report = await campaign.runRound(round);
      } catch (err) {
        if (err instanceof CampaignAborted) t.fail(describeRound(err.report, seed));
        throw err;
      }
      reports.push(report);
      t.log(describeRound(report, seed));
      t.deepEqual(report.inconsistencies, [], describeRound(report, seed));
      t.deepEqual(report.lostReceipts, [], describeRound(report, seed));
    }
    const sweep = await campaign.sweep();
    t.deepEqual(sweep.lost, []);
    // The checks had something to check: receipts returned before each kill, mined load in the ledger.
    for (const report of reports) t.true(report.receiptsChecked > 0, `round ${report.round} checked receipts returned before its kill`);
    // Beyond the funding transfers and one production check per round, some of the load was mined.
    t.true(reports.reduce((sum, r) => sum + r.txsChecked, 0) > EXTRA_SENDERS + ROUNDS, 'the load was mined and checked against the state');
  } finally {
    await campaign.stop();
  }
});
