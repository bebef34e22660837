/**
 * The baseline for the RPC benchmark: a bare uWebSockets.js server answering every POST with a fixed
 * JSON-RPC body, with none of the node's parsing, routing or actor hops. Run as a child process by
 * rpc-throughput.js: `node dist/bench/bare-uws-server.js PORT` (0: a free port); it reports
 * `{listening: port}` with the bound port over IPC and exits when its parent goes away.
 */
import { createRequire } from 'node:module';

interface UwsResponse {
  end(body: string): UwsResponse;
}
interface UwsApp {
  post(pattern: string, handler: (res: UwsResponse) => void): UwsApp;
  listen(host: string, port: number, callback: (listenSocket: unknown) => void): UwsApp;
}
interface UwsModule {
  App(): UwsApp;
  us_socket_local_port(listenSocket: unknown): number;
}

export const BARE_BODY = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';

const require = createRequire(import.meta.url);
const uws = require('uWebSockets.js') as UwsModule;
const port = Number(process.argv[2]);

uws
  .App()
  .post('/*', (res) => res.end(BARE_BODY))
  .listen('127.0.0.1', port, (listenSocket) => {
    if (!listenSocket) {
      process.send?.({ error: `could not listen on 127.0.0.1:${port}` });
      process.exit(1);
    }
    process.send?.({ listening: uws.us_socket_local_port(listenSocket) });
  });

// Never outlive the benchmark that started this server.
process.on('disconnect', () => process.exit(0));
