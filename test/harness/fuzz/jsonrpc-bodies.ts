/**
 * fast-check arbitraries of JSON-RPC HTTP bodies for fuzzing a node: requests of every registered
 * method with params of the right and the wrong shapes, batches mixing good and bad entries, random
 * JSON, mutated text, deep nesting, giant strings, long numbers and unicode. Shared by
 * test/e2e/fuzz-http.test.ts and bench/fuzz.ts.
 */
import fc from 'fast-check';
import { METHOD_REGISTRY } from '../../../src/shared/rpc/registry.js';

/**
 * Registered methods a fuzzer may call on a running node: all but the one that would change what it
 * tests (a vote adding a validator halts a one-validator chain). Methods of groups the node does not
 * enable are kept: they answer "Method not enabled".
 */
export const FUZZED_METHODS: readonly string[] = Object.keys(METHOD_REGISTRY).filter((name) => name !== 'qbft_proposeValidatorVote');

/** A piece of JSON text spliced in verbatim: numbers of any length, nesting of any depth. */
class RawText {
  constructor(readonly text: string) {}
}

type Doc = null | boolean | string | RawText | Doc[] | { [key: string]: Doc };

/** JSON text of a Doc (object keys in insertion order; `undefined` members are left out). */
export function docText(doc: Doc | undefined): string {
  if (doc instanceof RawText) return doc.text;
  if (Array.isArray(doc)) return `[${doc.map((item) => docText(item)).join(',')}]`;
  if (doc !== null && typeof doc === 'object') {
    const members = Object.entries(doc).filter(([, value]) => value !== undefined);
    return `{${members.map(([key, value]) => `${JSON.stringify(key)}:${docText(value)}`).join(',')}}`;
  }
  return JSON.stringify(doc);
}

export interface BodyLimits {
  /** Longest giant string or hex value (characters). */
  maxGiantLength: number;
  /** Most entries of a batch (go beyond the node's --rpc-http-max-batch-size to hit it). */
  maxBatchEntries: number;
  /** Deepest nesting generated (beyond 1000 is a Parse error). */
  maxDepth: number;
}

export const CI_BODY_LIMITS: BodyLimits = { maxGiantLength: 200_000, maxBatchEntries: 24, maxDepth: 3000 };

const HEX = '0123456789abcdefABCDEF';
const hexDigits = (minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...HEX), minLength, maxLength });
const decimalDigits = (minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });

/** Strings shaped like the params Besu parses: quantities, tags, addresses, hashes, data. */
function paramStrings(limits: BodyLimits): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: hexDigits(0, 70).map((h) => `0x${h}`) },
    { weight: 3, arbitrary: hexDigits(40, 40).map((h) => `0x${h}`) },
    { weight: 3, arbitrary: hexDigits(64, 64).map((h) => `0x${h}`) },
    { weight: 2, arbitrary: fc.constantFrom('latest', 'earliest', 'pending', 'finalized', 'safe', 'LATEST', 'Pending', 'latest ', '0x', '0X1', '#10', '010', '-1', '-0x1', '0x-1', '', 'true', 'TRUE', 'null') },
    { weight: 2, arbitrary: decimalDigits(1, 40) },
    { weight: 2, arbitrary: fc.tuple(fc.boolean(), decimalDigits(1, 1500)).map(([hex, digits]) => (hex ? `0x${digits}` : digits)) },
    { weight: 1, arbitrary: hexDigits(0, 400).map((h) => `0x${h}`) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
    { weight: 1, arbitrary: giantString(limits) },
    { weight: 1, arbitrary: fc.constantFrom('enode://' + 'a'.repeat(128) + '@127.0.0.1:1', 'enode://x@y:z', '0x' + '0'.repeat(64)) },
  );
}

/** Lengths spread over orders of magnitude up to the limit, so that the average body stays small. */
function giantLength(limits: BodyLimits): fc.Arbitrary<number> {
  const max = limits.maxGiantLength;
  return fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1000, max: Math.min(max, 10_000) }) },
    { weight: 3, arbitrary: fc.integer({ min: 1000, max: Math.min(max, 100_000) }) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max }) },
  );
}

function giantString(limits: BodyLimits): fc.Arbitrary<string> {
  return fc
    .tuple(giantLength(limits), fc.constantFrom('0x', '', '0xf', '\u00e9', '\ud83d\ude00'), fc.constantFrom('f', '0', 'a', '\u00ff', '\ud83d\udca9', '\\'))
    .map(([length, prefix, unit]) => prefix + unit.repeat(Math.floor(length / unit.length)));
}

/** Number literals: ordinary, extreme, long (past 1000 digits is a Parse error), exponents. */
function numberLiterals(): fc.Arbitrary<RawText> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.integer().map(String) },
      { weight: 3, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? '-0.0' : String(d))) },
      { weight: 2, arbitrary: fc.constantFrom('0', '-0', '1.0', '1e999999', '-1e-999999', '9007199254740993', '18446744073709551616', '1E2', '0.5e-7') },
      { weight: 1, arbitrary: fc.tuple(fc.boolean(), decimalDigits(1, 1100)).map(([negative, digits]) => `${negative ? '-' : ''}${digits.replace(/^0+(?=.)/, '')}`) },
      { weight: 1, arbitrary: fc.tuple(decimalDigits(1, 550), decimalDigits(1, 550)).map(([a, b]) => `${a.replace(/^0+(?=.)/, '')}.${b}e${b.length}`) },
    )
    .map((text) => new RawText(text));
}

/** Nesting of arrays and objects `depth` levels deep around a leaf. */
function deepNesting(limits: BodyLimits): fc.Arbitrary<RawText> {
  return fc
    .tuple(
      fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 2, max: 1000 }) }, { weight: 1, arbitrary: fc.integer({ min: 1001, max: limits.maxDepth }) }),
      fc.constantFrom('[', '{"a":', '[{"b":'),
      fc.constantFrom('0', '"x"', 'null', '[]'),
    )
    .map(([depth, open, leaf]) => {
      const levels = Math.max(1, Math.floor(depth / (open === '[{"b":' ? 2 : 1)));
      const close = open === '[' ? ']' : open === '{"a":' ? '}' : '}]';
      return new RawText(open.repeat(levels) + leaf + close.repeat(levels));
    });
}

/** Keys the param parsers look for (call objects, filters, EIP-1898, trace options, pool filters). */
const KNOWN_KEYS = [
  'from', 'to', 'gas', 'gasPrice', 'maxFeePerGas', 'maxPriorityFeePerGas', 'maxFeePerBlobGas', 'value', 'data', 'input', 'nonce',
  'chainId', 'accessList', 'authorizationList', 'blobVersionedHashes', 'strict', 'fromBlock', 'toBlock', 'address', 'topics',
  'blockHash', 'blockhash', 'blockNumber', 'requireCanonical', 'disableStorage', 'disableMemory', 'disableStack', 'storageKeys',
  'balance', 'code', 'state', 'stateDiff', 'movePrecompileToAddress', 'eq', 'gt', 'lt', 'action',
];

function docs(limits: BodyLimits): fc.Arbitrary<Doc> {
  const leaf: fc.Arbitrary<Doc> = fc.oneof(
    { weight: 5, arbitrary: paramStrings(limits) },
    { weight: 2, arbitrary: numberLiterals() },
    { weight: 1, arbitrary: fc.constantFrom<Doc>(null, true, false) },
  );
  const { doc } = fc.letrec<{ doc: Doc }>((tie) => ({
    doc: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 12, arbitrary: leaf },
      { weight: 2, arbitrary: fc.array(tie('doc'), { maxLength: 5 }) },
      {
        weight: 2,
        arbitrary: fc
          .array(fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KNOWN_KEYS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), tie('doc')), { maxLength: 6 })
          .map((members) => Object.fromEntries(members) as Doc),
      },
      { weight: 1, arbitrary: deepNesting(limits) },
    ),
  }));
  return doc;
}

/** One request object: fields right or wrong, any of them missing. */
function requests(limits: BodyLimits, methods: readonly string[]): fc.Arbitrary<Doc> {
  const doc = docs(limits);
  const absent = fc.constant(undefined);
  return fc
    .record({
      jsonrpc: fc.oneof({ weight: 18, arbitrary: fc.constant<Doc>('2.0') }, { weight: 1, arbitrary: absent }, { weight: 1, arbitrary: doc }),
      id: fc.oneof(
        { weight: 10, arbitrary: fc.integer({ min: 0, max: 1_000_000 }).map((n) => new RawText(String(n)) as Doc) },
        { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) as fc.Arbitrary<Doc> },
        { weight: 1, arbitrary: absent },
        { weight: 1, arbitrary: doc },
      ),
      method: fc.oneof(
        { weight: 26, arbitrary: fc.constantFrom<Doc>(...methods) },
        { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) as fc.Arbitrary<Doc> },
        { weight: 1, arbitrary: absent },
        { weight: 1, arbitrary: doc },
      ),
      params: fc.oneof(
        { weight: 18, arbitrary: fc.array(doc, { maxLength: 4 }) as fc.Arbitrary<Doc> },
        { weight: 1, arbitrary: absent },
        { weight: 1, arbitrary: doc },
      ),
    })
    .map((request) => request as Doc);
}

/** Random edits of a text: deletions, insertions, replacements, truncation, duplication. */
function mutated(texts: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const edit = fc.tuple(fc.nat(), fc.nat({ max: 16 }), fc.constantFrom('delete', 'insert', 'replace', 'truncate', 'duplicate'), fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }));
  return fc.tuple(texts, fc.array(edit, { minLength: 1, maxLength: 4 })).map(([text, edits]) => {
    let out = text;
    for (const [at, length, kind, chars] of edits) {
      const i = out.length === 0 ? 0 : at % out.length;
      if (kind === 'delete') out = out.slice(0, i) + out.slice(i + length);
      else if (kind === 'insert') out = out.slice(0, i) + chars + out.slice(i);
      else if (kind === 'replace') out = out.slice(0, i) + chars + out.slice(i + chars.length);
      else if (kind === 'truncate') out = out.slice(0, i);
      else out = out.slice(0, i + length) + out.slice(i);
    }
    return out;
  });
}

/** HTTP bodies for a JSON-RPC endpoint, from well-formed to garbage. */
export function jsonRpcBodies(limits: BodyLimits = CI_BODY_LIMITS, methods: readonly string[] = FUZZED_METHODS): fc.Arbitrary<string> {
  const request = requests(limits, methods);
  const single = request.map(docText);
  const batch = fc
    .array(fc.oneof({ weight: 5, arbitrary: request }, { weight: 1, arbitrary: docs(limits) }), { maxLength: limits.maxBatchEntries })
    .map((entries) => docText(entries));
  return fc.oneof(
    { weight: 45, arbitrary: single },
    { weight: 12, arbitrary: batch },
    { weight: 20, arbitrary: mutated(fc.oneof(single, batch)) },
    { weight: 5, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 5, arbitrary: docs(limits).map(docText) },
    { weight: 5, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 3, arbitrary: deepNesting(limits).map((raw) => raw.text) },
    { weight: 2, arbitrary: giantString(limits).map((text) => `{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":[${JSON.stringify(text)},"latest"]}`) },
  );
}
