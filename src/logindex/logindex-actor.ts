/**
 * The log index actor's core: opens its own database, keeps the index (log-index.ts) following the
 * chain, and answers the transports' log calls. No ports here — workers/logindex.worker.ts opens the
 * channels and hands them these handlers.
 */
import { mkdirSync, rmSync } from 'node:fs';
import type { ChannelEnd, ChannelHandlers } from '../shared/actors/channel.js';
import type { LogIndexChain, TransportLogIndex } from '../shared/actors/channels.js';
import type { CanonicalLogsEvent } from '../shared/actors/messages.js';
import { serveTextMethods, type JsonTextServer } from '../shared/rpc/dispatch.js';
import { KvStore } from '../shared/storage/kv-store.js';
import { IndexStore } from './index-store.js';
import { LogIndex, type ChainLogSource, type LogIndexOptions } from './log-index.js';
import { logRecords, logRpcHandlers, type LogLimits } from './log-rpc.js';

/** The index's store at `location`; an index of another layout is removed and started again. */
export async function openIndexStore(location: string, log: (message: string) => void): Promise<IndexStore> {
  mkdirSync(location, { recursive: true });
  const kv = await KvStore.open(location);
  const opened = await IndexStore.open(kv);
  if (opened !== undefined) return opened;
  log(`The log index at ${location} has another layout: rebuilding it from the chain`);
  await kv.close();
  rmSync(location, { recursive: true, force: true });
  mkdirSync(location, { recursive: true });
  const fresh = await IndexStore.open(await KvStore.open(location));
  if (fresh === undefined) throw new Error(`cannot create a log index at ${location}`);
  return fresh;
}

/** The chain as the index reads it, over the logindex↔chain channel. */
export function chainLogSource(chain: Pick<ChannelEnd<LogIndexChain, 'logindex'>, 'request'>): ChainLogSource {
  return {
    head: async () => {
      const { number, hash } = await chain.request('head', null);
      return { number, hash };
    },
    canonicalLogs: (from, to) => chain.request('canonicalLogs', { from, to }),
    canonicalHashes: (from, to) => chain.request('canonicalHashes', { from, to }),
    blockLogs: (hash) => chain.request('blockLogs', { hash }),
  };
}

export class LogIndexActor {
  readonly index: LogIndex;
  private readonly serveRpc: JsonTextServer;

  constructor(
    private readonly store: IndexStore,
    options: LogIndexOptions & LogLimits,
  ) {
    this.index = new LogIndex(store, options);
    this.serveRpc = serveTextMethods('logindex', logRpcHandlers(this.index, options));
  }

  /** What every transport may ask. */
  readonly transportHandlers: ChannelHandlers<TransportLogIndex, 'logindex'> = {
    rpc: ({ method, params }) => this.serveRpc(method, params),
    logs: (query) => logRecords(this.index, query),
  };

  onCanonicalLogs(event: CanonicalLogsEvent): void {
    void this.index.onCanonicalLogs(event);
  }

  /** Lets the updates in progress finish, then closes the store. */
  async close(): Promise<void> {
    await this.index.stop();
    await this.store.close();
  }
}
