/**
 * The one log matcher (src/shared/rpc/log-match.ts), used by eth_getLogs, log filters and `logs`
 * subscriptions: addresses, and topic positions with wildcards and alternatives.
 */
import test from 'ava';
import { logMatches } from '../../src/shared/rpc/log-match.js';

const bytes = (n: number, length = 32) => new Uint8Array(length).fill(n);
const A = bytes(0xaa, 20);
const B = bytes(0xbb, 20);
const [T1, T2, T3] = [bytes(1), bytes(2), bytes(3)];

test('addresses: none named matches any; otherwise one of them', (t) => {
  t.true(logMatches([A, []], [], []));
  t.true(logMatches([A, []], [B, A], []));
  t.false(logMatches([A, []], [B], []));
});

test('topic positions: exact, alternatives (OR), wildcards, position matters', (t) => {
  const log = [A, [T1, T2]] as const;
  t.true(logMatches(log, [], [[T1]]));
  t.true(logMatches(log, [], [[T1], [T2]]));
  t.false(logMatches(log, [], [[T2]]), 'T2 sits at position 1, not 0');
  t.true(logMatches(log, [], [null, [T2]]));
  t.true(logMatches(log, [], [[T3, T1], [T2, T3]]));
  t.false(logMatches(log, [], [[T1], [T3]]));
  t.false(logMatches(log, [], [null, null, [T3]]), 'a constrained position needs a topic there');
});

test('a bare null position constrains nothing: [null] matches a log without topics', (t) => {
  t.true(logMatches([A, []], [], [null]));
  t.true(logMatches([A, [T1]], [], [null, null]));
  t.false(logMatches([A, []], [], [null, [T1]]));
});

test('a list at a position needs a topic there, even a list of nulls (Besu: eth_getLogs_failTopicPosition)', (t) => {
  t.false(logMatches([A, []], [], [[]]));
  t.false(logMatches([A, [T1]], [], [[T1, T2], []]));
  t.true(logMatches([A, [T1, T3]], [], [[T1, T2], []]));
});
