/**
 * The JSON-RPC API groups, in Besu's order (`RpcApis`). `--rpc-http-api` is validated against this
 * list and every method in the registry belongs to one of these groups (or to `RPC`).
 */
export const API_GROUPS = [
  'ETH', 'DEBUG', 'MINER', 'NET', 'PERM', 'WEB3', 'ADMIN', 'TXPOOL', 'TRACE', 'PLUGINS', 'IBFT', 'ENGINE', 'QBFT', 'TESTING',
] as const;

/** An API group as named by `--rpc-http-api` (matched exactly, uppercase). */
export type ApiGroup = (typeof API_GROUPS)[number];

/** `RPC` is the pseudo-group of `rpc_modules`, enabled whenever at least one API group is. */
export type MethodGroup = ApiGroup | 'RPC';

const NAMES: ReadonlySet<string> = new Set(API_GROUPS);

export function isApiGroup(name: string): name is ApiGroup {
  return NAMES.has(name);
}
