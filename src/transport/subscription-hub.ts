/**
 * A transport thread's subscriptions and what the actors must publish for them. eth_subscribe and
 * eth_unsubscribe run here for the connection that sent them; the actors' events come in here and go
 * out as notifications (subscriptions.ts).
 *
 * The chain and the pool format only what some transport subscribed to. Before the first subscription
 * of a kind is answered, this thread tells the actor it now needs that kind and waits for the actor to
 * acknowledge, so every block or transaction that comes after the answer reaches the new subscription.
 * Interest drops again (without waiting) when the last subscription of a kind goes.
 */
import type { CanonicalBlocksEvent, ChainSubscriptionInterest, PendingTransactionsEvent, PoolSubscriptionInterest } from '../shared/actors/messages.js';

import { RpcError, RpcErrors } from '../shared/rpc/errors.js';
import type { SubscribeParams } from '../shared/rpc/methods/subscription-methods.js';
import { syncingResult, type SubscriptionHandlers, type SyncState } from './local-methods.js';
import { SubscriptionManager, type SubscriberConnection, type SubscriptionInterest } from './subscriptions.js';

/** A connection that can hold subscriptions; `closed` once it is gone (nothing is added for it then). */
export interface SubscribingConnection extends SubscriberConnection {
  readonly closed: boolean;
  /**
   * True once the token the connection authenticated with expired and took its subscriptions with it
   * (connection-authentication.ts): a subscription being made then is refused -40100.
   */
  readonly subscriptionsRevoked?: boolean;
}

export interface SubscriptionHubDeps {
  /** The next subscription id of the node (shared by every transport thread). */
  nextId(): bigint;
  /** Tells the chain what this thread's subscriptions need; resolves once the chain applies it. */
  chainInterest(interest: ChainSubscriptionInterest): Promise<void>;
  /** Tells the pool what this thread's subscriptions need; resolves once the pool applies it. */
  poolInterest(interest: PoolSubscriptionInterest): Promise<void>;
}


/** Whether two interests (objects of the same boolean flags) are equal. */
function sameFlags<T extends object>(a: T, b: T): boolean {
  return (Object.keys(a) as (keyof T)[]).every((key) => a[key] === b[key]);
}

/** What one more subscription with `params` adds to `interest`. */
function withSubscription(interest: SubscriptionInterest, params: SubscribeParams): SubscriptionInterest {
  const chain = { ...interest.chain };
  const pool = { ...interest.pool };
  if (params.kind === 'newHeads') {
    if (params.includeTransactions) chain.newHeadsWithTransactions = true;
    else chain.newHeads = true;
  } else if (params.kind === 'logs') {
    chain.logs = true;
  } else if (params.kind === 'newPendingTransactions') {
    pool.pending = true;
    if (params.includeTransactions) pool.pendingDetails = true;
  } else if (params.kind === 'droppedPendingTransactions') {
    pool.dropped = true;
  }
  return { chain, pool };
}


export class SubscriptionHub {
  private readonly manager: SubscriptionManager;
  /** Subscriptions being made: counted in the interest until they are added or given up. */
  private readonly pending = new Set<SubscribeParams>();
  private sentChain: ChainSubscriptionInterest = { newHeads: false, newHeadsWithTransactions: false, logs: false };
  private sentPool: PoolSubscriptionInterest = { pending: false, pendingDetails: false, dropped: false };
  /** The last sync state notified (JSON text); a state equal to it is not notified again. */
  private lastSyncState = 'false';

  constructor(private readonly deps: SubscriptionHubDeps) {
    this.manager = new SubscriptionManager(deps.nextId);
  }

  /** eth_subscribe and eth_unsubscribe as served to `connection`. */
  handlers(connection: SubscribingConnection): SubscriptionHandlers {
    return {
      eth_subscribe: async (params) => {
        this.pending.add(params);
        try {
          await this.sendInterest();
        } finally {
          this.pending.delete(params);
        }
        // Added after the last await: the answer goes out before any event can reach the subscription.
        if (connection.closed) return null;
        if (connection.subscriptionsRevoked === true) throw new RpcError(RpcErrors.UNAUTHORIZED);
        return this.manager.subscribe(connection, params);
      },
      eth_unsubscribe: ({ id }) => {
        const removed = this.manager.unsubscribe(connection, id);
        this.lowerInterest();
        return removed;
      },
    };
  }

  /** A connection closed: its subscriptions go with it. Answers how many there were. */
  connectionClosed(connection: SubscriberConnection): number {
    return this.dropSubscriptions(connection);
  }

  /** Every subscription of `connection` goes (it closed, or its token expired). Answers how many there were. */
  dropSubscriptions(connection: SubscriberConnection): number {
    const dropped = this.manager.dropConnection(connection);
    if (dropped > 0) this.lowerInterest();
    return dropped;
  }

  get subscriptionCount(): number {
    return this.manager.size;
  }

  onCanonicalBlocks(event: CanonicalBlocksEvent): void {
    this.manager.onCanonicalBlocks(event);
  }

  onPendingTransactions(event: PendingTransactionsEvent): void {
    this.manager.onPendingTransactions(event);
  }

  onDroppedTransactions(hashes: readonly string[]): void {
    this.manager.onDroppedTransactions(hashes);
  }

  /** The sync state changed (or may have): `syncing` subscriptions hear of real changes only. */
  onSyncState(sync: SyncState | null): void {
    const text = JSON.stringify(syncingResult(sync));
    if (text === this.lastSyncState) return;
    this.lastSyncState = text;
    this.manager.onSyncState(text);
  }

  /** After subscriptions went: nobody waits, and a channel closing with the node is no failure. */
  private lowerInterest(): void {
    this.sendInterest().catch(() => undefined);
  }

  /**
   * Sends the interest of the subscriptions held and being made to the actors whose part changed, and
   * waits for them. Requests on a channel are handled in order, so the last one sent is what applies.
   */
  private async sendInterest(): Promise<void> {
    let interest = this.manager.interest();
    for (const params of this.pending) interest = withSubscription(interest, params);
    const waits: Promise<void>[] = [];
    if (!sameFlags(interest.chain, this.sentChain)) {
      this.sentChain = interest.chain;
      waits.push(this.deps.chainInterest(interest.chain));
    }
    if (!sameFlags(interest.pool, this.sentPool)) {
      this.sentPool = interest.pool;
      waits.push(this.deps.poolInterest(interest.pool));
    }
    await Promise.all(waits);
  }
}

