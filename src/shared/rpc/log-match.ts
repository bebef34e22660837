/**
 * The one log matcher: eth_getLogs, log filters and `logs` subscriptions all decide with it whether
 * a log matches an address list and topic positions (rpc-auth-cli.md §5).
 */
import { equalsBytes } from '../util/bytes.js';
import type { TopicFilter } from './params.js';

/** What matching reads of a log: its address and topics (a stored `RawLog` is one). */
export type MatchableLog = readonly [address: Uint8Array, topics: readonly Uint8Array[], ...rest: unknown[]];

/**
 * Whether one log matches the filter's addresses and topic positions. A bare null position
 * constrains nothing: `[null]` matches a log without topics. A list at a position needs a topic there
 * (Besu's fixture eth_getLogs_failTopicPosition: `[[A, B], [null]]` does not match a log with one
 * topic), one of the list's unless the list is empty.
 */
export function logMatches(log: MatchableLog, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const [address, logTopics] = log;
  if (addresses.length > 0 && !addresses.some((candidate) => equalsBytes(candidate, address))) return false;
  for (let i = 0; i < topics.length; i++) {
    const position = topics[i];
    if (position === null || position === undefined) continue;
    const topic = logTopics[i];
    if (topic === undefined) return false;
    if (position.length > 0 && !position.some((candidate) => equalsBytes(candidate, topic))) return false;
  }
  return true;
}
