/**
 * Subscriptions without sockets: eth_subscribe/eth_unsubscribe params, the manager that matches the
 * actors' events against a thread's subscriptions (src/transport/subscriptions.ts), and the hub that
 * tells the actors what to publish before a subscription is answered (subscription-hub.ts).
 */
import test from 'ava';
import type { CanonicalBlocksEvent, ChainSubscriptionInterest, PoolSubscriptionInterest, PublishedLog } from '../../src/shared/actors/messages.js';
import { RpcError, RpcErrors } from '../../src/shared/rpc/errors.js';
import { parseSubscribeParams, parseUnsubscribeParams, type SubscribeParams } from '../../src/shared/rpc/methods/subscription-methods.js';
import { TransportCounters, createTransportCounters } from '../../src/shared/shared-memory/transport-counters.js';
import { SubscriptionManager } from '../../src/transport/subscriptions.js';
import { SubscriptionHub, type SubscribingConnection } from '../../src/transport/subscription-hub.js';

class Sink implements SubscribingConnection {
  readonly sent: string[] = [];
  closed = false;
  send(text: string): void {
    this.sent.push(text);
  }
  /** The notifications received: [subscription id, result]. */
  notifications(): [string, unknown][] {
    return this.sent.map((text) => {
      const message = JSON.parse(text) as { method: string; params: { subscription: string; result: unknown } };
      return [message.params.subscription, message.params.result];
    });
  }
}

function counter(): () => bigint {
  let id = 0n;
  return () => ++id;
}

/** `length` bytes of value `n`, as bytes and as JSON-RPC data. */
const bytesOf = (n: number, length: number) => new Uint8Array(length).fill(n);
const hex = (n: number, length: number) => '0x' + n.toString(16).padStart(2, '0').repeat(length);
const ADDRESS_A = bytesOf(0xaa, 20);
const ADDRESS_B = bytesOf(0xbb, 20);
const TOPIC_1 = bytesOf(1, 32);
const TOPIC_2 = bytesOf(2, 32);

function log(address: Uint8Array, topics: Uint8Array[], tag: string, removed = false): PublishedLog {
  return { address, topics, json: JSON.stringify({ tag, removed }) };
}

function block(number: number, logs: PublishedLog[] = []): CanonicalBlocksEvent['added'][number] {
  return {
    number: BigInt(number),
    header: JSON.stringify({ number: `0x${number.toString(16)}` }),
    headerWithTransactions: JSON.stringify({ number: `0x${number.toString(16)}`, transactions: ['full'] }),
    logs,
  };
}

const subscribe = (raw: unknown[]) => parseSubscribeParams(raw);

// ---------------------------------------------------------------------------------------------
// Params
// ---------------------------------------------------------------------------------------------

test('eth_subscribe params: the five kinds, their options, and Invalid Request for anything malformed', (t) => {
  t.deepEqual(subscribe(['newHeads']), { kind: 'newHeads', includeTransactions: false });
  t.deepEqual(subscribe(['newHeads', { includeTransactions: true }]), { kind: 'newHeads', includeTransactions: true });
  t.deepEqual(subscribe(['newPendingTransactions', { includeTransactions: true }]), { kind: 'newPendingTransactions', includeTransactions: true });
  t.deepEqual(subscribe(['syncing']), { kind: 'syncing' });
  t.deepEqual(subscribe(['droppedPendingTransactions']), { kind: 'droppedPendingTransactions' });
  const logs = subscribe(['logs', { address: hex(0xaa, 20), topics: [null, [hex(1, 32), hex(2, 32)]], fromBlock: '0x5', toBlock: 'latest' }]);
  t.deepEqual(logs, { kind: 'logs', filter: { addresses: [ADDRESS_A], topics: [null, [TOPIC_1, TOPIC_2]], fromBlock: 5n } });
  t.deepEqual(subscribe(['logs', {}]), { kind: 'logs', filter: { addresses: [], topics: [] } });
  for (const raw of [[], ['NewHeads'], ['bogus'], [7], ['logs'], ['logs', null], ['logs', { address: 'zz' }], ['logs', 'x'], ['newHeads', { includeTransactions: 'yes' }], ['newHeads', 5]]) {
    const error = t.throws(() => subscribe(raw), { instanceOf: RpcError }, JSON.stringify(raw));
    t.deepEqual([error?.code, error?.message], [RpcErrors.INVALID_REQUEST.code, RpcErrors.INVALID_REQUEST.message]);
  }
});

test('eth_unsubscribe params: a quantity, a decimal string or a number; Invalid Request otherwise', (t) => {
  t.deepEqual(parseUnsubscribeParams(['0x1f']), { id: 31n });
  t.deepEqual(parseUnsubscribeParams(['31']), { id: 31n });
  t.deepEqual(parseUnsubscribeParams([31]), { id: 31n });
  for (const raw of [[], [null], ['0x'], ['x1'], [-1], [1.5], [{}], ['0x' + 'f'.repeat(17)]]) {
    const error = t.throws(() => parseUnsubscribeParams(raw), { instanceOf: RpcError }, JSON.stringify(raw));
    t.deepEqual([error?.code, error?.message], [RpcErrors.INVALID_REQUEST.code, RpcErrors.INVALID_REQUEST.message]);
  }
});

// ---------------------------------------------------------------------------------------------
// Manager
// ---------------------------------------------------------------------------------------------

test('ids come from the shared counter; notifications have §6.3 shape and member order', (t) => {
  const manager = new SubscriptionManager(counter());
  const sink = new Sink();
  t.is(manager.subscribe(sink, subscribe(['newHeads'])), '0x1');
  t.is(manager.subscribe(sink, subscribe(['newHeads', { includeTransactions: true }])), '0x2');
  manager.onCanonicalBlocks({ removed: [], added: [block(7)] });
  t.deepEqual(sink.sent, [
    '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":{"number":"0x7"}}}',
    '{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x2","result":{"number":"0x7","transactions":["full"]}}}',
  ]);
});

test('the counter is one for every thread: ids continue across managers', (t) => {
  const buffer = createTransportCounters();
  const [one, two] = [new TransportCounters(buffer), new TransportCounters(buffer)];
  const first = new SubscriptionManager(() => one.nextSubscriptionId());
  const second = new SubscriptionManager(() => two.nextSubscriptionId());
  const sink = new Sink();
  t.deepEqual(
    [first.subscribe(sink, subscribe(['syncing'])), second.subscribe(sink, subscribe(['syncing'])), first.subscribe(sink, subscribe(['syncing']))],
    ['0x1', '0x2', '0x3'],
  );
});

test('logs: address, positional and OR topics, wildcards, block bounds; removed logs first, then added blocks in order', (t) => {
  const manager = new SubscriptionManager(counter());
  const sink = new Sink();
  const any = manager.subscribe(sink, subscribe(['logs', {}]));
  const ofA = manager.subscribe(sink, subscribe(['logs', { address: [hex(0xaa, 20)] }]));
  const secondTopic = manager.subscribe(sink, subscribe(['logs', { topics: [null, hex(2, 32)] }]));
  const eitherFirst = manager.subscribe(sink, subscribe(['logs', { address: hex(0xbb, 20), topics: [[hex(2, 32), hex(1, 32)]] }]));
  const bounded = manager.subscribe(sink, subscribe(['logs', { fromBlock: '0x6', toBlock: '0x6' }]));
  const noTopics = manager.subscribe(sink, subscribe(['logs', { topics: [null] }]));
  manager.onCanonicalBlocks({
    removed: [{ number: 6n, logs: [log(ADDRESS_B, [TOPIC_1], 'gone', true)] }],
    added: [block(6, [log(ADDRESS_A, [TOPIC_1, TOPIC_2], 'a12')]), block(7, [log(ADDRESS_B, [], 'b'), log(ADDRESS_B, [TOPIC_2], 'b2')])],
  });
  const got = sink.notifications().map(([id, result]) => `${id}:${(result as { tag: string }).tag}`);
  t.deepEqual(got, [
    // Subscriptions naming the log's address first, then those naming none.
    `${eitherFirst}:gone`, `${any}:gone`, `${bounded}:gone`, `${noTopics}:gone`,
    `${ofA}:a12`, `${any}:a12`, `${secondTopic}:a12`, `${bounded}:a12`, `${noTopics}:a12`,
    `${any}:b`, `${noTopics}:b`,
    `${eitherFirst}:b2`, `${any}:b2`, `${noTopics}:b2`,
  ]);
  t.deepEqual((sink.notifications()[0]![1] as { removed: boolean }).removed, true);
});

test('pending transactions as hashes or objects; dropped transactions; sync states', (t) => {
  const manager = new SubscriptionManager(counter());
  const sink = new Sink();
  const hashes = manager.subscribe(sink, subscribe(['newPendingTransactions']));
  const objects = manager.subscribe(sink, subscribe(['newPendingTransactions', { includeTransactions: true }]));
  const dropped = manager.subscribe(sink, subscribe(['droppedPendingTransactions']));
  const syncing = manager.subscribe(sink, subscribe(['syncing']));
  manager.onPendingTransactions({ hashes: ['0x01', '0x02'], details: ['{"hash":"0x01"}', '{"hash":"0x02"}'] });
  // Published before the pool knew of an includeTransactions subscription: no objects to show.
  manager.onPendingTransactions({ hashes: ['0x03'] });
  manager.onDroppedTransactions(['0x04']);
  manager.onSyncState('false');
  t.deepEqual(sink.notifications(), [
    [hashes, '0x01'], [objects, { hash: '0x01' }], [hashes, '0x02'], [objects, { hash: '0x02' }],
    [hashes, '0x03'],
    [dropped, '0x04'],
    [syncing, false],
  ]);
});

test('unsubscribe: true once; unknown ids and other connections\' ids are "Subscription not found"', (t) => {
  const manager = new SubscriptionManager(counter());
  const [mine, theirs] = [new Sink(), new Sink()];
  manager.subscribe(mine, subscribe(['newHeads']));
  const notFound = { instanceOf: RpcError, message: 'Subscription not found' };
  t.throws(() => manager.unsubscribe(theirs, 1n), notFound);
  t.true(manager.unsubscribe(mine, 1n));
  t.throws(() => manager.unsubscribe(mine, 1n), notFound);
  t.throws(() => manager.unsubscribe(mine, 99n), notFound);
  manager.onCanonicalBlocks({ removed: [], added: [block(1)] });
  t.deepEqual(mine.sent, []);
});

test('a closed connection\'s subscriptions go; the others stay; interest follows what is held', (t) => {
  const manager = new SubscriptionManager(counter());
  const [a, b] = [new Sink(), new Sink()];
  manager.subscribe(a, subscribe(['newHeads', { includeTransactions: true }]));
  manager.subscribe(a, subscribe(['logs', {}]));
  manager.subscribe(b, subscribe(['newPendingTransactions']));
  t.deepEqual(manager.interest(), {
    chain: { newHeads: false, newHeadsWithTransactions: true, logs: true },
    pool: { pending: true, pendingDetails: false, dropped: false },
  });
  manager.dropConnection(a);
  t.is(manager.size, 1);
  t.deepEqual(manager.interest().chain, { newHeads: false, newHeadsWithTransactions: false, logs: false });
  manager.onCanonicalBlocks({ removed: [], added: [block(1, [log(ADDRESS_A, [], 'x')])] });
  manager.onPendingTransactions({ hashes: ['0x01'] });
  t.deepEqual(a.sent, []);
  t.is(b.sent.length, 1);
});

// ---------------------------------------------------------------------------------------------
// Hub: interest before the answer
// ---------------------------------------------------------------------------------------------

interface Deferred {
  interest: ChainSubscriptionInterest | PoolSubscriptionInterest;
  resolve(): void;
}

function hubWithActors() {
  const chain: Deferred[] = [];
  const pool: Deferred[] = [];
  const hub = new SubscriptionHub({
    nextId: counter(),
    chainInterest: (interest) => new Promise<void>((resolve) => chain.push({ interest, resolve })),
    poolInterest: (interest) => new Promise<void>((resolve) => pool.push({ interest, resolve })),
  });
  return { hub, chain, pool };
}

const call = (connection: SubscribingConnection, hub: SubscriptionHub, raw: unknown[]) =>
  hub.handlers(connection).eth_subscribe(parseSubscribeParams(raw) as SubscribeParams);

test('the first subscription of a kind is answered only once the actor applied the interest', async (t) => {
  const { hub, chain, pool } = hubWithActors();
  const sink = new Sink();
  let answered: unknown;
  const first = Promise.resolve(call(sink, hub, ['newHeads'])).then((id) => (answered = id));
  await Promise.resolve();
  t.deepEqual(chain.map((d) => d.interest), [{ newHeads: true, newHeadsWithTransactions: false, logs: false }]);
  t.deepEqual(pool, []);
  // A block published before the chain applied the interest reaches nobody.
  hub.onCanonicalBlocks({ removed: [], added: [block(1)] });
  t.is(answered, undefined);
  chain[0]!.resolve();
  t.is(await first, '0x1');
  hub.onCanonicalBlocks({ removed: [], added: [block(2)] });
  t.deepEqual(sink.notifications(), [['0x1', { number: '0x2' }]]);
  // A second subscription of the same kind needs no round trip.
  t.is(await call(sink, hub, ['newHeads']), '0x2');
  t.is(chain.length, 1);
});

test('interest drops when the last subscription goes, and not while another is being made', async (t) => {
  const { hub, pool } = hubWithActors();
  const [a, b] = [new Sink(), new Sink()];
  const made = call(a, hub, ['droppedPendingTransactions']);
  pool[0]!.resolve();
  t.is(await made, '0x1');
  // b subscribes (waiting for nothing new: the pool already publishes drops) while a unsubscribes.
  const again = call(b, hub, ['droppedPendingTransactions']);
  t.true(hub.handlers(a).eth_unsubscribe({ id: 1n }) as boolean);
  t.is(await again, '0x2');
  t.is(pool.length, 1, 'the pool is never told to stop while b still wants drops');
  hub.connectionClosed(b);
  t.deepEqual(pool.map((d) => d.interest), [
    { pending: false, pendingDetails: false, dropped: true },
    { pending: false, pendingDetails: false, dropped: false },
  ]);
});

test('a connection that closed while its subscription was being made gets none', async (t) => {
  const { hub, chain } = hubWithActors();
  const sink = new Sink();
  const made = call(sink, hub, ['logs', {}]);
  sink.closed = true;
  hub.connectionClosed(sink);
  chain[0]!.resolve();
  t.is(await made, null);
  t.is(hub.subscriptionCount, 0);
});

test('syncing subscriptions hear changes of the sync state only', async (t) => {
  const { hub, chain, pool } = hubWithActors();
  const sink = new Sink();
  t.is(await call(sink, hub, ['syncing']), '0x1');
  t.deepEqual([chain, pool], [[], []], 'the sync state comes from the p2p actor unasked');
  hub.onSyncState(null);
  hub.onSyncState({ startingBlock: 0n, currentBlock: 3n, highestBlock: 20n });
  hub.onSyncState({ startingBlock: 0n, currentBlock: 3n, highestBlock: 20n });
  hub.onSyncState({ startingBlock: 0n, currentBlock: 9n, highestBlock: 20n });
  hub.onSyncState(null);
  t.deepEqual(sink.notifications().map(([, result]) => result), [
    { startingBlock: '0x0', currentBlock: '0x3', highestBlock: '0x14' },
    { startingBlock: '0x0', currentBlock: '0x9', highestBlock: '0x14' },
    false,
  ]);
});
