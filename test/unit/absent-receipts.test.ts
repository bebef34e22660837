/**
 * A transport answers a repeated receipt miss itself only while the head it was asked at is published.
 */
import test from 'ava';
import { createHeadBuffer, HeadReader, HeadWriter } from '../../src/shared/shared-memory/head-view.js';
import { rememberAbsentReceipts } from '../../src/transport/absent-receipts.js';
import type { ActorSend } from '../../src/transport/local-methods.js';
import type { RpcOutcome } from '../../src/transport/jsonrpc.js';
import type { Wire } from '../../src/shared/rpc/types.js';

const hashOf = (byte: number) => ({ hash: new Uint8Array(32).fill(byte) }) as unknown as Wire;

/** A chain that answers null for the hashes it has no receipt for and counts what it was asked. */
function chain(options: { duringRequest?: () => void } = {}) {
  const buffer = createHeadBuffer();
  const writer = new HeadWriter(buffer);
  const included = new Set<number>();
  const asked: string[] = [];
  const send: ActorSend = async (owner, method, params) => {
    const byte = (params as unknown as { hash?: Uint8Array }).hash?.[0];
    asked.push(`${owner}:${method}:${byte}`);
    options.duringRequest?.();
    if (method !== 'eth_getTransactionReceipt') return { result: 'other' };
    return included.has(byte!) ? { resultJson: `{"transactionHash":"${byte}"}` } : { resultJson: 'null' };
  };
  return { writer, included, asked, send, head: new HeadReader(buffer) };
}

const receipt = (send: ActorSend, byte: number): Promise<RpcOutcome> => send('chain', 'eth_getTransactionReceipt', hashOf(byte));
const block = (writer: HeadWriter, number: bigint) => writer.publish(number, new Uint8Array(32).fill(Number(number)));

test('a miss is asked once per head; the next head asks again and finds the receipt', async (t) => {
  const c = chain();
  const send = rememberAbsentReceipts(c.send, c.head);
  block(c.writer, 1n);
  t.deepEqual(await receipt(send, 7), { resultJson: 'null' });
  t.deepEqual(await receipt(send, 7), { result: null });
  t.deepEqual(await receipt(send, 7), { result: null });
  t.is(c.asked.length, 1);
  c.included.add(7);
  block(c.writer, 2n);
  t.deepEqual(await receipt(send, 7), { resultJson: '{"transactionHash":"7"}' });
  t.deepEqual(await receipt(send, 7), { resultJson: '{"transactionHash":"7"}' }, 'a receipt found is never remembered');
  t.is(c.asked.length, 3);
});

test('a head published while the chain answered: the miss is not remembered', async (t) => {
  let number = 1n;
  const c = chain({ duringRequest: () => block(c.writer, ++number) });
  const send = rememberAbsentReceipts(c.send, c.head);
  block(c.writer, 1n);
  await receipt(send, 7);
  await receipt(send, 7);
  t.is(c.asked.length, 2);
});

test('a re-org published at the same height forgets the misses', async (t) => {
  const c = chain();
  const send = rememberAbsentReceipts(c.send, c.head);
  c.writer.publish(5n, new Uint8Array(32).fill(1));
  await receipt(send, 7);
  c.included.add(7);
  c.writer.publish(5n, new Uint8Array(32).fill(2));
  t.deepEqual(await receipt(send, 7), { resultJson: '{"transactionHash":"7"}' });
});

test('before any head, other methods and errors: always asked', async (t) => {
  const c = chain();
  const send = rememberAbsentReceipts(c.send, c.head);
  await receipt(send, 7);
  await receipt(send, 7);
  t.is(c.asked.length, 2, 'no head published yet');
  block(c.writer, 1n);
  await send('chain', 'eth_getTransactionByHash', hashOf(7));
  await send('chain', 'eth_getTransactionByHash', hashOf(7));
  t.is(c.asked.length, 4);
  const failing = rememberAbsentReceipts(async () => ({ error: { code: -32000, message: 'busy' } }), c.head);
  t.deepEqual(await receipt(failing, 9), { error: { code: -32000, message: 'busy' } });
  t.deepEqual(await receipt(failing, 9), { error: { code: -32000, message: 'busy' } });
});

test('the remembered hashes are bounded: past the capacity the oldest is forgotten', async (t) => {
  const c = chain();
  const send = rememberAbsentReceipts(c.send, c.head, 2);
  block(c.writer, 1n);
  await receipt(send, 1);
  await receipt(send, 2);
  await receipt(send, 3); // past the capacity: forgets 1, remembers 2 and 3
  await receipt(send, 3);
  await receipt(send, 2);
  await receipt(send, 1);
  t.deepEqual(c.asked, ['chain:eth_getTransactionReceipt:1', 'chain:eth_getTransactionReceipt:2', 'chain:eth_getTransactionReceipt:3', 'chain:eth_getTransactionReceipt:1']);
});
