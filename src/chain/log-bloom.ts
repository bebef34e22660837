/**
 * Which blocks a log filter can match, from the header bloom (the chain reads blooms from its
 * headers; matching the logs themselves is src/shared/rpc/log-match.ts).
 */
import { Bloom } from '@ethereumjs/vm';
import type { TopicFilter } from '../shared/rpc/params.js';

/** Whether a block whose header has `bloom` may hold a log the filter matches. */
export function bloomMayMatch(bloom: Uint8Array, addresses: readonly Uint8Array[], topics: readonly TopicFilter[]): boolean {
  const filter = new Bloom(bloom);
  if (addresses.length > 0 && !addresses.some((address) => filter.check(address))) return false;
  for (const position of topics) {
    if (position === null || position.length === 0) continue;
    if (!position.some((topic) => filter.check(topic))) return false;
  }
  return true;
}
