/**
 * The one log matcher: eth_getLogs, log filters and `logs` subscriptions all decide with it whether
 * a log matches an address list and topic positions (rpc-auth-cli.md §5).
 */
import { equalsBytes } from '@ethereumjs/util';
import type { TopicFilter } from './params.js';

/** What matching reads of a log: its address and topics (a stored `RawLog` is one). */
export type MatchableLog = readonly [address: Uint8Array, topics: readonly Uint8Array[], ...rest: unknown[]];

/**
 * Whether one log matches the filter's addresses and topic positions. As in Besu (LogsQuery, and its
 * fixture eth_getLogs_failTopicPosition), every position of the filter, wildcards included, needs a
 * topic in the log: `[null]` does not match a log without topics. A wildcard position (null, or an
 * empty list of alternatives) matches any topic there; one with alternatives needs one of them.
 */
export function logMatches(log: MatchableLog, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const [address, logTopics] = log;
  if (addresses.length > 0 && !addresses.some((candidate) => equalsBytes(candidate, address))) return false;
  if (topics.length > logTopics.length) return false;
  for (let i = 0; i < topics.length; i++) {
    const position = topics[i];
    if (position === null || position === undefined || position.length === 0) continue;
    const topic = logTopics[i];
    if (topic === undefined || !position.some((candidate) => equalsBytes(candidate, topic))) return false;
  }
  return true;
}
