/**
 * The one JSON-RPC dispatcher: every owner of methods (each actor, and a transport for the methods it
 * answers itself) serves its `MethodHandlers` through it, so a call that reaches an owner which does
 * not own the method is answered the same way everywhere.
 */
import { RpcError, RpcErrors } from './errors.js';
import { methodNamesOwnedBy, type MethodHandlers, type Owner, type WireHandler } from './registry.js';
import type { Json, Wire } from './types.js';

export type MethodServer = (method: string, params: Wire) => Promise<Json>;

export function serveMethods<O extends Owner>(owner: O, handlers: MethodHandlers<O>): MethodServer {
  const table = new Map<string, WireHandler>();
  const all: Readonly<Record<string, WireHandler>> = handlers;
  for (const name of methodNamesOwnedBy(owner)) {
    const handler = all[name];
    if (handler === undefined) throw new Error(`${owner} registers ${name} but has no handler for it`);
    table.set(name, handler);
  }
  return async (method, params) => {
    const handler = table.get(method);
    if (handler === undefined) throw new RpcError(RpcErrors.METHOD_NOT_FOUND);
    return handler(params);
  };
}

/** A MethodServer that answers each result as its JSON text, as an actor answers a transport (channels.ts). */
export type JsonTextServer = (method: string, params: Wire) => Promise<string>;

export function serveMethodsAsJsonText<O extends Owner>(owner: O, handlers: MethodHandlers<O>): JsonTextServer {
  const serve = serveMethods(owner, handlers);
  return async (method, params) => JSON.stringify((await serve(method, params)) ?? null);
}
