/**
 * The GraphQL HTTP port of a running node (rpc-auth-cli.md §10.1): GET and POST forms, the redirect
 * from `/`, the HTTP policy (host allow-list, CORS, routes, Accept), error answers, the mutation,
 * the options from the command line, environment and config file, and a node serving GraphQL alone.
 * Raw node:http requests, so that Host, Origin and the other headers are exactly what a test says.
 */
import test from 'ava';
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Wallet, Transaction } from 'ethers';
import { removeDataPath, startNode, tempDataPath, waitFor, type NodeProcess } from '../helpers/node-process.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(url: string, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `localhost:${target.port}`, ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request({ host: '127.0.0.1', port: target.port, method: options.method ?? 'POST', path: options.path ?? target.pathname, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const json = (reply: Reply) => JSON.parse(reply.body) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions: { classification: string } }[] };

let node: NodeProcess;
let graphqlOnly: NodeProcess;
let configDir: string;

test.before(async () => {
  configDir = tempDataPath();
  const config = join(configDir, 'basalt.toml');
  writeFileSync(config, ['graphql-max-query-depth=3', 'graphql-http-cors-origins=["http://allowed\\\\.example"]'].join('\n'));
  [node, graphqlOnly] = await Promise.all([
    startNode({
      graphql: true,
      // GraphQL in a transport thread of its own.
      args: [
        '--host-allowlist=localhost,127.0.0.1,graphql.example',
        '--graphql-http-cors-origins=http://allowed\\.example',
        '--min-gas-price=0',
        '--rpc-http-workers=1',
        '--graphql-http-workers=1',
      ],
    }),
    // Options from the environment and the config file; no JSON-RPC port at all.
    startNode({ graphql: true, jsonRpc: false, args: [`--config-file=${config}`], env: { BASALT_GRAPHQL_MAX_QUERY_COMPLEXITY: '5' } }),
  ]);
});

test.after.always(async () => {
  for (const running of [node, graphqlOnly]) {
    if (running === undefined) continue;
    await running.stop();
    removeDataPath(running.dataPath);
  }
  removeDataPath(configDir);
});

test('POST with a JSON body: query, variables and the operation to run', async (t) => {
  const reply = await request(node.graphqlUrl!, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'query A { chainID } query B($n: Long!) { block(number: $n) { number } }',
      operationName: 'B',
      variables: { n: '0x0' },
    }),
  });
  t.is(reply.status, 200);
  t.is(reply.headers['content-type'], 'application/json; charset=utf-8');
  t.deepEqual(json(reply), { data: { block: { number: '0x0' } } });
  // Pretty-printed as Besu (Jackson) prints it.
  t.is(reply.body, '{\n  "data" : {\n    "block" : {\n      "number" : "0x0"\n    }\n  }\n}');
});

test('POST with any other content type: the body is the query', async (t) => {
  const reply = await request(node.graphqlUrl!, { headers: { 'content-type': 'application/graphql' }, body: '{ chainID }' });
  t.deepEqual([reply.status, json(reply)], [200, { data: { chainID: '0x539' } }]);
  const plain = await request(node.graphqlUrl!, { body: '  { chainID }\n' });
  t.deepEqual([plain.status, json(plain)], [200, { data: { chainID: '0x539' } }]);
});

test('GET with query, operationName and variables in the query string', async (t) => {
  const params = new URLSearchParams({ query: 'query A { chainID } query B($n: Long) { block(number: $n) { number } }', operationName: 'B', variables: '{"n":0}' });
  const reply = await request(node.graphqlUrl!, { method: 'GET', path: `/graphql?${params}` });
  t.deepEqual([reply.status, json(reply)], [200, { data: { block: { number: '0x0' } } }]);
  const noQuery = await request(node.graphqlUrl!, { method: 'GET', path: '/graphql' });
  t.is(noQuery.status, 400);
  t.is(json(noQuery).errors![0]!.extensions.classification, 'InvalidSyntax');
});

test('GET or POST to / is redirected to /graphql (308)', async (t) => {
  for (const method of ['GET', 'POST']) {
    const reply = await request(node.graphqlUrl!, { method, path: '/' });
    t.is(reply.status, 308, method);
    t.is(reply.headers.location, '/graphql');
  }
});

test('routes: unknown path 404, other method 405, an Accept without JSON 406', async (t) => {
  const unknown = await request(node.graphqlUrl!, { method: 'GET', path: '/nothing' });
  t.is(unknown.status, 404);
  t.is(unknown.body, '<html><body><h1>Resource not found</h1></body></html>');
  t.is((await request(node.graphqlUrl!, { method: 'PUT', body: '{ chainID }' })).status, 405);
  t.is((await request(node.graphqlUrl!, { headers: { accept: 'text/html' }, body: '{ chainID }' })).status, 406);
  t.is((await request(node.graphqlUrl!, { headers: { accept: 'application/json' }, body: '{ chainID }' })).status, 200);
});

test('errors: an undecodable JSON body, a syntax error, an unknown field, a bad scalar, an execution error', async (t) => {
  const undecodable = await request(node.graphqlUrl!, { headers: { 'content-type': 'application/json' }, body: '{"query": ' });
  t.is(undecodable.status, 400);
  t.regex((JSON.parse(undecodable.body) as { result: string }).result, /^Failed to decode:/);

  const syntax = await request(node.graphqlUrl!, { body: '{ block { number }' });
  t.is(syntax.status, 400);
  t.deepEqual(json(syntax).errors, [
    {
      message: "Invalid syntax with offending token '<EOF>' at line 1 column 19",
      locations: [{ line: 1, column: 19 }],
      extensions: { classification: 'InvalidSyntax' },
    },
  ] as never);

  const unknownField = await request(node.graphqlUrl!, { body: '{ block { number size } }' });
  t.is(unknownField.status, 400);
  t.deepEqual(json(unknownField), {
    errors: [
      {
        message: "Validation error (FieldUndefined@[block/size]) : Field 'size' in type 'Block' is undefined",
        locations: [{ line: 1, column: 18 }],
        extensions: { classification: 'ValidationError' },
      },
    ],
  } as never);

  for (const [query, message] of [
    ['{ pending { account(address: "0x1234") { balance } } }', "argument 'address' with value 'StringValue{value='0x1234'}' is not a valid 'Address' - Value is not any Address : 'StringValue{value='0x1234'}'"],
    ['{ block(number: "ten") { number } }', "argument 'number' with value 'StringValue{value='ten'}' is not a valid 'Long' - Value is not any Long : 'StringValue{value='ten'}'"],
    ['{ block(number: 99999999999999999999) { number } }', "argument 'number' with value 'IntValue{value=99999999999999999999}' is not a valid 'Long' - Value is not any Long : 'IntValue{value=99999999999999999999}'"],
    ['{ block { account(address: "0x0000000000000000000000000000000000000000") { storage(slot: "12") } } }', "argument 'slot' with value 'StringValue{value='12'}' is not a valid 'Bytes32' - Bytes32 value '12' is not prefixed with 0x"],
    ['{ block { call(data: { value: true }) { status } } }', "argument 'data.value' with value 'BooleanValue{value=true}' is not a valid 'BigInt' - Value is not any BigInt : 'BooleanValue{value=true}'"],
  ] as const) {
    const reply = await request(node.graphqlUrl!, { body: query });
    t.is(reply.status, 400, query);
    t.true(json(reply).errors![0]!.message.endsWith(message), `${query}: ${json(reply).errors![0]!.message}`);
    t.regex(json(reply).errors![0]!.message, /^Validation error \(WrongType@\[[a-z/]+\]\) : /);
  }

  const missing = await request(node.graphqlUrl!, { body: '{ block(number: 1000000) { number } }' });
  t.is(missing.status, 400);
  t.deepEqual(json(missing), {
    errors: [
      {
        message: 'Exception while fetching data (/block) : Block number 1000000 was not found',
        locations: [{ line: 1, column: 3 }],
        path: ['block'],
        extensions: { classification: 'DataFetchingException' },
      },
    ],
    data: { block: null },
  } as never);
});

test('CORS: an allowed origin gets its headers, another is refused, a preflight is answered', async (t) => {
  const allowed = await request(node.graphqlUrl!, { headers: { origin: 'http://allowed.example' }, body: '{ chainID }' });
  t.is(allowed.status, 200);
  t.is(allowed.headers['access-control-allow-origin'], 'http://allowed.example');
  t.is((await request(node.graphqlUrl!, { headers: { origin: 'http://evil.example' }, body: '{ chainID }' })).status, 403);
  const preflight = await request(node.graphqlUrl!, {
    method: 'OPTIONS',
    headers: { origin: 'http://allowed.example', 'access-control-request-method': 'POST' },
  });
  t.is(preflight.status, 204);
  t.is(preflight.headers['access-control-allow-origin'], 'http://allowed.example');
  t.is(preflight.headers['access-control-allow-headers'], '*,content-type');
  // No origins configured (the GraphQL-only node's come from its config file: that one is allowed).
  t.is((await request(graphqlOnly.graphqlUrl!, { headers: { origin: 'http://allowed.example' }, body: '{ chainID }' })).status, 200);
  t.is((await request(graphqlOnly.graphqlUrl!, { headers: { origin: 'http://other.example' }, body: '{ chainID }' })).status, 403);
});

test('host allow-list: a listed host is served, another refused as on the JSON-RPC port', async (t) => {
  const port = new URL(node.graphqlUrl!).port;
  t.is((await request(node.graphqlUrl!, { headers: { host: `graphql.example:${port}` }, body: '{ chainID }' })).status, 200);
  const refused = await request(node.graphqlUrl!, { headers: { host: `evil.example:${port}` }, body: '{ chainID }' });
  t.is(refused.status, 403);
  t.is(refused.body, '{"message":"Host not authorized."}');
});

test('with --graphql-http-workers, JSON-RPC and GraphQL each have their own transport thread', async (t) => {
  t.regex(node.output(), /JSON-RPC HTTP service started and listening on 127\.0\.0\.1:\d+ \(1 worker\)\n/);
  t.regex(node.output(), /GraphQL HTTP service started and listening on 127\.0\.0\.1:\d+ \(1 worker\)/);
  t.is((await request(node.graphqlUrl!, { body: '{ chainID }' })).status, 200);
  t.is(await node.rpc('eth_chainId'), '0x539');
});

test('net_services names the GraphQL port', async (t) => {
  const services = await node.rpc<Record<string, { host: string; port: string }>>('net_services');
  t.deepEqual(services.graphQL, { host: '127.0.0.1', port: new URL(node.graphqlUrl!).port });
});

test('sendRawTransaction pools a signed transaction; it is then found by hash, pending or mined', async (t) => {
  const wallet = new Wallet(DEV_ACCOUNTS[2].privateKey);
  const nonce = await node.rpc<string>('eth_getTransactionCount', [wallet.address, 'pending']);
  const raw = await wallet.signTransaction(
    Transaction.from({ type: 2, chainId: 1337, nonce: Number(nonce), to: DEV_ACCOUNTS[0].address, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n }),
  );
  const sent = await request(node.graphqlUrl!, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'mutation ($raw: Bytes!) { sendRawTransaction(data: $raw) }', variables: { raw } }) });
  t.is(sent.status, 200, sent.body);
  const hash = json(sent).data!.sendRawTransaction as string;
  t.is(hash, Transaction.from(raw).hash!);
  const query = `{ transaction(hash: "${hash}") { hash nonce from { address } to { address } value type block { number } status } }`;
  const mined = await waitFor(
    'the transaction to be mined',
    async () => json(await request(node.graphqlUrl!, { body: query })).data!.transaction as { block: { number: string } | null; status: string | null } | null,
    (tx) => tx?.block !== null && tx?.block !== undefined,
  );
  t.like(mined, { status: '0x1' });
  const again = await request(node.graphqlUrl!, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'mutation ($raw: Bytes!) { sendRawTransaction(data: $raw) }', variables: { raw } }) });
  t.is(again.status, 400);
  t.like(json(again).errors![0], { message: 'Exception while fetching data (/sendRawTransaction) : Nonce too low', extensions: { errorCode: -32001, errorMessage: 'Nonce too low', classification: 'DataFetchingException' } });
});

test('pending: the pool\'s transactions and count, an account, call and estimateGas on the head state', async (t) => {
  const wallet = new Wallet(DEV_ACCOUNTS[1].privateKey);
  const sender = wallet.address.toLowerCase();
  const recipient = DEV_ACCOUNTS[0].address;
  const nonce = BigInt(await node.rpc<string>('eth_getTransactionCount', [sender, 'latest']));
  // A nonce gap keeps the transaction in the pool: it cannot be mined before the ones it waits for.
  const raw = await wallet.signTransaction(
    Transaction.from({ type: 2, chainId: 1337, nonce: Number(nonce + 3n), to: recipient, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n }),
  );
  const hash = await node.rpc<string>('eth_sendRawTransaction', [raw]);
  const reply = await request(node.graphqlUrl!, {
    body: `{ pending {
      transactionCount
      transactions { hash nonce from { address } }
      account(address: "${sender}") { transactionCount }
      estimateGas(data: { from: "${sender}", to: "${recipient}", value: "0x1" })
      call(data: { from: "${sender}", to: "${recipient}" }) { data status gasUsed }
    } }`,
  });
  t.is(reply.status, 200, reply.body);
  const pending = json(reply).data!.pending as {
    transactionCount: string;
    transactions: { hash: string; nonce: string; from: { address: string } }[];
    account: { transactionCount: string };
    estimateGas: string;
    call: { data: string; status: string; gasUsed: string };
  };
  t.true(BigInt(pending.transactionCount) >= 1n);
  t.deepEqual(
    pending.transactions.find((tx) => tx.hash === hash),
    { hash, nonce: `0x${(nonce + 3n).toString(16)}`, from: { address: sender } },
  );
  t.is(BigInt(pending.account.transactionCount), nonce);
  t.is(pending.estimateGas, '0x5208');
  t.deepEqual(pending.call, { data: '0x', status: '0x1', gasUsed: '0x5208' });
});

test('syncing is null on a node that is not catching up', async (t) => {
  const reply = await request(node.graphqlUrl!, { body: '{ syncing { startingBlock currentBlock highestBlock } }' });
  t.deepEqual([reply.status, json(reply)], [200, { data: { syncing: null } }]);
});

test('a node serving GraphQL alone takes its limits from the environment and the config file', async (t) => {
  t.is(graphqlOnly.url, '');
  t.false(graphqlOnly.output().includes('JSON-RPC HTTP service started'));
  t.is((await request(graphqlOnly.graphqlUrl!, { body: '{ block { number hash } }' })).status, 200);
  const complex = await request(graphqlOnly.graphqlUrl!, { body: '{ block { number hash gasUsed gasLimit timestamp } }' });
  t.deepEqual([complex.status, json(complex)], [400, { errors: [{ message: 'maximum query complexity exceeded 6 > 5', extensions: { classification: 'ExecutionAborted' } }] }]);
  const deep = await request(graphqlOnly.graphqlUrl!, { body: '{ block { parent { parent { number } } } }' });
  t.deepEqual(json(deep).errors, [{ message: 'maximum query depth exceeded 4 > 3', extensions: { classification: 'ExecutionAborted' } }] as never);
});
