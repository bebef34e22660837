/**
 * Registry entries: Subscriptions (rpc-auth-cli.md §6.3–6.4), held by the WebSocket or IPC connection
 * that made them, so served only over those transports: over HTTP they are "Method not found".
 * Every malformed request is Besu's "Invalid Request", whatever is wrong with it.
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcError, RpcErrors } from '../errors.js';
import { parseLogFilter, type TopicFilter } from '../params.js';

/** What a `logs` subscription matches: a log filter whose numeric block bounds limit the blocks. */
export type LogSubscriptionFilter = { addresses: Uint8Array[]; topics: TopicFilter[]; fromBlock?: bigint; toBlock?: bigint };

export type SubscribeParams =
  | { kind: 'newHeads'; includeTransactions: boolean }
  | { kind: 'logs'; filter: LogSubscriptionFilter }
  | { kind: 'newPendingTransactions'; includeTransactions: boolean }
  | { kind: 'droppedPendingTransactions' }
  | { kind: 'syncing' };

export type SubscriptionKind = SubscribeParams['kind'];

export type UnsubscribeParams = { id: bigint };

const SUBSCRIPTION_KINDS: ReadonlySet<string> = new Set<SubscriptionKind>([
  'newHeads',
  'logs',
  'newPendingTransactions',
  'droppedPendingTransactions',
  'syncing',
]);

function invalidRequest(): never {
  throw new RpcError(RpcErrors.INVALID_REQUEST);
}

/** Besu's `SubscriptionParam`: absent, or an object whose `includeTransactions` is a boolean when given. */
function includeTransactions(raw: unknown): boolean {
  if (raw === undefined || raw === null) return false;
  if (typeof raw !== 'object' || Array.isArray(raw)) invalidRequest();
  const flag = (raw as Record<string, unknown>).includeTransactions;
  if (flag === undefined || flag === null) return false;
  if (typeof flag !== 'boolean') invalidRequest();
  return flag;
}

function parseLogSubscriptionFilter(raw: unknown): LogSubscriptionFilter {
  if (raw === undefined || raw === null) invalidRequest();
  let filter;
  try {
    filter = parseLogFilter(raw);
  } catch {
    invalidRequest();
  }
  const bounds: LogSubscriptionFilter = { addresses: filter.addresses, topics: filter.topics };
  if (filter.fromBlock.kind === 'number') bounds.fromBlock = filter.fromBlock.number;
  if (filter.toBlock.kind === 'number') bounds.toBlock = filter.toBlock.number;
  return bounds;
}

export function parseSubscribeParams(raw: readonly unknown[]): SubscribeParams {
  const kind = raw[0];
  if (typeof kind !== 'string' || !SUBSCRIPTION_KINDS.has(kind)) invalidRequest();
  switch (kind as SubscriptionKind) {
    case 'newHeads':
      return { kind: 'newHeads', includeTransactions: includeTransactions(raw[1]) };
    case 'logs':
      return { kind: 'logs', filter: parseLogSubscriptionFilter(raw[1]) };
    case 'newPendingTransactions':
      return { kind: 'newPendingTransactions', includeTransactions: includeTransactions(raw[1]) };
    case 'droppedPendingTransactions':
      return { kind: 'droppedPendingTransactions' };
    case 'syncing':
      return { kind: 'syncing' };
  }
}

const MAX_UNSIGNED_LONG = 2n ** 64n - 1n;

/** Besu's `UnsignedLongParameter`: a quantity string (`"0x1"`), a decimal string or a non-negative integer. */
export function parseUnsubscribeParams(raw: readonly unknown[]): UnsubscribeParams {
  const id = raw[0];
  let value: bigint | undefined;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) value = BigInt(id);
  else if (typeof id === 'string' && /^(0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/.test(id)) value = BigInt(id);
  if (value === undefined || value > MAX_UNSIGNED_LONG) invalidRequest();
  return { id: value };
}

export const subscriptionMethods = {
  eth_subscribe: { group: 'ETH', owner: 'transport', transports: ['ws', 'ipc'], parseParams: parseSubscribeParams },
  eth_unsubscribe: { group: 'ETH', owner: 'transport', transports: ['ws', 'ipc'], parseParams: parseUnsubscribeParams },
} as const satisfies Record<string, MethodSpec>;
