// The JSON a genesis is read and written back with by `operator generate-blockchain-config`: what it says
// is unchanged (numbers digit for digit, member order), the layout is that of Jackson's default pretty printer.
import test from 'ava';
import { formatJsonDocument, JsonSyntaxError, memberOf, parseJsonDocument } from '../../src/main/cli/json-document.js';

test('numbers keep their digits and members their order; the values are those JSON.parse reads', (t) => {
  const text = '{"z":1,"balance":90000000000000000000000,"f":-1.5e-3,"a":[true,false,null,"\\u00e9\\n\\"x\\""],"o":{}}';
  const document = parseJsonDocument(text);
  const written = formatJsonDocument(document);
  t.true(written.includes('"balance" : 90000000000000000000000'));
  t.true(written.includes('"f" : -1.5e-3'));
  t.deepEqual(JSON.parse(written), JSON.parse(text));
  t.deepEqual(Object.keys(JSON.parse(written) as object), ['z', 'balance', 'f', 'a', 'o']);
  t.deepEqual(parseJsonDocument(written), document, 'written back, it reads the same');
});

test('Jackson\'s layout: two-space indent, "key" : value, arrays on one line, empty containers spaced, no final newline', (t) => {
  const document = parseJsonDocument('{"config":{"chainId":1,"qbft":{}},"list":[1,{"a":[]},{}],"empty":[]}');
  t.is(
    formatJsonDocument(document),
    '{\n  "config" : {\n    "chainId" : 1,\n    "qbft" : { }\n  },\n  "list" : [ 1, {\n    "a" : [ ]\n  }, { } ],\n  "empty" : [ ]\n}',
  );
  t.is(formatJsonDocument(parseJsonDocument('{}')), '{ }');
});

test('a repeated key takes the later value in the earlier place; keys are looked up ignoring case', (t) => {
  const document = parseJsonDocument('{"a":1,"b":2,"a":3}');
  t.is(formatJsonDocument(document), '{\n  "a" : 3,\n  "b" : 2\n}');
  t.deepEqual(memberOf(parseJsonDocument('{"extradata":"0x"}'), 'extraData')?.value, { kind: 'string', value: '0x' });
  t.is(memberOf(parseJsonDocument('[]'), 'a'), undefined);
});

test('malformed JSON is refused with where', (t) => {
  for (const [text, message] of [
    ['{"a":1', "unexpected end of input, expected ',' or '}'"],
    ['{"a":01}', "unexpected character '1' at offset 6, expected ',' or '}'"],
    ['[1,]', "unexpected character ']' at offset 3, expected a value"],
    ['{"a":1} x', "unexpected character 'x' at offset 8, expected the end of the document"],
    ["{'a':1}", "unexpected character ''' at offset 1, expected a string"],
    ['"\u0001"', 'unexpected character \'"\' at offset 0, expected a string'],
  ] as const) {
    const error = t.throws(() => parseJsonDocument(text), { instanceOf: JsonSyntaxError });
    t.is(error?.message, message, text);
  }
});
