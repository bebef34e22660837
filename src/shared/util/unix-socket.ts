/**
 * Whether a process answers on a Unix domain socket: how a socket file left by a process that died
 * (nothing answers) is told from one in use.
 */
import { connect } from 'node:net';

export function answersOnUnixSocket(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** The refusal when another process serves the IPC path (checked before the node starts, and again when it binds). */
export function ipcPathInUseMessage(path: string): string {
  return `Cannot start JSON-RPC IPC: another process is serving ${path} (is another node running with this --Xrpc-ipc-path or data path?)`;
}
