/**
 * Typed channels (src/shared/actors/channel.ts): an end serves only the requests its edge declares
 * from the other end, and hears only the events the other end may emit.
 */
import test from 'ava';
import { MessageChannel } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { openChannel, RemoteError } from '../../src/shared/actors/channel.js';
import { TRANSPORT_P2P, TXPOOL_CHAIN } from '../../src/shared/actors/channels.js';
import { answerText, JSON_BYTES_FROM, jsonTextToString } from '../../src/shared/rpc/json-text.js';

/** Sends a raw envelope, as a holder of the port could, and waits for the answer. */
function rawRequest(port: MessagePort, type: string, body: unknown): Promise<{ ok: boolean; error?: { message: string; data?: string } }> {
  return new Promise((resolve) => {
    port.on('message', (message: { kind: string; ok: boolean; error?: { message: string; data?: string } }) => {
      if (message.kind === 'res') resolve(message);
    });
    port.postMessage({ kind: 'req', id: 1, type, body });
  });
}

test('a request declared on the edge is served; one declared elsewhere is refused', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const served: string[] = [];
  // The p2p end of transport→p2p, handed a table that also holds a block-import handler.
  const handlers = { rpc: () => (served.push('rpc'), 'answer'), importCommitted: () => (served.push('importCommitted'), null) };
  openChannel(TRANSPORT_P2P, 'p2p', port2).serve(handlers);
  const transport = openChannel(TRANSPORT_P2P, 'transport', port1);
  t.is(await transport.request('rpc', { method: 'eth_blockNumber', params: null }), 'answer');
  const refused = await rawRequest(port1, 'importCommitted', { rlp: new Uint8Array() });
  t.false(refused.ok);
  t.regex(refused.error!.data!, /importCommitted is not served on channel transport→p2p by p2p/);
  t.deepEqual(served, ['rpc']);
  port1.close();
});

test('requests flow both ways on an edge that declares both, and errors come back as RemoteError', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const pool = openChannel(TXPOOL_CHAIN, 'txpool', port1);
  const chain = openChannel(TXPOOL_CHAIN, 'chain', port2);
  pool.serve({ nextNonce: ({ address }) => BigInt(address.length), senderKeys: ({ hashes }) => hashes.map(() => null) });
  chain.serve({
    head: () => {
      throw new Error('no head yet');
    },
    accounts: ({ addresses }) => ({ head: undefined as never, accounts: addresses.map(() => ({ nonce: 1n, balance: 2n, hasCode: false })) }),
  });
  t.is(await chain.request('nextNonce', { address: new Uint8Array(20) }), 20n);
  const failure = await t.throwsAsync(pool.request('head', null));
  t.true(failure instanceof RemoteError);
  t.is((await pool.request('accounts', { addresses: [new Uint8Array(20)] })).accounts[0]!.balance, 2n);
  port1.close();
});

test('an event is heard only in its declared direction', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const heard: bigint[] = [];
  const pool = openChannel(TXPOOL_CHAIN, 'txpool', port1);
  const chain = openChannel(TXPOOL_CHAIN, 'chain', port2);
  const arrived = new Promise<void>((resolve) =>
    pool.on({
      newHead: (event) => {
        heard.push(event.head.number);
        resolve();
      },
    }),
  );
  // A newHead sent the wrong way (pool → chain) is not delivered to a listener on the chain end.
  let chainHeard = false;
  chain.on({ ...({ newHead: () => (chainHeard = true) } as object) });
  port1.postMessage({ kind: 'event', type: 'newHead', body: { head: { number: 7n } } });
  chain.emit('newHead', { head: { number: 9n } as never, removedBlocks: [], addedBlocks: [], includedTxHashes: [], senderNonces: [], removedTransactions: [] });
  await arrived;
  // The wrong-way event was posted first on the same ordered channel, so it has been handled by now.
  t.false(chainHeard);
  t.deepEqual(heard, [9n]);
  port1.close();
});

test("one turn's envelopes cross as one message, in order; one that cannot be cloned fails alone", async (t) => {
  const { port1, port2 } = new MessageChannel();
  const pool = openChannel(TXPOOL_CHAIN, 'txpool', port1);
  const chain = openChannel(TXPOOL_CHAIN, 'chain', port2);
  const messages: unknown[] = [];
  port1.on('message', (message) => messages.push(message));
  const heard: bigint[] = [];
  pool.on({ newHead: (event) => heard.push(event.head.number) });
  chain.serve({
    head: () => ({ uncloneable: () => 0 }) as never,
    accounts: ({ addresses }) => ({ head: undefined as never, accounts: addresses.map(() => ({ nonce: 1n, balance: 2n, hasCode: false })) }),
  });
  const head = (n: bigint) => ({ head: { number: n } as never, removedBlocks: [], addedBlocks: [], includedTxHashes: [], senderNonces: [], removedTransactions: [] });
  // Three requests in one turn: the chain answers them in its next turn, together.
  const answers = Promise.allSettled([
    pool.request('accounts', { addresses: [new Uint8Array(20)] }),
    pool.request('head', null),
    pool.request('accounts', { addresses: [new Uint8Array(20), new Uint8Array(20)] }),
  ]);
  chain.emit('newHead', head(1n));
  chain.emit('newHead', head(2n));
  const [first, refused, third] = await answers;
  t.is(first.status === 'fulfilled' && first.value.accounts.length, 1);
  t.true(refused.status === 'rejected' && refused.reason instanceof RemoteError, 'the answer that could not be cloned is an error');
  t.is(third.status === 'fulfilled' && third.value.accounts.length, 2);
  t.deepEqual(heard, [1n, 2n]);
  t.true(messages.some((message) => (message as { kind: string }).kind === 'batch'), 'several envelopes crossed as one message');
  port1.close();
});

test("a large answer's bytes are moved to the asking end, not copied; other bytes are copied", async (t) => {
  const { port1, port2 } = new MessageChannel();
  const large = answerText(['[', JSON.stringify('x'.repeat(JSON_BYTES_FROM)), ']']);
  const kept = new Uint8Array([1, 2, 3]);
  let answering: Uint8Array = kept;
  openChannel(TRANSPORT_P2P, 'p2p', port2).serve({ rpc: () => answering });
  const transport = openChannel(TRANSPORT_P2P, 'transport', port1);

  // Bytes the node made for no one else (json-text.ts) are transferred: the sender's view is emptied.
  answering = large as Uint8Array;
  const size = large.length;
  const moved = await transport.request('rpc', { method: 'eth_getLogs', params: null });
  t.is(jsonTextToString(moved), `[${JSON.stringify('x'.repeat(JSON_BYTES_FROM))}]`);
  t.is(moved.length, size);
  t.is(large.length, 0, 'the bytes left the answering thread');

  // Anything else (a cached value, say) is only copied.
  answering = kept;
  t.deepEqual(await transport.request('rpc', { method: 'eth_getLogs', params: null }), new Uint8Array([1, 2, 3]));
  t.is(kept.length, 3, 'bytes not handed over stay where they were');
  port1.close();
});
