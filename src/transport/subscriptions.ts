/**
 * The subscriptions of one transport thread's connections (eth_subscribe over WebSocket and IPC,
 * rpc-auth-cli.md §6.3–6.4), and their delivery: the actors publish each event once per transport
 * (a new canonical block with its logs, pending and dropped transactions, the sync state), and this
 * manager turns it into notifications for the connections whose subscriptions it matches.
 *
 * Pure: connections are sinks of text, ids come from the caller (one counter shared by every
 * transport thread), so it is tested without sockets or threads.
 */
import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import { toData, toQuantity } from '../shared/rpc/encoding.js';
import { logMatches } from '../shared/rpc/log-match.js';
import type { LogSubscriptionFilter, SubscribeParams, SubscriptionKind } from '../shared/rpc/methods/subscription-methods.js';
import type {
  CanonicalBlocksEvent,
  ChainSubscriptionInterest,
  PendingTransactionsEvent,
  PoolSubscriptionInterest,
  PublishedBlock,
} from '../shared/actors/messages.js';

/** A connection that holds subscriptions: where its notifications go. */
export interface SubscriberConnection {
  send(text: string): void;
}

interface Subscription {
  readonly id: bigint;
  readonly connection: SubscriberConnection;
  readonly params: SubscribeParams;
  /** The notification text up to the result: `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":`. */
  readonly prefix: string;
}

/** What the subscriptions of this thread need from the chain and the pool. */
export interface SubscriptionInterest {
  chain: ChainSubscriptionInterest;
  pool: PoolSubscriptionInterest;
}

const NOTIFICATION_END = '}}';

function notificationPrefix(id: bigint): string {
  return `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${toQuantity(id)}","result":`;
}

/** Whether a log of block `number` lies within a subscription's numeric block bounds. */
function withinBounds(filter: LogSubscriptionFilter, number: bigint): boolean {
  return (filter.fromBlock === undefined || number >= filter.fromBlock) && (filter.toBlock === undefined || number <= filter.toBlock);
}

/** `logs` subscriptions by the address they name (lower-case hex), and those naming none. */
class LogIndex {
  private readonly byAddress = new Map<string, Set<Subscription>>();
  private readonly anyAddress = new Set<Subscription>();

  add(subscription: Subscription, filter: LogSubscriptionFilter): void {
    if (filter.addresses.length === 0) {
      this.anyAddress.add(subscription);
      return;
    }
    for (const address of filter.addresses) {
      const key = toData(address);
      let set = this.byAddress.get(key);
      if (set === undefined) this.byAddress.set(key, (set = new Set()));
      set.add(subscription);
    }
  }

  remove(subscription: Subscription, filter: LogSubscriptionFilter): void {
    this.anyAddress.delete(subscription);
    for (const address of filter.addresses) {
      const key = toData(address);
      const set = this.byAddress.get(key);
      set?.delete(subscription);
      if (set?.size === 0) this.byAddress.delete(key);
    }
  }

  /** The subscriptions that may match a log of `address`: those naming it, then those naming no address. */
  *candidates(address: Uint8Array): Iterable<Subscription> {
    const named = this.byAddress.get(toData(address));
    if (named !== undefined) yield* named;
    yield* this.anyAddress;
  }

  get empty(): boolean {
    return this.anyAddress.size === 0 && this.byAddress.size === 0;
  }
}

export class SubscriptionManager {
  private readonly byId = new Map<bigint, Subscription>();
  private readonly byConnection = new Map<SubscriberConnection, Set<Subscription>>();
  private readonly byKind = new Map<SubscriptionKind, Set<Subscription>>();
  private readonly logs = new LogIndex();
  /** How many subscriptions want full transaction objects (newHeads, newPendingTransactions). */
  private headsWithTransactions = 0;
  private pendingWithTransactions = 0;

  /** `nextId` hands out the next subscription id of the node (shared by every connection and transport). */
  constructor(private readonly nextId: () => bigint) {}

  /** Adds a subscription for `connection` and answers its id as eth_subscribe does (a quantity). */
  subscribe(connection: SubscriberConnection, params: SubscribeParams): string {
    const id = this.nextId();
    const subscription: Subscription = { id, connection, params, prefix: notificationPrefix(id) };
    this.byId.set(id, subscription);
    let own = this.byConnection.get(connection);
    if (own === undefined) this.byConnection.set(connection, (own = new Set()));
    own.add(subscription);
    let ofKind = this.byKind.get(params.kind);
    if (ofKind === undefined) this.byKind.set(params.kind, (ofKind = new Set()));
    ofKind.add(subscription);
    if (params.kind === 'logs') this.logs.add(subscription, params.filter);
    if (params.kind === 'newHeads' && params.includeTransactions) this.headsWithTransactions++;
    if (params.kind === 'newPendingTransactions' && params.includeTransactions) this.pendingWithTransactions++;
    return toQuantity(id);
  }

  /** eth_unsubscribe: true, or Besu's "Subscription not found" for an unknown id or another connection's. */
  unsubscribe(connection: SubscriberConnection, id: bigint): true {
    const subscription = this.byId.get(id);
    if (subscription === undefined || subscription.connection !== connection) throw new RpcError(RpcErrors.SUBSCRIPTION_NOT_FOUND);
    this.remove(subscription);
    return true;
  }

  /** Drops every subscription of a connection that closed; answers how many there were. */
  dropConnection(connection: SubscriberConnection): number {
    const own = this.byConnection.get(connection);
    if (own === undefined) return 0;
    const count = own.size;
    for (const subscription of [...own]) this.remove(subscription);
    return count;
  }

  get size(): number {
    return this.byId.size;
  }

  /** What the actors must publish for these subscriptions. */
  interest(): SubscriptionInterest {
    const has = (kind: SubscriptionKind) => (this.byKind.get(kind)?.size ?? 0) > 0;
    return {
      chain: {
        newHeads: (this.byKind.get('newHeads')?.size ?? 0) > this.headsWithTransactions,
        newHeadsWithTransactions: this.headsWithTransactions > 0,
        logs: has('logs'),
      },
      pool: { pending: has('newPendingTransactions'), pendingDetails: this.pendingWithTransactions > 0, dropped: has('droppedPendingTransactions') },
    };
  }

  /** New canonical blocks: logs of removed blocks (removed: true), then each added block's head and logs, in order. */
  onCanonicalBlocks(event: CanonicalBlocksEvent): void {
    for (const block of event.removed) this.deliverLogs(block);
    const heads = this.byKind.get('newHeads');
    for (const block of event.added) {
      if (heads !== undefined) {
        for (const subscription of heads) {
          const includeTransactions = subscription.params.kind === 'newHeads' && subscription.params.includeTransactions;
          const result = includeTransactions ? block.headerWithTransactions : block.header;
          if (result !== undefined) this.notify(subscription, result);
        }
      }
      this.deliverLogs(block);
    }
  }

  onPendingTransactions(event: PendingTransactionsEvent): void {
    const subscriptions = this.byKind.get('newPendingTransactions');
    if (subscriptions === undefined) return;
    for (let i = 0; i < event.hashes.length; i++) {
      const hash = `"${event.hashes[i]!}"`;
      const details = event.details?.[i];
      for (const subscription of subscriptions) {
        const includeTransactions = subscription.params.kind === 'newPendingTransactions' && subscription.params.includeTransactions;
        // An event published before the pool learnt of an includeTransactions subscription has no objects.
        if (includeTransactions && details === undefined) continue;
        this.notify(subscription, includeTransactions ? details! : hash);
      }
    }
  }

  onDroppedTransactions(hashes: readonly string[]): void {
    const subscriptions = this.byKind.get('droppedPendingTransactions');
    if (subscriptions === undefined) return;
    for (const hash of hashes) for (const subscription of subscriptions) this.notify(subscription, `"${hash}"`);
  }

  /** A new sync state, as eth_syncing shows it (JSON text: `false` or the object). */
  onSyncState(result: string): void {
    const subscriptions = this.byKind.get('syncing');
    if (subscriptions === undefined) return;
    for (const subscription of subscriptions) this.notify(subscription, result);
  }

  private deliverLogs(block: PublishedBlock): void {
    if (this.logs.empty) return;
    for (const log of block.logs) {
      for (const subscription of this.logs.candidates(log.address)) {
        if (subscription.params.kind !== 'logs') continue;
        const filter = subscription.params.filter;
        if (withinBounds(filter, block.number) && logMatches([log.address, log.topics], filter.addresses, filter.topics)) {
          this.notify(subscription, log.json);
        }
      }
    }
  }

  private notify(subscription: Subscription, result: string): void {
    subscription.connection.send(subscription.prefix + result + NOTIFICATION_END);
  }

  private remove(subscription: Subscription): void {
    this.byId.delete(subscription.id);
    const own = this.byConnection.get(subscription.connection);
    own?.delete(subscription);
    if (own?.size === 0) this.byConnection.delete(subscription.connection);
    this.byKind.get(subscription.params.kind)?.delete(subscription);
    const { params } = subscription;
    if (params.kind === 'logs') this.logs.remove(subscription, params.filter);
    if (params.kind === 'newHeads' && params.includeTransactions) this.headsWithTransactions--;
    if (params.kind === 'newPendingTransactions' && params.includeTransactions) this.pendingWithTransactions--;
  }
}
