/**
 * The baseline for the WebSocket benchmark: a bare uWebSockets.js WebSocket server answering every
 * message with a fixed JSON-RPC body, with none of the node's parsing, dispatch or actor hops. Run
 * as a child process by ws-throughput.js: `node dist/bench/bare-uws-ws-server.js PORT` (0: a free
 * port); it reports `{listening: port}` with the bound port over IPC and exits when its parent goes.
 */
import uWS from 'uWebSockets.js';

export const BARE_WS_BODY = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';

const port = Number(process.argv[2]);

uWS
  .App()
  .ws('/*', {
    maxPayloadLength: 4 * 1024 * 1024,
    message: (ws) => {
      ws.send(BARE_WS_BODY, false);
    },
  })
  .listen('127.0.0.1', port, (listenSocket) => {
    if (!listenSocket) {
      process.send?.({ error: `could not listen on 127.0.0.1:${port}` });
      process.exit(1);
    }
    process.send?.({ listening: uWS.us_socket_local_port(listenSocket as unknown as Parameters<typeof uWS.us_socket_local_port>[0]) });
  });

// Never outlive the benchmark that started this server.
process.on('disconnect', () => process.exit(0));
