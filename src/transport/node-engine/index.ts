/**
 * The `node` engine (engine.ts): the HTTP ports on `node:http` and the `ws` package, for a Node.js
 * on which no native uWebSockets.js build loads. Same policy, routes, answers and limits as the uWS
 * engine; each thread listens on a private unix socket and the supervisor relays the public ports.
 */
import type { TransportEngine } from '../engine.js';
import { startGraphqlServer } from './graphql-server.js';
import { startHttpServer } from './http-server.js';
import { startWsServer } from './ws-server.js';

export const NODE_ENGINE: TransportEngine = { name: 'node', startHttpServer, startWsServer, startGraphqlServer };
