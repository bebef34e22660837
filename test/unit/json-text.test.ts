/**
 * JSON text as actors answer it (src/shared/rpc/json-text.ts): a string below 32 KiB, UTF-8 bytes
 * from there on, the same text either way.
 */
import test from 'ava';
import { answerText, concatJsonText, isHandedOver, JSON_BYTES_FROM, jsonTextToString } from '../../src/shared/rpc/json-text.js';

test('a short answer stays a string; a long one becomes its UTF-8 bytes, handed over', (t) => {
  const short = answerText(['[', '"a"', ',', '"b"', ']']);
  t.is(short, '["a","b"]');
  t.false(isHandedOver(short));

  // Multi-byte characters: the bytes are UTF-8, longer than the string's length.
  const item = JSON.stringify(`é€😀${'x'.repeat(JSON_BYTES_FROM)}`);
  const long = answerText(['[', item, ',', item, ']']);
  t.true(long instanceof Uint8Array);
  t.true(isHandedOver(long));
  t.is(long.length, Buffer.byteLength(`[${item},${item}]`));
  t.is(jsonTextToString(long), `[${item},${item}]`);
  t.false(isHandedOver(new Uint8Array(long as Uint8Array)), 'a copy is not handed over');
});

test('text and bytes concatenate in order, into bytes only when some part is bytes', (t) => {
  t.is(concatJsonText(['{"result":', '1', '}']), '{"result":1}');
  const joined = concatJsonText(['{"result":', new TextEncoder().encode('"é"'), '}']);
  t.true(joined instanceof Uint8Array);
  t.is(jsonTextToString(joined), '{"result":"é"}');
});
