/**
 * The metrics port (`--metrics-enabled`, `--metrics-host`, `--metrics-port`): Prometheus text on
 * `GET /metrics`, as Besu's metrics service. A request from a host `--host-allowlist` does not name
 * gets 403 with no body (spec rpc-auth-cli.md §1.9); another path 404, another method on /metrics 405.
 *
 * It runs on the main thread, beside the supervisor that gathers the figures: a scrape every few
 * seconds costs it one call to each actor thread and a few kilobytes of text.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHostAllowlist } from '../../shared/util/host-allowlist.js';
import { errorMessage } from '../../shared/util/errors.js';
import { Logger } from '../../shared/util/log.js';

const log = new Logger('Metrics');

export interface MetricsServerConfig {
  host: string;
  /** 0 lets the kernel pick. */
  port: number;
  hostAllowlist: readonly string[];
  /** One scrape: the exposition text and its content type. */
  scrape(): Promise<{ contentType: string; text: string }>;
}

export interface MetricsServer {
  /** The port bound. */
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(cfg: MetricsServerConfig): Promise<MetricsServer> {
  const hostAllowed = createHostAllowlist(cfg.hostAllowlist);
  const serve = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (!hostAllowed(request.headers.host)) return void response.writeHead(403).end();
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') return void response.writeHead(404).end();
    if (request.method !== 'GET' && request.method !== 'HEAD') return void response.writeHead(405, { allow: 'GET' }).end();
    try {
      const { contentType, text } = await cfg.scrape();
      response.writeHead(200, { 'content-type': contentType });
      response.end(request.method === 'HEAD' ? undefined : text);
    } catch (err) {
      log.warn(`Metrics scrape failed: ${errorMessage(err)}`);
      response.writeHead(500).end();
    }
  };
  const server = createServer((request, response) => void serve(request, response));
  const port = await new Promise<number>((resolve, reject) => {
    const failed = (err: Error): void => reject(new Error(`Failed to bind the metrics port ${cfg.host}:${cfg.port}: ${err.message}`));
    server.once('error', failed);
    server.listen({ host: cfg.host, port: cfg.port, exclusive: true }, () => {
      server.off('error', failed);
      server.on('error', (err) => log.warn(`Metrics port: ${err.message}`));
      const address = server.address();
      if (typeof address === 'object' && address !== null) resolve(address.port);
      else reject(new Error(`no port bound on ${cfg.host}`));
    });
  });
  return {
    port,
    close: async () => {
      // Idle keep-alive connections would hold close() up; a scraper reconnects.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
