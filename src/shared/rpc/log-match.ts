/**
 * The one log matcher: eth_getLogs, log filters and (later) logs subscriptions all decide with it
 * whether a log matches an address list and topic positions (rpc-auth-cli.md §5).
 */
import { equalsBytes } from '@ethereumjs/util';
import type { TopicFilter } from './params.js';
import type { RawLog } from '../ethereum/chain-records.js';

/** Whether one log matches the filter's addresses and topic positions. */
export function logMatches(log: RawLog, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const [address, logTopics] = log;
  if (addresses.length > 0 && !addresses.some((candidate) => equalsBytes(candidate, address))) return false;
  // Every position of the filter, wildcards included, needs a topic in the log.
  if (topics.length > logTopics.length) return false;
  for (let i = 0; i < topics.length; i++) {
    const position = topics[i];
    if (position === null || position === undefined || position.length === 0) continue;
    const topic = logTopics[i];
    if (topic === undefined || !position.some((candidate) => equalsBytes(candidate, topic))) return false;
  }
  return true;
}

