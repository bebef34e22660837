/**
 * Closed-loop JSON-RPC load over WebSocket (the `ws` client, as the peer benchmark's ws-load.mjs
 * uses): `connections` sockets with `inflight` requests outstanding on each; every answer sends the
 * next request. Answers are matched by id, or in order when the server echoes a fixed id.
 */
import WebSocket from 'ws';
import { LatencyRecorder } from './stats.js';

export interface WsLoadOptions {
  url: string;
  connections: number;
  inflight: number;
  durationMs: number;
  /** The request text for id `id`. */
  request(id: number): string;
}

export interface WsLoadResult {
  answered: number;
  /** Answers without a result (errors), and sockets that failed. */
  errors: number;
  wallMs: number;
  latencies: LatencyRecorder;
}

export async function runWsLoad(options: WsLoadOptions): Promise<WsLoadResult> {
  const sockets = await Promise.all(
    Array.from(
      { length: options.connections },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(options.url, { perMessageDeflate: false });
          socket.once('open', () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  const latencies = new LatencyRecorder();
  let answered = 0;
  let errors = 0;
  let running = true;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    sockets.forEach((socket, index) => {
      const sent = new Map<number, number>();
      let nextId = index * 1_000_000_000;
      const send = (): void => {
        const id = ++nextId;
        sent.set(id, performance.now());
        socket.send(options.request(id));
      };
      socket.on('message', (data) => {
        const text = String(data);
        const idMatch = /"id":(\d+)/.exec(text);
        const key = idMatch !== null && sent.has(Number(idMatch[1])) ? Number(idMatch[1]) : sent.keys().next().value;
        const at = key === undefined ? undefined : sent.get(key);
        if (key !== undefined) sent.delete(key);
        if (at !== undefined) latencies.add(performance.now() - at);
        if (text.includes('"result"')) answered++;
        else errors++;
        if (running) send();
      });
      socket.on('error', () => errors++);
      for (let i = 0; i < options.inflight; i++) send();
    });
    setTimeout(() => {
      running = false;
      resolve();
    }, options.durationMs);
  });
  const wallMs = performance.now() - started;
  for (const socket of sockets) socket.terminate();
  return { answered, errors, wallMs, latencies };
}
