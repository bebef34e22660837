/**
 * The JSON-RPC HTTP body with authentication on (spec rpc-auth-cli.md §8.6): without a bearer token and
 * with no no-auth method, 401 before the body is parsed (even bad JSON or unknown methods get it);
 * otherwise the token, valid or not, decides what each method of the body may do, one verification for
 * the whole body however many batch entries it has.
 */
import { RpcErrors } from '../../shared/rpc/errors.js';
import { handleJsonRpcBody, type HttpReply, type JsonRpcContext } from '../jsonrpc.js';
import type { Authenticator } from './authenticator.js';
import { bearerToken } from './bearer.js';
import type { MethodAccess } from './permissions.js';

export const UNAUTHORIZED_REPLY: HttpReply = {
  status: 401,
  body: `{"jsonrpc":"2.0","id":null,"error":{"code":${RpcErrors.UNAUTHORIZED.code},"message":"${RpcErrors.UNAUTHORIZED.message}"}}`,
};

/** Handles a body whose request carried `authorization` (the header's value, undefined when absent). */
export type AuthenticatedBodyHandler = (body: string, authorization: string | undefined) => Promise<HttpReply>;

export function authenticatedJsonRpc(rpc: JsonRpcContext, authenticator: Authenticator): AuthenticatedBodyHandler {
  // One context per access, kept as long as the access is (a cached token's lives until its exp).
  const contexts = new WeakMap<MethodAccess, JsonRpcContext>();
  const contextOf = (access: MethodAccess): JsonRpcContext => {
    let context = contexts.get(access);
    if (context === undefined) {
      context = { ...rpc, call: (method, params) => rpc.call(method, params, access) };
      contexts.set(access, context);
    }
    return context;
  };
  return (body, authorization) => {
    const token = bearerToken(authorization);
    if (token === undefined && authenticator.tokenRequired) return Promise.resolve(UNAUTHORIZED_REPLY);
    const access = authenticator.accessOf(token);
    // A known token answers at once: no extra turn of the microtask queue on the common path.
    return access instanceof Promise ? access.then((known) => handleJsonRpcBody(body, contextOf(known))) : handleJsonRpcBody(body, contextOf(access));
  };
}
