/**
 * A log index over an in-process chain, wired as the actors wire them but without threads: the
 * chain's log feed answers the index's requests directly, and the published head is the chain's.
 */
import type { Chain } from '../../src/chain/chain.js';
import { LogFeed } from '../../src/chain/log-feed.js';
import type { CanonicalLogsEvent } from '../../src/shared/actors/messages.js';
import { LogIndexActor, openIndexStore } from '../../src/logindex/logindex-actor.js';
import type { ChainLogSource } from '../../src/logindex/log-index.js';

export interface InProcessLogIndex {
  actor: LogIndexActor;
  /** What the chain's feed would send for its last new head, applied. */
  feed: LogFeed;
  source: ChainLogSource;
}

/** The chain as the index reads it, answered by the chain's own log feed. */
export function chainSource(chain: Chain, feed: LogFeed): ChainLogSource {
  return {
    head: async () => chain.getHead(),
    canonicalLogs: async (from, to) => feed.handlers.canonicalLogs({ from, to }),
    canonicalHashes: async (from, to) => feed.handlers.canonicalHashes({ from, to }),
    blockLogs: async (hash) => feed.handlers.blockLogs({ hash }),
  };
}

/** Opens a log index at `location` over `chain` and brings it to the chain's head. */
export async function openLogIndexOver(
  chain: Chain,
  location: string,
  limits = { rpcMaxLogsRange: 5000n, rpcMaxLogsCount: 10_000 },
): Promise<InProcessLogIndex> {
  const store = await openIndexStore(location, () => undefined);
  let actor: LogIndexActor | undefined;
  const feed = new LogFeed(chain.store, (event: CanonicalLogsEvent) => actor?.onCanonicalLogs(event), (message) => console.warn(message));
  const source = chainSource(chain, feed);
  actor = new LogIndexActor(store, {
    source,
    publishedHead: () => chain.getHead(),
    log: { info: () => undefined, warn: (message) => console.warn(message) },
    ...limits,
  });
  await actor.index.start();
  return { actor, feed, source };
}
