/**
 * The IPC input framing (src/transport/json-splitter.ts): concatenated JSON values, however the
 * stream is cut into reads.
 */
import test from 'ava';
import { JsonValueSplitter, type SplitItem } from '../../src/transport/json-splitter.js';

const values = (items: SplitItem[]) => items.map((item) => (item.kind === 'value' ? item.text : item.kind));

const STREAM =
  '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' +
  '\n[{"id":2,"method":"x","params":["}{][\\"\\\\"]}]  ' +
  '{"id":3,"params":[{"a":[1,2,{"b":"]"}]}]}';
const EXPECTED = [
  '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
  '[{"id":2,"method":"x","params":["}{][\\"\\\\"]}]',
  '{"id":3,"params":[{"a":[1,2,{"b":"]"}]}]}',
];

test('several values in one read, brackets and escaped quotes inside strings', (t) => {
  t.deepEqual(values(new JsonValueSplitter(1 << 20).push(STREAM)), EXPECTED);
  for (const text of EXPECTED) t.notThrows(() => JSON.parse(text));
});

test('the stream cut at every position, and into single characters, gives the same values', (t) => {
  for (let cut = 0; cut <= STREAM.length; cut++) {
    const splitter = new JsonValueSplitter(1 << 20);
    const items = [...splitter.push(STREAM.slice(0, cut)), ...splitter.push(STREAM.slice(cut))];
    t.deepEqual(values(items), EXPECTED, `cut at ${cut}`);
  }
  const splitter = new JsonValueSplitter(1 << 20);
  t.deepEqual(values([...STREAM].flatMap((c) => splitter.push(c))), EXPECTED);
});

test('top-level scalars are skipped; anything else between values is one error per run', (t) => {
  const splitter = new JsonValueSplitter(1 << 20);
  t.deepEqual(values(splitter.push('5 "a\\"{" true null -1.5e3 {"id":1}')), ['{"id":1}']);
  t.deepEqual(values(splitter.push('}}] {"id":2} nonsense {"id":3}')), ['garbage', '{"id":2}', 'garbage', '{"id":3}']);
  // A scalar split across reads is still a scalar.
  t.deepEqual(values([...splitter.push('tr'), ...splitter.push('ue {"id":4}')]), ['{"id":4}']);
});

test('a value kept waiting beyond the limit is dropped and reported; the stream carries on', (t) => {
  const splitter = new JsonValueSplitter(32);
  t.deepEqual(values(splitter.push('{"id":1,"params":["')), []);
  t.deepEqual(values(splitter.push('x'.repeat(40))), ['too-large']);
  t.deepEqual(values(splitter.push('{"id":2}')), ['{"id":2}']);
});
