/**
 * Replays Besu's own JSON-RPC spec fixtures (eth family) through the transport-side pipeline:
 * handleJsonRpcBody → createMethodCaller → registry param parsing. With a stand-in for the actors,
 * this checks everything the transport decides: which params are rejected and with which -32602
 * variant, ids, HTTP status, and that valid requests do reach the owner. Transport-answered
 * methods run for real against the node state the fixtures assume (head 0x22, network id 123).
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMethodCaller, handleJsonRpcBody } from '../../src/transport/jsonrpc.js';
import { lookupMethod } from '../../src/shared/rpc/registry.js';
import { createHeadBuffer, HeadReader, HeadWriter } from '../../src/shared/shared-memory/head-view.js';
import { createDispatch, createLocalMethods } from '../../src/transport/local-methods.js';
import { BESU_FIXTURES, REPO_ROOT } from '../helpers/node-process.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';

const FIXTURES = join(BESU_FIXTURES, 'rpc', 'eth');

/** Fixtures whose -32602 comes from an actor (RLP / signature / tx-type checks), not from param parsing. */
const REJECTED_BY_ACTOR = new Set([
  'eth_sendRawTransaction_invalidByteValueHex.json',
  'eth_sendRawTransaction_invalidRawTransaction.json',
  'eth_sendRawTransaction_unsignedTransaction.json',
  'eth_call_blob_without_to.json',
  // from > to needs no head, but Besu checks the range where it resolves it, in the chain actor.
  'eth_getLogs_fromBlockExceedToBlock.json',
]);

/** Cases Basalt knowingly answers differently, with the reasons (shared with e2e/besu-fixtures.test.ts). */
const KNOWN_GAPS = new Set(
  Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'besu-known-gaps.json'), 'utf8')) as Record<string, string>).map((name) => `${name}.json`),
);

/** What the stand-in actors answer: a marker proving the request got past the transport. */
const REACHED_OWNER = '__reached_owner__';

interface FixtureRequest {
  id: unknown;
  method: string;
  params?: unknown;
}

interface FixtureResponse {
  id: unknown;
  result?: unknown;
  error?: unknown;
}

interface Fixture {
  request: FixtureRequest | FixtureRequest[];
  response: FixtureResponse | FixtureResponse[];
  statusCode: number;
}

function loadFixtures(): [string, Fixture][] {
  if (!existsSync(FIXTURES)) throw new Error(`Besu fixtures not found at ${FIXTURES} (set BESU_FIXTURES)`);
  return readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => [name, JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Fixture]);
}

const fixtures = loadFixtures();

const headBuffer = createHeadBuffer();
new HeadWriter(headBuffer).publish(0x22n, new Uint8Array(32).fill(1));
const local = createLocalMethods({
  clientVersion: 'basalt/test',
  networkId: 123n,
  chainId: 1n,
  apis: ['ETH', 'NET', 'WEB3', 'DEBUG', 'TRACE', 'TESTING'],
  head: new HeadReader(headBuffer),
  p2pEnabled: true,
});
const call = createMethodCaller({
  enabledApis: ['ETH', 'NET', 'WEB3', 'DEBUG', 'TRACE', 'TESTING'],
  send: createDispatch(local, async () => ({ result: REACHED_OWNER })),
});

const requestsOf = (fixture: Fixture): FixtureRequest[] => (Array.isArray(fixture.request) ? fixture.request : [fixture.request]);

const served = fixtures.filter(([, fixture]) => requestsOf(fixture).every((request) => lookupMethod(request.method) !== undefined));

test('the fixture set covers the registered methods, batches included', (t) => {
  const methods = new Set(served.flatMap(([, fixture]) => requestsOf(fixture).map((request) => request.method)));
  for (const method of ['eth_getBalance', 'eth_getCode', 'eth_getStorageAt', 'eth_getTransactionCount', 'eth_call', 'eth_estimateGas', 'eth_getBlockByNumber', 'eth_getTransactionByHash', 'eth_getTransactionReceipt', 'eth_sendRawTransaction', 'eth_blockNumber', 'net_version']) {
    t.true(methods.has(method), method);
  }
  t.true(served.some(([, fixture]) => Array.isArray(fixture.request)));
  t.true(served.length > 100);
});

/** Checks one answer against Besu's expected one; `status` is checked only for single requests. */
function checkAnswer(
  t: ExecutionContext,
  name: string,
  answer: { jsonrpc: string; id: unknown; result?: unknown; error?: unknown },
  expected: FixtureResponse,
): void {
  t.is(answer.jsonrpc, '2.0');
  t.deepEqual(answer.id, expected.id);
  const expectedError = expected.error as { code: number } | undefined;
  if (expectedError === undefined) {
    // A valid request: the transport must let it through (or answer it itself, correctly).
    t.is(answer.error, undefined, JSON.stringify(answer.error));
    if (answer.result !== REACHED_OWNER && !KNOWN_GAPS.has(name)) t.deepEqual(answer.result, expected.result);
  } else if (expectedError.code === -32602 && !REJECTED_BY_ACTOR.has(name)) {
    t.is(JSON.stringify(answer.error), JSON.stringify(expectedError));
  } else {
    t.is(answer.result, REACHED_OWNER, 'an execution-time error must be left to the owner');
  }
}

for (const [name, fixture] of served) {
  test(`fixture ${name}`, async (t) => {
    const reply = await handleJsonRpcBody(JSON.stringify(fixture.request), { maxBatchSize: 10, call });
    const body = JSON.parse(jsonTextToString(reply.body)) as Parameters<typeof checkAnswer>[2] | Parameters<typeof checkAnswer>[2][];
    if (Array.isArray(fixture.response)) {
      t.is(reply.status, fixture.statusCode);
      if (!Array.isArray(body)) return t.fail('a batch must be answered with an array');
      t.is(body.length, fixture.response.length);
      fixture.response.forEach((expected, i) => checkAnswer(t, name, body[i]!, expected));
      return;
    }
    if (Array.isArray(body)) return t.fail('a single request must be answered with an object');
    const expectedError = fixture.response.error as { code: number } | undefined;
    if (expectedError === undefined || (expectedError.code === -32602 && !REJECTED_BY_ACTOR.has(name))) {
      t.is(reply.status, fixture.statusCode);
    }
    checkAnswer(t, name, body, fixture.response);
  });
}
