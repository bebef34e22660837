/**
 * JSON-RPC over IPC (rpc-auth-cli.md §7): a Unix domain socket at `--Xrpc-ipc-path`, concatenated JSON
 * values in (json-splitter.ts), one JSON text per line out. No authentication and no host check: who
 * may connect is decided by the socket file's permissions, owner only.
 *
 * The file never exists with wider permissions: the socket is bound inside a fresh directory only the
 * owner can enter, made owner-only there, then renamed into place. A socket file left by a node that
 * crashed is replaced; one a live node answers on is refused. The file is removed on stop.
 */
import { chmod, lstat, mkdtemp, rename, rmdir, unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { Logger } from '../shared/util/log.js';
import { answersOnUnixSocket, ipcPathInUseMessage } from '../shared/util/unix-socket.js';
import { JsonValueSplitter } from './json-splitter.js';
import { IPC_RULES, parseFailureAnswer } from './jsonrpc-stream.js';
import type { StreamSession } from './stream-session.js';
import { SEND_BUFFER_LIMIT } from './engine.js';
import type { JsonText } from '../shared/rpc/json-text.js';

const log = new Logger('JsonRpcIpc');

/** The longest JSON value kept while waiting for its end: the HTTP port's default body limit. */
export const MAX_IPC_VALUE_LENGTH = 128 * 1024 * 1024;

const PARSE_ERROR_ANSWER = parseFailureAnswer(IPC_RULES);

export interface IpcServerConfig {
  path: string;
  /** A new connection: the session that answers its values, writing through `write`. */
  openSession(write: (text: JsonText) => void): StreamSession;
  /** Overrides SEND_BUFFER_LIMIT (tests). */
  sendBufferLimit?: number;
}

export interface IpcServerHandle {
  readonly path: string;
  close(): Promise<void>;
}

export class IpcPathError extends Error {}

/** Clears the way for the socket: nothing there, or a stale socket (removed); throws otherwise. */
async function claimPath(path: string): Promise<void> {
  const existing = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing === undefined) return;
  if (!existing.isSocket()) throw new IpcPathError(`Cannot start JSON-RPC IPC: ${path} exists and is not a socket`);
  if (await answersOnUnixSocket(path)) throw new IpcPathError(ipcPathInUseMessage(path));
  log.info(`Removing the stale IPC socket ${path} left by a node that did not stop cleanly`);
  await unlink(path);
}

/** Listens on a socket only the owner can use, then moves it to `path`. */
async function listenPrivately(server: Server, path: string): Promise<void> {
  const privateDir = await mkdtemp(join(dirname(path), '.ipc-'));
  const bound = join(privateDir, 's');
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(bound, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await chmod(bound, 0o600);
    await rename(bound, path);
  } finally {
    await rmdir(privateDir).catch(() => undefined);
  }
}

export async function startIpcServer(cfg: IpcServerConfig): Promise<IpcServerHandle> {
  const sendBufferLimit = cfg.sendBufferLimit ?? SEND_BUFFER_LIMIT;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setEncoding('utf8');
    const splitter = new JsonValueSplitter(MAX_IPC_VALUE_LENGTH);
    let cut = false;
    const session = cfg.openSession((text) => {
      if (cut || socket.destroyed) return;
      if (typeof text === 'string') socket.write(text + '\n');
      else {
        socket.write(text);
        socket.write('\n');
      }
      if (socket.writableLength > sendBufferLimit) {
        cut = true;
        log.warn(`Closed an IPC connection: more than ${sendBufferLimit} bytes waited for it to read; its subscriptions are dropped`);
        setImmediate(() => socket.destroy());
      }
    });
    socket.on('data', (chunk: string) => {
      for (const item of splitter.push(chunk)) {
        if (item.kind === 'value') {
          session.receive(item.text);
        } else {
          session.send(PARSE_ERROR_ANSWER);
          if (item.kind === 'too-large') socket.destroy();
        }
      }
    });
    socket.on('error', (err) => log.debug(`IPC connection error: ${err.message}`));
    socket.on('close', () => {
      sockets.delete(socket);
      session.close();
    });
  });
  await claimPath(cfg.path);
  await listenPrivately(server, cfg.path);
  const { ino } = await lstat(cfg.path);
  return {
    path: cfg.path,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      // Only our own socket: another node may have replaced a file we no longer answered on.
      const now = await lstat(cfg.path).catch(() => undefined);
      if (now?.ino === ino) await unlink(cfg.path).catch(() => undefined);
    },
  };
}
