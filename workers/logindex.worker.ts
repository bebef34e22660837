/**
 * Log index actor thread: the only owner of the log index's database (`<data-path>/log-index`). Hears
 * each new head's blocks from the chain, catches up from the chain at start, and answers the
 * transports' eth_getLogs, filters and GraphQL log reads (src/logindex/logindex-actor.ts).
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../src/shared/util/hex-builtins.js';
import { exposeControl } from '../src/shared/actors/control.js';
import { openChannel } from '../src/shared/actors/channel.js';
import { LOGINDEX_CHAIN, TRANSPORT_LOGINDEX } from '../src/shared/actors/channels.js';
import { startActorThread } from '../src/shared/actors/worker-data.js';
import { HeadReader } from '../src/shared/shared-memory/head-view.js';
import { logIndexPath } from '../src/shared/util/data-path.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';
import { chainLogSource, LogIndexActor, openIndexStore } from '../src/logindex/logindex-actor.js';
import { describeHead } from '../src/logindex/log-index.js';

const data = startActorThread('logindex');
setLogLevel(data.logLevel);
const log = new Logger('LogIndex');

let actor: LogIndexActor | undefined;

exposeControl('logindex', {
  async start() {
    const store = await openIndexStore(logIndexPath(data.dataPath), (message) => log.info(message));
    const indexedBlocks = store.nextNumber;
    log.info(`Log index opened: ${describeHead(store.head)}`);
    const chain = openChannel(LOGINDEX_CHAIN, 'logindex', data.ports.chain);
    const headView = new HeadReader(data.headView);
    actor = new LogIndexActor(store, {
      source: chainLogSource(chain),
      publishedHead: () => headView.read(),
      log,
      rpcMaxLogsRange: data.rpcMaxLogsRange,
      rpcMaxLogsCount: data.rpcMaxLogsCount,
    });
    const running = actor;
    chain.on({ canonicalLogs: (event) => running.onCanonicalLogs(event) });
    for (const port of data.ports.transports) openChannel(TRANSPORT_LOGINDEX, 'logindex', port).serve(running.transportHandlers);
    // Catching up runs on: queries wait for the index to reach the chain's head (LogIndex.read).
    void running.index.start().then(() => log.info(`Log index caught up with the chain: ${describeHead(running.index.head)}`));
    return { indexedBlocks };
  },
  metrics: () => null,
  async stop() {
    await actor?.close();
    log.info('Log index closed');
  },
});
