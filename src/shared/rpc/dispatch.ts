/**
 * The one JSON-RPC dispatcher: every owner of methods (each actor, and a transport for the methods it
 * answers itself) serves its `MethodHandlers` through it, so a call that reaches an owner which does
 * not own the method is answered the same way everywhere.
 */
import { RpcError, RpcErrors } from './errors.js';
import { methodNamesOwnedBy, type MethodHandlers, type MethodsOwnedBy, type Owner, type ParamsOf, type WireHandler } from './registry.js';
import type { Json, Wire } from './types.js';
import { answerText, type JsonText } from './json-text.js';

export type MethodServer = (method: string, params: Wire) => Promise<Json>;

export function serveMethods<O extends Owner>(owner: O, handlers: MethodHandlers<O>): MethodServer {
  return serveTable<O, Json>(owner, handlers);
}

/** One handler per method `owner` owns, found by name; a method it does not own is "Method not found". */
function serveTable<O extends Owner, R>(owner: O, handlers: Readonly<Record<MethodsOwnedBy<O>, AnyHandler<R>>>): (method: string, params: Wire) => Promise<R> {
  const table = new Map<string, AnyHandler<R>>();
  const all: Readonly<Record<string, AnyHandler<R>>> = handlers;
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

/** Method syntax: a handler of precise params is a handler of Wire params (see `Handler` in registry.ts). */
type AnyHandler<R> = { handle(params: Wire): R | Promise<R> }['handle'];

/** A MethodServer that answers each result as its JSON text, as an actor answers a transport (channels.ts). */
export type JsonTextServer = (method: string, params: Wire) => Promise<JsonText>;

export function serveMethodsAsJsonText<O extends Owner>(owner: O, handlers: MethodHandlers<O>): JsonTextServer {
  const serve = serveMethods(owner, handlers);
  // A large result (a block with its transactions, say) leaves as bytes (json-text.ts).
  return async (method, params) => answerText([JSON.stringify((await serve(method, params)) ?? null)]);
}

/**
 * Handlers that answer JSON text themselves: an owner that keeps the text of what it answers (the log
 * index keeps each log's) puts an answer together without building and serialising objects again.
 */
export type MethodTextHandlers<O extends Owner> = {
  readonly [M in MethodsOwnedBy<O>]: { handle(params: ParamsOf<M>): JsonText | Promise<JsonText> }['handle'];
};

export function serveTextMethods<O extends Owner>(owner: O, handlers: MethodTextHandlers<O>): JsonTextServer {
  return serveTable<O, JsonText>(owner, handlers);
}
