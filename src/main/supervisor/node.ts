import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Remote } from 'comlink';
import type { NodeOptions } from '../cli/options.js';
import { dependencyWarnings } from '../cli/resolve.js';
import { httpAuthenticationOptions, wsAuthenticationOptions } from '../cli/authentication-options.js';
import { describeAuthentication, prepareAuthentication } from './authentication.js';
import type { ActorName } from '../../shared/actors/channel.js';
import { controlOf } from '../../shared/actors/control.js';
import type { ControlOf } from '../../shared/actors/control.js';
import { portsOf } from '../../shared/actors/worker-data.js';
import type { ActorDataOf, ChainActorData, ConsensusActorData, LogIndexActorData, P2pActorData, ReaderActorData, TransportActorData, TxPoolActorData } from '../../shared/actors/worker-data.js';
import { createHeadBuffer, HeadReader } from '../../shared/shared-memory/head-view.js';
import { createMailboxCounters } from '../../shared/shared-memory/mailbox-counters.js';
import { createReaderDemand, readerDemanded } from '../../shared/shared-memory/reader-demand.js';
import { createP2pStatusBuffer, P2pStatusReader } from '../../shared/shared-memory/p2p-status-view.js';
import { createTransportCounters } from '../../shared/shared-memory/transport-counters.js';
import { errorMessage } from '../../shared/util/errors.js';
import { Logger, setLogLevel } from '../../shared/util/log.js';
import { delayTurbofanTierUp } from '../../shared/util/jit-tiering.js';
import { actorResourceLimits, limitHeapGrowth } from '../../shared/util/memory-limits.js';
import type { ThreadMemory } from '../../shared/util/thread-memory.js';
import type { LogLevel } from '../../shared/util/log.js';
import { startConnectionGuard, type ConnectionGuard } from './http-connection-guard.js';
import { chooseHttpEngine } from './http-engine.js';
import { collectGarbageOf, collectNodeMemory, COLLECT_AFTER_START_MS, formatNodeMemory, heapSnapshotDir, memoryLogIntervalMs, writeHeapSnapshots } from './memory.js';
import { resolveNetwork, StartupError } from './network.js';
import { nodeKeyOf } from './node-key-file.js';
import { assertPortsFree } from './ports.js';
import { answersOnUnixSocket, ipcPathInUseMessage } from '../../shared/util/unix-socket.js';
import { BASALT_VERSION, clientVersion } from './version.js';
import { EventLoopLagMonitor } from '../../shared/metrics/event-loop-lag.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import { gatherFigures, metricsThread, type MetricsThread } from '../metrics/scrape.js';

const log = new Logger('Supervisor');

/** The thread entry point of each actor kind, under workers/. */
const WORKER_FILES: Record<ActorName, string> = {
  chain: 'chain.worker.js',
  txpool: 'txpool.worker.js',
  consensus: 'consensus.worker.js',
  p2p: 'p2p.worker.js',
  logindex: 'logindex.worker.js',
  transport: 'transport.worker.js',
  reader: 'reader.worker.js',
};

interface RunningActor {
  name: string;
  worker: Worker;
  stop(): Promise<void>;
  memory(): Promise<ThreadMemory>;
  collectGarbage(): Promise<void>;
}

/**
 * Starts the node: the chain actor first (it owns the database and must have a head before anyone
 * asks), then the pool, devp2p, consensus and the JSON-RPC transports. Resolves with the process exit code once
 * the node has stopped: 0 after a requested shutdown, non-zero when an actor died.
 */
export async function runNode(options: NodeOptions): Promise<number> {
  setLogLevel(options.logging as LogLevel);
  limitHeapGrowth();
  delayTurbofanTierUp();
  for (const warning of dependencyWarnings(options)) log.warn(warning);
  // Chosen once, before anything starts: every transport thread serves on this engine.
  const httpEngine = options.rpcHttpEnabled || options.rpcWsEnabled || options.graphqlHttpEnabled ? chooseHttpEngine(options.httpEngine) : undefined;
  if (httpEngine?.warn) log.warn(httpEngine.message);
  else if (httpEngine !== undefined) log.info(httpEngine.message);

  const network = resolveNetwork(options);
  // Each service its own: in credentials mode its own key pair, so a token of one is refused by the other.
  const httpAuthentication = options.rpcHttpEnabled ? await prepareAuthentication(httpAuthenticationOptions(options)) : undefined;
  const wsAuthentication = options.rpcWsEnabled ? await prepareAuthentication(wsAuthenticationOptions(options)) : undefined;
  await assertPortsFree([
    ...(options.rpcHttpEnabled ? [{ host: options.rpcHttpHost, port: options.rpcHttpPort }] : []),
    ...(options.rpcWsEnabled ? [{ host: options.rpcWsHost, port: options.rpcWsPort }] : []),
    ...(options.graphqlHttpEnabled ? [{ host: options.graphqlHttpHost, port: options.graphqlHttpPort }] : []),
    ...(options.metricsEnabled ? [{ host: options.metricsHost, port: options.metricsPort }] : []),
    ...(options.p2pEnabled ? [{ host: options.p2pInterface, port: options.p2pPort, udp: options.discoveryEnabled }] : []),
  ]);
  const dataPath = resolvePath(options.dataPath);
  mkdirSync(dataPath, { recursive: true });
  // Before any actor starts: on a first start this creates <data-path>/key, and a bad key file is refused
  // before the database is opened.
  const nodeKey = nodeKeyOf(options);
  const ipcPath = resolvePath(options.rpcIpcPath ?? join(dataPath, 'node.ipc'));
  // Before anything starts, as for ports: a live node on the IPC path refuses this one (a stale file is replaced later).
  if (options.rpcIpcEnabled && (await answersOnUnixSocket(ipcPath))) throw new StartupError(ipcPathInUseMessage(ipcPath));
  const logLevel = options.logging as LogLevel;
  const base = { logLevel, genesisJson: network.genesisJson, networkId: options.networkId ?? undefined };

  // What each transport thread serves (transportWorkerRoles): JSON-RPC over HTTP and WebSocket share
  // threads and ports, IPC is on the first JSON-RPC thread, GraphQL on the same threads or its own.
  const transportRoles = transportWorkerRoles(options);
  const transportWorkers = transportRoles.length;
  // One MessageChannel per edge of the actor graph (src/shared/actors/channels.ts); port1 goes to the
  // first actor the edge names, port2 to the second. The p2p actor and its edges exist only with
  // --p2p-enabled (the default).
  const p2pEnabled = options.p2pEnabled;
  const txpoolChain = new MessageChannel();
  const consensusChain = new MessageChannel();
  const consensusTxpool = new MessageChannel();
  const logIndexChain = new MessageChannel();
  const p2pChain = p2pEnabled ? new MessageChannel() : undefined;
  const p2pTxpool = p2pEnabled ? new MessageChannel() : undefined;
  const consensusP2p = p2pEnabled ? new MessageChannel() : undefined;
  const perTransport = () => Array.from({ length: transportWorkers }, () => new MessageChannel());
  const transportChain = perTransport();
  const transportTxpool = perTransport();
  const transportConsensus = perTransport();
  const transportLogIndex = perTransport();
  const transportP2p = p2pEnabled ? perTransport() : [];
  // State reader threads serve the JSON-RPC transports only: without one there is nothing for them to do.
  const stateReaders = transportWorkers > 0 ? options.stateReaderThreads : 0;
  const readerChain = Array.from({ length: stateReaders }, () => new MessageChannel());
  /** transportReader[transport][reader] */
  const transportReader = Array.from({ length: transportWorkers }, () => Array.from({ length: stateReaders }, () => new MessageChannel()));
  const headView = createHeadBuffer();
  const readerDemand = createReaderDemand();
  const p2pStatusView = createP2pStatusBuffer();
  const transportCounters = createTransportCounters();

  const actors: RunningActor[] = [];
  /** With --metrics-enabled: every actor thread as /metrics sees it, and the main thread's event loop. */
  const metricsThreads: MetricsThread[] = [];
  const mainEventLoop = options.metricsEnabled ? new EventLoopLagMonitor() : undefined;
  let metricsServer: MetricsServer | undefined;
  let httpGuard: ConnectionGuard | undefined;
  /** With the `node` engine, the relays that own the WebSocket and GraphQL ports. */
  let wsRelay: ConnectionGuard | undefined;
  let graphqlRelay: ConnectionGuard | undefined;
  const portOwners = () => [httpGuard, wsRelay, graphqlRelay].filter((owner) => owner !== undefined);
  let socketDir: string | undefined;
  let stopping = false;
  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((r) => (resolveExit = r));

  const spawn = <A extends ActorName>(actor: A, name: string, data: ActorDataOf[A]): Remote<ControlOf<A>> => {
    const mailboxCounters = mainEventLoop === undefined ? undefined : createMailboxCounters();
    const named: ActorDataOf[A] = { ...data, threadName: name };
    const workerData: ActorDataOf[A] = mailboxCounters === undefined ? named : { ...named, metrics: { mailboxCounters } };
    // Every port named in the actor's data moves to its thread.
    const worker = new Worker(new URL(`../../../workers/${WORKER_FILES[actor]}`, import.meta.url), {
      workerData,
      transferList: portsOf(data),
      resourceLimits: actorResourceLimits(actor),
    });
    const control = controlOf(actor, worker);
    if (mailboxCounters !== undefined) metricsThreads.push(metricsThread(actor, name, mailboxCounters, control));
    worker.on('error', (err) => {
      log.error(`${name} actor failed`, err);
      void shutdown(1);
    });
    worker.on('exit', (code) => {
      if (!stopping) {
        log.error(`${name} actor exited unexpectedly with code ${code}`);
        void shutdown(1);
      }
    });
    actors.push({ name, worker, stop: () => control.stop(), memory: () => control.memory(), collectGarbage: () => control.collectGarbage() });
    return control;
  };

  let memoryLog: NodeJS.Timeout | undefined;
  const startupCollections = new Set<NodeJS.Timeout>();
  /** Once threads have started: one collection each, when the start-up's allocations are behind them (memory.ts). */
  const collectGarbageSoon = (threads: ReadonlyArray<RunningActor | 'main'>): void => {
    const timer = setTimeout(() => {
      startupCollections.delete(timer);
      if (stopping) return;
      collectGarbageOf(threads).catch((err: unknown) => log.debug(`Garbage collection after start: ${errorMessage(err)}`));
    }, COLLECT_AFTER_START_MS);
    startupCollections.add(timer);
  };
  const shutdown = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    clearInterval(memoryLog);
    for (const timer of startupCollections) clearTimeout(timer);
    log.info(code === 0 ? 'Stopping Basalt' : 'Stopping Basalt after a failure');
    await metricsServer?.close();
    // Stop intake first (the HTTP port, then the transports, whose closing ends the connections the
    // guard still joins), then the producers, the pool, and the chain last so that it can finish the
    // block in progress and close RocksDB cleanly.
    for (const owner of portOwners()) owner.stopAccepting();
    const order = ['transport', 'reader', 'logindex', 'p2p', 'consensus', 'txpool', 'chain'];
    for (const prefix of order) {
      const group = actors.filter((a) => a.name.startsWith(prefix));
      await Promise.all(
        group.map((a) =>
          withTimeout(a.stop(), 10_000).catch((err: unknown) => log.warn(`${a.name} did not stop cleanly: ${String(err)}`)),
        ),
      );
      if (prefix === 'transport') await Promise.all(portOwners().map((owner) => owner.close()));
    }
    await Promise.all(actors.map((a) => a.worker.terminate().catch(() => 0)));
    if (socketDir !== undefined) rmSync(socketDir, { recursive: true, force: true });
    resolveExit(code);
  };

  const onSignal = (signal: string) => {
    log.info(`Received ${signal}`);
    void shutdown(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const snapshotDir = heapSnapshotDir(process.env);
  const onSnapshotSignal = () => {
    if (snapshotDir === undefined) return;
    writeHeapSnapshots(actors, snapshotDir).then(
      (files) => log.info(`Heap snapshots written: ${files.join(', ')}`),
      (err: unknown) => log.warn(`Could not write heap snapshots: ${errorMessage(err)}`),
    );
  };
  if (snapshotDir !== undefined) process.on('SIGUSR2', onSnapshotSignal);

  try {
    // Metrics listen first, as Besu's do: a scrape during a long start-up sees the threads started so far,
    // and the transports know the port for net_services.
    if (mainEventLoop !== undefined) {
      // prom-client loads only here: the main thread of a node without metrics does not carry it.
      const metrics: NodeMetrics = new (await import('../metrics/node-metrics.js')).NodeMetrics(options.metricsCategory);
      const sources = {
        head: new HeadReader(headView),
        ...(options.p2pEnabled ? { p2pStatus: new P2pStatusReader(p2pStatusView) } : {}),
        maxPeers: options.maxPeers,
        mainEventLoop,
        threads: () => metricsThreads,
      };
      metricsServer = await startMetricsServer({
        host: options.metricsHost,
        port: options.metricsPort,
        hostAllowlist: options.hostAllowlist,
        scrape: async () => ({ contentType: metrics.contentType, text: await metrics.text(await gatherFigures(sources)) }),
      });
      log.info(`Metrics service started and listening on ${options.metricsHost}:${metricsServer.port}`);
    }
    const chainData: ChainActorData = {
      ...base,
      actor: 'chain',
      dataPath,
      rpcGasCap: options.rpcGasCap,
      minGasPrice: options.minGasPrice,
      minPriorityFee: options.minPriorityFee,
      headView,
      chain: { revertReasonEnabled: options.revertReasonEnabled, targetGasLimit: options.targetGasLimit },
      ports: {
        txpool: txpoolChain.port2,
        consensus: consensusChain.port2,
        ...(p2pChain ? { p2p: p2pChain.port2 } : {}),
        logindex: logIndexChain.port2,
        transports: transportChain.map((c) => c.port2),
        readers: readerChain.map((c) => c.port2),
      },
    };
    const chain = spawn('chain', 'chain', chainData);
    const { head, genesisHash } = await chain.start();
    log.info(`Chain head #${head.number} ${toHex(head.hash)} (network ${network.name}, data path ${dataPath})`);
    // The readers start at the first call that needs one (reader-demand.ts); their channels exist from
    // now on, the transports' calls wait in them until then.
    const startReaders = async (): Promise<void> => {
      for (let r = 0; r < stateReaders && !stopping; r++) {
        const readerData: ReaderActorData = {
          ...base,
          actor: 'reader',
          rpcGasCap: options.rpcGasCap,
          headView,
          ports: { chain: readerChain[r]!.port1, transports: transportReader.map((channels) => channels[r]!.port2) },
        };
        await spawn('reader', `reader-${r}`, readerData).start();
      }
      if (stopping) return;
      log.info(`State reader threads started: ${stateReaders}`);
      collectGarbageSoon(actors.filter((actor) => actor.name.startsWith('reader-')));
    };
    if (stateReaders > 0) {
      log.info(`State reader threads: ${stateReaders}, started at the first call that reads state`);
      void readerDemanded(readerDemand).then(startReaders).catch((err: unknown) => {
        log.error(`Failed to start the state reader threads: ${errorMessage(err)}`);
        void shutdown(1);
      });
    }

    const logIndexData: LogIndexActorData = {
      ...base,
      actor: 'logindex',
      dataPath,
      rpcMaxLogsRange: BigInt(options.rpcMaxLogsRange),
      rpcMaxLogsCount: options.rpcMaxLogsCount,
      headView,
      ports: { chain: logIndexChain.port1, transports: transportLogIndex.map((c) => c.port2) },
    };
    await spawn('logindex', 'logindex', logIndexData).start();

    const poolData: TxPoolActorData = {
      ...base,
      actor: 'txpool',
      pool: {
        priceBump: options.txPoolPriceBump,
        blobPriceBump: options.txPoolBlobPriceBump,
        maxFutureBySender: options.txPoolMaxFutureBySender,
        minGasPrice: options.txPoolMinGasPrice,
        txFeeCap: options.rpcTxFeecap,
        noLocalPriority: options.txPoolNoLocalPriority,
        layerMaxCapacity: options.txPoolLayerMaxCapacity,
        maxPrioritized: options.txPoolMaxPrioritized,
        maxPrioritizedByType: { ...options.txPoolMaxPrioritizedByType },
        strictTxReplayProtection: options.strictTxReplayProtectionEnabled,
      },
      ports: {
        chain: txpoolChain.port1,
        consensus: consensusTxpool.port2,
        ...(p2pTxpool ? { p2p: p2pTxpool.port2 } : {}),
        transports: transportTxpool.map((c) => c.port2),
      },
    };
    await spawn('txpool', 'txpool', poolData).start();

    let p2pListening: { host: string; port: number } | undefined;
    if (p2pChain && p2pTxpool && consensusP2p) {
      const p2pData: P2pActorData = {
        ...base,
        actor: 'p2p',
        nodeKey,
        clientVersion: clientVersion(options.identity),
        advertisedHost: options.p2pHost,
        listenHost: options.p2pInterface,
        listenPort: options.p2pPort,
        maxPeers: options.maxPeers,
        bootnodes: [...(options.bootnodes ?? [])],
        genesisHash,
        discoveryEnabled: options.discoveryEnabled,
        p2pStatusView,
        ports: { chain: p2pChain.port1, consensus: consensusP2p.port2, txpool: p2pTxpool.port1, transports: transportP2p.map((c) => c.port2) },
      };
      const { port } = await spawn('p2p', 'p2p', p2pData).start();
      p2pListening = { host: options.p2pHost, port };
    }

    const consensusData: ConsensusActorData = {
      ...base,
      actor: 'consensus',
      nodeKey,
      extraDataVanity: vanityOf(options.minerExtraData),
      qbftEarlyRoundChange: options.qbftEarlyRoundChange,
      ports: {
        chain: consensusChain.port1,
        txpool: consensusTxpool.port1,
        ...(consensusP2p ? { p2p: consensusP2p.port1 } : {}),
        transports: transportConsensus.map((c) => c.port2),
      },
    };
    await spawn('consensus', 'consensus', consensusData).start();

    // On uWS the transport threads listen on the public ports themselves: with port 0 the first thread
    // has the kernel pick the port and the others share it. The `node` engine cannot share a port
    // between threads, so its threads listen on unix sockets in a directory only this user can enter,
    // behind relays that own the public ports (bound first, so that the threads know them for
    // net_services). HTTP sits behind such a relay on uWS too when --rpc-http-max-active-connections is
    // given: the relay is the connection guard that enforces it.
    const relayed = httpEngine?.engine === 'node';
    const httpGuarded = relayed || options.rpcHttpMaxActiveConnections !== undefined;
    /** One unix socket per thread that serves `role` (empty for the others), named by thread index. */
    const socketPathsOf = (prefix: string, serves: (role: TransportRole) => boolean): string[] => {
      socketDir ??= mkdtempSync(join(tmpdir(), 'basalt-http-'));
      return transportRoles.map((role, i) => (serves(role) ? join(socketDir!, `${prefix}-${i}.sock`) : ''));
    };
    const ownPort = (service: string, host: string, port: number, maxActiveConnections: number, socketPaths: string[]) =>
      startConnectionGuard({ service, host, port, maxActiveConnections, upstreams: socketPaths.filter((path) => path !== '') });
    let httpSocketPaths: string[] = [];
    let wsSocketPaths: string[] = [];
    let graphqlSocketPaths: string[] = [];
    if (options.rpcHttpEnabled && httpGuarded) {
      httpSocketPaths = socketPathsOf('worker', (role) => role.jsonRpc);
      const limit = options.rpcHttpMaxActiveConnections ?? Number.POSITIVE_INFINITY;
      httpGuard = await ownPort('JSON-RPC HTTP', options.rpcHttpHost, options.rpcHttpPort, limit, httpSocketPaths);
    }
    if (relayed && options.rpcWsEnabled) {
      wsSocketPaths = socketPathsOf('ws', (role) => role.jsonRpc);
      wsRelay = await ownPort('JSON-RPC WebSocket', options.rpcWsHost, options.rpcWsPort, Number.POSITIVE_INFINITY, wsSocketPaths);
    }
    if (relayed && options.graphqlHttpEnabled) {
      graphqlSocketPaths = socketPathsOf('graphql', (role) => role.graphql);
      graphqlRelay = await ownPort('GraphQL HTTP', options.graphqlHttpHost, options.graphqlHttpPort, Number.POSITIVE_INFINITY, graphqlSocketPaths);
    }
    let httpPort = httpGuard?.port ?? options.rpcHttpPort;
    let wsPort = wsRelay?.port ?? options.rpcWsPort;
    let graphqlPort = graphqlRelay?.port ?? options.graphqlHttpPort;
    for (let i = 0; i < transportWorkers; i++) {
      const role = transportRoles[i]!;
      const transportData: TransportActorData = {
        ...base,
        actor: 'transport',
        engine: httpEngine?.engine ?? 'uws',
        ...(role.jsonRpc && options.rpcHttpEnabled
          ? {
              http: {
                server: {
                  host: options.rpcHttpHost,
                  port: httpPort,
                  ...(httpGuard ? { socketPath: httpSocketPaths[i]! } : {}),
                  hostAllowlist: options.hostAllowlist,
                  corsOrigins: options.rpcHttpCorsOrigins,
                  maxRequestContentLength: options.rpcHttpMaxRequestContentLength,
                  maxBatchSize: options.rpcHttpMaxBatchSize,
                  prettyPrint: options.jsonPrettyPrintEnabled,
                },
                apis: options.rpcHttpApi,
                ...(httpAuthentication === undefined ? {} : { authentication: httpAuthentication }),
              },
            }
          : {}),
        ...(role.jsonRpc && options.rpcWsEnabled
          ? {
              ws: {
                server: {
                  host: options.rpcWsHost,
                  port: wsPort,
                  ...(wsRelay ? { socketPath: wsSocketPaths[i]! } : {}),
                  hostAllowlist: options.hostAllowlist,
                  maxActiveConnections: options.rpcWsMaxActiveConnections,
                  maxFrameSize: options.rpcWsMaxFrameSize,
                },
                apis: options.rpcWsApi,
                ...(wsAuthentication === undefined ? {} : { authentication: wsAuthentication }),
              },
            }
          : {}),
        ...(role.ipc ? { ipc: { path: ipcPath, apis: options.rpcIpcApi.filter((api) => api !== 'ENGINE') } } : {}),
        ...(role.graphql
          ? {
              graphql: {
                host: options.graphqlHttpHost,
                port: graphqlPort,
                ...(graphqlRelay ? { socketPath: graphqlSocketPaths[i]! } : {}),
                hostAllowlist: options.hostAllowlist,
                corsOrigins: options.graphqlHttpCorsOrigins,
                maxRequestContentLength: options.rpcHttpMaxRequestContentLength,
                timeoutSeconds: 30,
                maxQueryComplexity: options.graphqlMaxQueryComplexity,
                maxQueryDepth: options.graphqlMaxQueryDepth,
              },
            }
          : {}),
        // GraphQL's threads start first (transportWorkerRoles), so its port is known here.
        ...(options.graphqlHttpEnabled && !role.graphql ? { graphqlService: { host: options.graphqlHttpHost, port: graphqlPort } } : {}),
        ...(metricsServer !== undefined ? { metricsService: { host: options.metricsHost, port: metricsServer.port } } : {}),
        counters: transportCounters,
        chainId: network.chainId,
        clientVersion: clientVersion(options.identity),
        p2pEnabled: options.p2pEnabled,
        ...(p2pListening ? { p2p: p2pListening, p2pStatusView } : {}),
        headView,
        ...(stateReaders > 0 ? { readerDemand } : {}),
        ports: {
          chain: transportChain[i]!.port1,
          txpool: transportTxpool[i]!.port1,
          consensus: transportConsensus[i]!.port1,
          logindex: transportLogIndex[i]!.port1,
          ...(transportP2p[i] ? { p2p: transportP2p[i]!.port1 } : {}),
          readers: transportReader[i]!.map((c) => c.port1),
        },
      };
      const bound = await spawn('transport', `transport-${i}`, transportData).start();
      httpPort = bound.httpPort ?? httpPort;
      wsPort = bound.wsPort ?? wsPort;
      graphqlPort = bound.graphqlPort ?? graphqlPort;
    }
    const workers = (role: 'jsonRpc' | 'graphql') => {
      const count = transportRoles.filter((r) => r[role]).length;
      return `${count} worker${count > 1 ? 's' : ''}`;
    };
    wsRelay?.open();
    graphqlRelay?.open();
    httpGuard?.open();
    if (options.rpcHttpEnabled) {
      const limit = options.rpcHttpMaxActiveConnections === undefined ? '' : `, at most ${options.rpcHttpMaxActiveConnections} connections`;
      log.info(`JSON-RPC HTTP service started and listening on ${options.rpcHttpHost}:${httpPort} (${workers('jsonRpc')}${limit})`);
    }
    if (httpAuthentication !== undefined) log.info(`JSON-RPC HTTP authentication enabled: ${describeAuthentication(httpAuthentication)}`);
    if (options.rpcWsEnabled) log.info(`Websocket service started and listening on ${options.rpcWsHost}:${wsPort} (${workers('jsonRpc')})`);
    if (wsAuthentication !== undefined) log.info(`JSON-RPC WebSocket authentication enabled: ${describeAuthentication(wsAuthentication)}`);
    if (options.rpcIpcEnabled) log.info(`JSON-RPC IPC service started and listening on ${ipcPath}`);
    if (options.graphqlHttpEnabled) log.info(`GraphQL HTTP service started and listening on ${options.graphqlHttpHost}:${graphqlPort} (${workers('graphql')})`);
    log.info('Basalt is running');
    collectGarbageSoon(['main', ...actors]);
    const memoryInterval = memoryLogIntervalMs(process.env);
    if (memoryInterval !== undefined) {
      memoryLog = setInterval(() => {
        void collectNodeMemory(actors).then((memory) => {
          if (!stopping) log.info(formatNodeMemory(memory));
        });
      }, memoryInterval);
    }
  } catch (err) {
    // What went wrong, in one line; the stack only helps a developer.
    log.error(`Failed to start Basalt: ${err instanceof Error ? err.message : String(err)}`);
    if (err instanceof Error && err.stack) log.debug(err.stack);
    await shutdown(2);
  }

  const code = await exited;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.off('SIGUSR2', onSnapshotSignal);
  return code;
}

/** What one transport thread serves: the JSON-RPC HTTP/WebSocket ports (those enabled), IPC, GraphQL HTTP. */
export interface TransportRole {
  jsonRpc: boolean;
  ipc: boolean;
  graphql: boolean;
}

/**
 * The transport threads and what each serves. `--rpc-http-workers` threads serve JSON-RPC over HTTP
 * and WebSocket, and GraphQL too unless `--graphql-http-workers` gives it threads of its own; IPC
 * alone needs one thread. GraphQL's own threads come first: the JSON-RPC threads name its port
 * (known once bound) in net_services.
 */
export function transportWorkerRoles(
  options: Pick<NodeOptions, 'rpcHttpEnabled' | 'rpcWsEnabled' | 'rpcIpcEnabled' | 'graphqlHttpEnabled' | 'rpcHttpWorkers' | 'graphqlHttpWorkers'>,
): TransportRole[] {
  const jsonRpcPorts = options.rpcHttpEnabled || options.rpcWsEnabled;
  const ownGraphql = options.graphqlHttpEnabled && options.graphqlHttpWorkers > 0;
  const sharedGraphql = options.graphqlHttpEnabled && !ownGraphql;
  const sharedCount = jsonRpcPorts || sharedGraphql ? options.rpcHttpWorkers : options.rpcIpcEnabled ? 1 : 0;
  return [
    ...Array.from({ length: ownGraphql ? options.graphqlHttpWorkers : 0 }, () => ({ jsonRpc: false, ipc: false, graphql: true })),
    ...Array.from({ length: sharedCount }, (_, i) => ({ jsonRpc: jsonRpcPorts, ipc: options.rpcIpcEnabled && i === 0, graphql: sharedGraphql })),
  ];
}

/** Besu writes `--miner-extra-data` (default: the client name and version) left-padded to 32 bytes. */
function vanityOf(extraData: Uint8Array | undefined): Uint8Array {
  const bytes = extraData ?? new TextEncoder().encode(`basalt ${BASALT_VERSION}`).subarray(0, 32);
  const vanity = new Uint8Array(32);
  vanity.set(bytes.subarray(0, 32), 32 - Math.min(bytes.length, 32));
  return vanity;
}

function toHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
