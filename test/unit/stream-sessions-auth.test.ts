/**
 * WebSocket sessions with authentication on, without sockets (src/transport/stream-sessions.ts): each
 * call checked against the upgrade token as it is at that moment, eth_subscribe needing its permission,
 * and the subscriptions of a connection dropped when its token expires, even one being made just then,
 * unless eth_subscribe is open to anyone. The clock and the expiry timers are driven by the test.
 */
import test from 'ava';
import type { CanonicalBlocksEvent } from '../../src/shared/actors/messages.js';
import { toRpcErrorObject } from '../../src/shared/rpc/errors.js';
import type { SubscribeParams } from '../../src/shared/rpc/methods/subscription-methods.js';
import { Logger } from '../../src/shared/util/log.js';
import { Authenticator } from '../../src/transport/auth/authenticator.js';
import type { Timers } from '../../src/transport/auth/connection-authentication.js';
import { createMethodCaller } from '../../src/transport/jsonrpc.js';
import { WS_RULES } from '../../src/transport/jsonrpc-stream.js';
import { streamSessions } from '../../src/transport/stream-sessions.js';
import { SubscriptionHub } from '../../src/transport/subscription-hub.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

const START_MS = 1_700_000_000_000;
const EXP = START_MS / 1000 + 300;

function block(number: number): CanonicalBlocksEvent['added'][number] {
  const header = JSON.stringify({ number: `0x${number.toString(16)}` });
  return { number: BigInt(number), header, headerWithTransactions: header, logs: [] };
}

/** A node's WebSocket service in one process: a hub, a token cache whose clock the test sets, timers it fires. */
function service(noAuthMethods: string[] = []) {
  const clock = { now: START_MS };
  const timers: { at: number; run: () => void }[] = [];
  const fakeTimers: Timers = {
    setTimeout: (run, ms) => {
      const timer = { at: clock.now + ms, run };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (handle) => void timers.splice(timers.indexOf(handle as never), 1),
    now: () => clock.now,
  };
  /** Interest the chain has not acknowledged yet: a subscription being made waits on it. */
  const chainAcks: (() => void)[] = [];
  let holdChain = false;
  const hub = new SubscriptionHub({
    nextId: (() => {
      let id = 0n;
      return () => ++id;
    })(),
    chainInterest: () => (holdChain ? new Promise<void>((resolve) => chainAcks.push(resolve)) : Promise.resolve()),
    poolInterest: async () => undefined,
  });
  // Tokens valid until EXP, and one valid five minutes longer (a verifier refuses an expired token).
  const permissionsOf: Record<string, string[]> = { eth: ['eth:*'], net: ['net:*'], late: ['eth:*'] };
  const expOf = (token: string) => (token === 'late' ? EXP + 300 : EXP);
  const authenticator = new Authenticator(
    {
      verify: async (token) => {
        const permissions = permissionsOf[token];
        return permissions === undefined || clock.now >= expOf(token) * 1000 ? undefined : { permissions, exp: expOf(token) };
      },
    },
    noAuthMethods,
    { clock: () => clock.now },
  );
  const open = streamSessions({
    transportName: 'WebSocket',
    rules: WS_RULES,
    hub,
    authenticator,
    log: new Logger('test'),
    timers: fakeTimers,
    callerWith: (subscriptions) =>
      createMethodCaller({
        enabledApis: ['ETH', 'NET'],
        transport: 'ws',
        send: async (_owner, method, params) => {
          try {
            if (method === 'eth_subscribe') return { result: await subscriptions.eth_subscribe(params as SubscribeParams) };
            return { result: `${method} ran` };
          } catch (err) {
            return { error: toRpcErrorObject(err) };
          }
        },
      }),
  });

  /** A connection upgraded with `authorization`: what it was sent, and a call that waits for its answer. */
  const connect = (authorization?: string) => {
    const sent: string[] = [];
    let wake = (): void => undefined;
    const session = open((text) => {
      sent.push(jsonTextToString(text));
      wake();
    }, authorization);
    let id = 0;
    type Answer = { id?: number; result?: unknown; error?: { code: number } };
    const call = async (method: string, params: unknown[] = []): Promise<Answer> => {
      const requestId = ++id;
      session.receive(JSON.stringify({ jsonrpc: '2.0', id: requestId, method, params }));
      for (;;) {
        const answer = sent.map((text) => JSON.parse(text) as Answer).find((message) => message.id === requestId);
        if (answer !== undefined) return answer;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    };
    const notifications = () => sent.filter((text) => text.includes('"eth_subscription"')).length;
    return { session, call, notifications };
  };

  /** Moves the clock to the token's exp and fires the timers due. */
  const expire = () => {
    clock.now = EXP * 1000;
    const due = timers.filter((timer) => timer.at <= clock.now);
    for (const timer of due) {
      timers.splice(timers.indexOf(timer), 1);
      timer.run();
    }
  };
  const verified = () => new Promise((resolve) => setImmediate(resolve));
  return { hub, connect, expire, timers, verified, holdChain: () => (holdChain = true), chainAcks };
}

test('eth_subscribe needs its permission; the token is read from "Bearer " only', async (t) => {
  const { connect } = service();
  t.is((await connect('Bearer eth').call('eth_subscribe', ['newHeads'])).result, '0x1');
  t.is((await connect('Bearer net').call('eth_subscribe', ['newHeads'])).error?.code, -40100);
  t.is((await connect('Bearer net').call('net_version')).result, 'net_version ran');
  for (const header of [undefined, 'bearer eth', 'Bearer  eth', 'eth']) {
    const connection = connect(header);
    t.is((await connection.call('eth_subscribe', ['newHeads'])).error?.code, -40100, String(header));
    t.is((await connection.call('nope_nothing')).error?.code, -32601, 'an unknown method is answered before permissions');
    t.is((await connection.call('admin_peers')).error?.code, -32604, 'a group not enabled is answered before permissions');
  }
});

test('when the token expires the connection\'s subscriptions stop and its calls are refused; others keep theirs', async (t) => {
  const { hub, connect, expire, timers, verified } = service();
  const expiring = connect('Bearer eth');
  t.is((await expiring.call('eth_subscribe', ['newHeads'])).result, '0x1');
  const later = connect('Bearer late');
  t.is((await later.call('eth_subscribe', ['newHeads'])).result, '0x2');
  const anonymous = connect(undefined);
  await verified();
  t.is(timers.length, 2, 'an expiry timer for each connection with a valid token');

  hub.onCanonicalBlocks({ added: [block(1)], removed: [] });
  t.is(expiring.notifications(), 1);
  expire();
  t.is(hub.subscriptionCount, 1);
  hub.onCanonicalBlocks({ added: [block(2)], removed: [] });
  t.is(expiring.notifications(), 1, 'no notification after the token expired');
  t.is(later.notifications(), 2, 'a connection whose token is still valid keeps hearing');
  t.is((await expiring.call('eth_subscribe', ['newHeads'])).error?.code, -40100);
  t.is((await expiring.call('eth_blockNumber')).error?.code, -40100);
  t.is((await anonymous.call('eth_blockNumber')).error?.code, -40100);
});

test('a subscription being made when the token expires is refused, not left behind', async (t) => {
  const { hub, connect, expire, verified, holdChain, chainAcks } = service();
  const connection = connect('Bearer eth');
  await verified();
  holdChain();
  const answer = connection.call('eth_subscribe', ['newHeads']);
  await verified();
  t.is(chainAcks.length, 1, 'the subscription waits for the chain to publish newHeads');
  expire();
  chainAcks[0]!();
  t.is((await answer).error?.code, -40100);
  t.is(hub.subscriptionCount, 0);
});

test('with eth_subscribe open to anyone, an expiring token takes no subscription with it', async (t) => {
  const { hub, connect, expire, verified } = service(['eth_subscribe']);
  const connection = connect('Bearer eth');
  t.is((await connection.call('eth_subscribe', ['newHeads'])).result, '0x1');
  await verified();
  expire();
  t.is(hub.subscriptionCount, 1);
  t.is((await connection.call('eth_blockNumber')).error?.code, -40100, 'the token\'s other methods are gone');
  t.is((await connect(undefined).call('eth_subscribe', ['newHeads'])).result, '0x2');
});

test('a connection that closes clears its expiry timer and drops its subscriptions', async (t) => {
  const { hub, connect, timers, verified } = service();
  const connection = connect('Bearer eth');
  await connection.call('eth_subscribe', ['newHeads']);
  await verified();
  t.is(timers.length, 1);
  connection.session.close();
  t.is(timers.length, 0);
  t.is(hub.subscriptionCount, 0);
});
