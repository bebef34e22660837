/**
 * NodeConsensus — QBFT wired to chain and pool ports as the consensus actor runs it — against a fake
 * chain on a virtual clock: build → seal → importCommitted for its own blocks, a held block replaced
 * by the next build, and the empty-block period.
 */
import test from 'ava';

import type { HeadInfo } from '../../src/shared/actors/messages.js';
import { parseGenesis, loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { HeaderField, QbftBlock } from '../../src/shared/qbft/block.js';
import { genesisExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf, recoverSealSigner } from '../../src/shared/qbft/seal.js';
import { NodeConsensus } from '../../src/consensus/node-consensus.js';
import type { NodeChainPorts } from '../../src/consensus/node-consensus.js';
import { FakeChain, fakeGenesis } from '../harness/qbft-simulation/fake-chain.js';
import { VirtualClock } from '../harness/qbft-simulation/virtual-clock.js';
import { bytesEqual } from '../../src/shared/qbft/header-rules.js';

const dev = loadDevNetwork();
const VALIDATOR = addressOf(dev.validatorKey);
const T0 = 1_700_000_000n;

function headInfo(block: QbftBlock): HeadInfo {
  return {
    number: block.number,
    hash: block.hash(),
    timestamp: block.timestamp,
    gasLimit: block.scalar(HeaderField.gasLimit),
    stateRoot: block.field(HeaderField.stateRoot),
    coinbase: block.coinbase,
    extraData: block.field(HeaderField.extraData),
    totalDifficulty: block.number + 1n,
  };
}

/** A node with the dev validator key over a fake chain; `emptyPeriod` sets xemptyblockperiodseconds. */
function setup(emptyPeriod: number, transactionsAt: (height: bigint) => number) {
  const json = structuredClone(dev.genesisJson) as { config: { qbft: Record<string, unknown> } };
  json.config.qbft.xemptyblockperiodseconds = emptyPeriod;
  json.config.qbft.requesttimeoutseconds = 1;
  const genesis = parseGenesis(json);
  const clock = new VirtualClock(Number(T0) * 1000);
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators: [VALIDATOR] }));
  const calls: string[] = [];
  const reads = { headers: 0 };
  let held: QbftBlock | undefined;
  let node!: NodeConsensus;
  const ports: NodeChainPorts = {
    head: async () => headInfo(chain.head),
    selectTransactions: async () => {
      calls.push('select');
      const count = transactionsAt(chain.headNumber + 1n);
      return Array.from({ length: count }, (_, i) => ({ raw: Uint8Array.of(0xaa, i), hash: new Uint8Array(32), senderPublicKey: new Uint8Array(64) }));
    },
    build: async (req) => {
      calls.push('build');
      // The chain drops a block it still holds from an earlier build before building again.
      if (held) calls.push('replaceHeld');
      held = chain.build(
        { request: 0, height: chain.headNumber + 1n, round: 0, parentHash: chain.head.hash(), timestamp: req.timestamp, coinbase: req.coinbase, extraData: req.extraData },
        req.transactions.map((tx) => tx.raw),
      );
      return { number: held.number, hash: held.hash(), rlp: held.encode(), txCount: held.transactionCount, gasUsed: 0n, rejected: [] };
    },
    importCommitted: async (rlp) => {
      const block = QbftBlock.fromRlp(rlp);
      // The held block reuses its execution; any other committed block would be executed in full.
      calls.push(held && bytesEqual(held.hash(), block.hash()) ? 'importCommitted' : 'importOther');
      chain.append(block);
      held = undefined;
      node.onNewHead(headInfo(chain.head));
    },
    discardBuilt: async () => {
      calls.push('discardBuilt');
      held = undefined;
    },
    validateBlock: async () => ({ valid: false, reason: 'no proposals from peers in this test' }),
    reportRejected: async () => undefined,
    headers: (from, to) => {
      reads.headers++;
      return chain.headers(from, to);
    },
    headerByHash: async () => null,
    call: () => Promise.reject(new Error('no contract')),
  };
  node = new NodeConsensus(
    { nodeKey: dev.validatorKey, vanity: new Uint8Array(32), genesis, txSelectionShare: 0.75, maxTransactionsPerBlock: 100 },
    ports,
    { broadcast: () => undefined, gossip: () => undefined },
    clock,
    () => undefined,
  );
  return { node, chain, clock, calls, reads };
}

test('a sole validator builds, seals with its own commit seal and imports its held block every period', async (t) => {
  const { node, chain, clock, calls } = setup(0, () => 1);
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 5_500);
  t.is(chain.headNumber, 5n);
  t.deepEqual(calls.slice(0, 3), ['select', 'build', 'importCommitted']);
  t.false(calls.includes('importOther'));
  t.false(calls.includes('replaceHeld'));
  for (let n = 1n; n <= 5n; n++) {
    const block = chain.blockAt(n)!;
    t.is(block.timestamp, T0 + n, 'one block per second');
    t.deepEqual(block.extraData.seals.map((s) => recoverSealSigner(block.digest(), s)), [VALIDATOR]);
  }
  await node.stop();
});

test('an empty block is held back until xemptyblockperiodseconds, and the held block is replaced by the next build', async (t) => {
  // Transactions only from height 3 on; empty blocks wait up to 3 s after their parent.
  const { node, chain, clock, calls } = setup(3, (height) => (height >= 3n ? 1 : 0));
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 2_500);
  t.is(chain.headNumber, 0n, 'block 1 would be empty: not proposed yet');
  t.true(calls.includes('replaceHeld'), 'the empty block built first was replaced by the retry');
  await clock.runUntil(Number(T0) * 1000 + 4_500);
  t.is(chain.headNumber, 1n);
  t.true(chain.blockAt(1n)!.timestamp >= T0 + 3n, 'the empty block went out once its period had passed');
  await clock.runUntil(Number(T0) * 1000 + 7_500);
  t.true(chain.headNumber >= 3n);
  t.is(chain.blockAt(3n)!.transactionCount, 1);
  await node.stop();
});

test('after a re-org the validator sets cached above the fork point are read again from the new branch', async (t) => {
  const { node, chain, clock, reads } = setup(0, () => 1);
  await node.start();
  await clock.runUntil(Number(T0) * 1000 + 5_500);
  await node.stop();
  t.is(chain.headNumber, 5n);
  await node.tracker.tallyAfter(4n);
  const before = reads.headers;
  // An ordinary new head keeps the cache.
  node.onNewHead(headInfo(chain.head));
  await node.tracker.tallyAfter(4n);
  t.is(reads.headers, before, 'served from the cache');
  // A head reached through a re-org that forked after block 2.
  node.onNewHead(headInfo(chain.head), 2n);
  await node.tracker.tallyAfter(4n);
  t.true(reads.headers > before, 'read again from the chain');
  const again = reads.headers;
  await node.tracker.tallyAfter(2n);
  t.is(reads.headers, again, 'what lies below the fork point stays cached');
});
