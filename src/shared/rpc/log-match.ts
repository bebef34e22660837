/**
 * The one log matcher: eth_getLogs, log filters and `logs` subscriptions all decide with it whether
 * a log matches an address list and topic positions (rpc-auth-cli.md §5).
 */
import { equalsBytes } from '@ethereumjs/util';
import type { TopicFilter } from './params.js';

/** What matching reads of a log: its address and topics (a stored `RawLog` is one). */
export type MatchableLog = readonly [address: Uint8Array, topics: readonly Uint8Array[], ...rest: unknown[]];

/**
 * Whether one log matches the filter's addresses and topic positions. A wildcard position (null, or
 * an empty list of alternatives) constrains nothing, not even that the log has a topic there: `[null]`
 * matches a log without topics. A position with alternatives needs the log's topic at that position
 * to be one of them.
 */
export function logMatches(log: MatchableLog, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const [address, logTopics] = log;
  if (addresses.length > 0 && !addresses.some((candidate) => equalsBytes(candidate, address))) return false;
  for (let i = 0; i < topics.length; i++) {
    const position = topics[i];
    if (position === null || position === undefined || position.length === 0) continue;
    const topic = logTopics[i];
    if (topic === undefined || !position.some((candidate) => equalsBytes(candidate, topic))) return false;
  }
  return true;
}
