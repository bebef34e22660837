import { mkdirSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { Remote } from 'comlink';
import type { NodeOptions } from '../cli/options.js';
import { dependencyWarnings } from '../cli/resolve.js';
import type { ActorControl } from '../../shared/actors/control.js';
import { controlOf } from '../../shared/actors/control.js';
import type { ChainActorData, ConsensusActorData, HttpActorData, P2pActorData, TxPoolActorData } from '../../shared/actors/worker-data.js';
import type { HeadInfo } from '../../chain/chain.js';
import { createHeadBuffer } from '../../shared/shared-memory/head-view.js';
import { createP2pStatusBuffer } from '../../shared/shared-memory/p2p-status-view.js';
import { assertNativeUws } from '../../shared/uws-native.js';
import { Logger, setLogLevel } from '../../shared/util/log.js';
import type { LogLevel } from '../../shared/util/log.js';
import { resolveNetwork } from './network.js';
import { assertPortsFree } from './ports.js';
import { BASALT_VERSION, clientVersion } from './version.js';

const log = new Logger('Supervisor');

interface Actor {
  name: string;
  worker: Worker;
  control: Remote<ActorControl<unknown>>;
}

/**
 * Starts the node: the chain actor first (it owns the database and must have a head before anyone
 * asks), then the pool, devp2p, consensus and the HTTP transports. Resolves with the process exit code once
 * the node has stopped: 0 after a requested shutdown, non-zero when an actor died.
 */
export async function runNode(options: NodeOptions): Promise<number> {
  setLogLevel(options.logging as LogLevel);
  for (const warning of dependencyWarnings(options)) log.warn(warning);
  if (options.rpcHttpEnabled) assertNativeUws();

  const network = resolveNetwork(options);
  await assertPortsFree([
    ...(options.rpcHttpEnabled ? [{ host: options.rpcHttpHost, port: options.rpcHttpPort }] : []),
    ...(options.p2pEnabled ? [{ host: options.p2pInterface, port: options.p2pPort }] : []),
  ]);
  const dataPath = resolvePath(options.dataPath);
  mkdirSync(dataPath, { recursive: true });
  const logLevel = options.logging as LogLevel;
  const base = { logLevel, genesisJson: network.genesisJson, networkId: options.networkId ?? undefined };

  const httpWorkers = options.rpcHttpEnabled ? options.rpcHttpWorkers : 0;
  const chainPool = new MessageChannel();
  const chainConsensus = new MessageChannel();
  const poolConsensus = new MessageChannel();
  const httpChain = Array.from({ length: httpWorkers }, () => new MessageChannel());
  const httpPool = Array.from({ length: httpWorkers }, () => new MessageChannel());
  const httpConsensus = Array.from({ length: httpWorkers }, () => new MessageChannel());
  // The p2p actor and its channels exist only with --p2p-enabled (the default).
  const p2pEnabled = options.p2pEnabled;
  const chainP2p = p2pEnabled ? new MessageChannel() : undefined;
  const consensusP2p = p2pEnabled ? new MessageChannel() : undefined;
  const poolP2p = p2pEnabled ? new MessageChannel() : undefined;
  const httpP2p = Array.from({ length: p2pEnabled ? httpWorkers : 0 }, () => new MessageChannel());
  const headView = createHeadBuffer();
  const p2pStatusView = createP2pStatusBuffer();

  const actors: Actor[] = [];
  let stopping = false;
  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((r) => (resolveExit = r));

  const spawn = <D extends { ports: { [channel: string]: MessagePort | MessagePort[] | undefined } }>(name: string, file: string, data: D): Actor => {
    // Every port named in the actor's data moves to its thread.
    const transferList = Object.values(data.ports).flatMap((port) => (port === undefined ? [] : port));
    const worker = new Worker(new URL(`../../../workers/${file}`, import.meta.url), { workerData: data, transferList });
    const actor: Actor = { name, worker, control: controlOf<unknown>(worker) };
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
    actors.push(actor);
    return actor;
  };

  const shutdown = async (code: number): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info(code === 0 ? 'Stopping Basalt' : 'Stopping Basalt after a failure');
    // Stop intake first (transports), then the producers, the pool, and the chain last so that it
    // can finish the block in progress and close RocksDB cleanly.
    const order = ['http', 'p2p', 'consensus', 'txpool', 'chain'];
    for (const prefix of order) {
      const group = actors.filter((a) => a.name.startsWith(prefix));
      await Promise.all(
        group.map((a) =>
          withTimeout(a.control.stop(), 10_000).catch((err: unknown) => log.warn(`${a.name} did not stop cleanly: ${String(err)}`)),
        ),
      );
    }
    await Promise.all(actors.map((a) => a.worker.terminate().catch(() => 0)));
    resolveExit(code);
  };

  const onSignal = (signal: string) => {
    log.info(`Received ${signal}`);
    void shutdown(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const chainData: ChainActorData = {
      ...base,
      dataPath,
      rpcGasCap: options.rpcGasCap,
      minGasPrice: options.minGasPrice,
      rpcMaxLogsRange: BigInt(options.rpcMaxLogsRange),
      minPriorityFee: options.minPriorityFee,
      headView,
      // The chain serves every port of `http` alike; the p2p actor's read channel joins them.
      ports: { txpool: chainPool.port1, consensus: chainConsensus.port1, http: [...httpChain.map((c) => c.port1), ...(chainP2p ? [chainP2p.port1] : [])] },
    };
    const chain = spawn('chain', 'chain.worker.js', chainData);
    const head = (await chain.control.start()) as HeadInfo;
    log.info(`Chain head #${head.number} ${toHex(head.hash)} (network ${network.name}, data path ${dataPath})`);

    const poolData: TxPoolActorData = {
      ...base,
      pool: {
        priceBump: options.txPoolPriceBump,
        maxFutureBySender: options.txPoolMaxFutureBySender,
        minGasPrice: options.txPoolMinGasPrice,
        txFeeCap: options.rpcTxFeecap,
        noLocalPriority: options.txPoolNoLocalPriority,
      },
      ports: {
        chain: chainPool.port2,
        consensus: poolConsensus.port1,
        http: httpPool.map((c) => c.port1),
        ...(poolP2p ? { p2p: poolP2p.port1 } : {}),
      },
    };
    const pool = spawn('txpool', 'txpool.worker.js', poolData);
    await pool.control.start();

    const nodeKey = network.nodeKey(dataPath);
    let p2pListening: { host: string; port: number } | undefined;
    if (chainP2p && consensusP2p && poolP2p) {
      const p2pData: P2pActorData = {
        ...base,
        nodeKey,
        clientVersion: clientVersion(options.identity),
        advertisedHost: options.p2pHost,
        listenHost: options.p2pInterface,
        listenPort: options.p2pPort,
        maxPeers: options.maxPeers,
        bootnodes: [...(options.bootnodes ?? [])],
        p2pStatusView,
        headView,
        ports: { chain: chainP2p.port2, consensus: consensusP2p.port1, txpool: poolP2p.port2, http: httpP2p.map((c) => c.port1) },
      };
      const p2p = spawn('p2p', 'p2p.worker.js', p2pData);
      const { port } = (await p2p.control.start()) as { port: number };
      p2pListening = { host: options.p2pHost, port };
    }

    const consensusData: ConsensusActorData = {
      ...base,
      nodeKey,
      extraDataVanity: vanityOf(options.minerExtraData),
      qbftEarlyRoundChange: options.qbftEarlyRoundChange,
      ports: {
        chain: chainConsensus.port2,
        txpool: poolConsensus.port2,
        http: httpConsensus.map((c) => c.port1),
        ...(consensusP2p ? { p2p: consensusP2p.port2 } : {}),
      },
    };
    const consensus = spawn('consensus', 'consensus.worker.js', consensusData);
    await consensus.control.start();

    // With --rpc-http-port=0 the first worker picks the port and the others share it.
    let httpPort = options.rpcHttpPort;
    for (let i = 0; i < httpWorkers; i++) {
      const httpData: HttpActorData = {
        ...base,
        server: {
          host: options.rpcHttpHost,
          port: httpPort,
          hostAllowlist: options.hostAllowlist,
          corsOrigins: options.rpcHttpCorsOrigins,
          maxRequestContentLength: options.rpcHttpMaxRequestContentLength,
          maxBatchSize: options.rpcHttpMaxBatchSize,
          prettyPrint: options.jsonPrettyPrintEnabled,
        },
        apis: options.rpcHttpApi,
        chainId: network.chainId,
        clientVersion: clientVersion(options.identity),
        p2pEnabled: options.p2pEnabled,
        ...(p2pListening ? { p2p: p2pListening, p2pStatusView } : {}),
        headView,
        ports: {
          chain: httpChain[i]!.port2,
          txpool: httpPool[i]!.port2,
          consensus: httpConsensus[i]!.port2,
          ...(httpP2p[i] ? { p2p: httpP2p[i]!.port2 } : {}),
        },
      };
      const http = spawn(`http-${i}`, 'http.worker.js', httpData);
      httpPort = (await http.control.start()) as number;
    }
    if (httpWorkers > 0) {
      log.info(`JSON-RPC HTTP service started and listening on ${options.rpcHttpHost}:${httpPort} (${httpWorkers} worker${httpWorkers > 1 ? 's' : ''})`);
    }
    log.info('Basalt is running');
  } catch (err) {
    // What went wrong, in one line; the stack only helps a developer.
    log.error(`Failed to start Basalt: ${err instanceof Error ? err.message : String(err)}`);
    if (err instanceof Error && err.stack) log.debug(err.stack);
    await shutdown(2);
  }

  const code = await exited;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return code;
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
