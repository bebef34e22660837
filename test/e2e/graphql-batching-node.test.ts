/**
 * GraphQL's batching in a running node: a query over every block of Besu's test chain (35 blocks,
 * 34 transactions calling a contract that logs) sends the chain actor as many requests as the same
 * query over 5 blocks — one per kind of data — as counted by the transport thread itself (its DEBUG
 * line per query). test/unit/graphql-batching.test.ts makes the same comparison for 100 blocks in
 * one process.
 */
import test from 'ava';
import { removeDataPath, type NodeProcess } from '../helpers/node-process.js';
import { startBesuGraphqlTestNode } from '../helpers/parity-node.js';

let node: NodeProcess;

test.before(async () => {
  node = await startBesuGraphqlTestNode(['--logging=DEBUG']);
});

test.after.always(async () => {
  if (node === undefined) return;
  await node.stop();
  removeDataPath(node.dataPath);
});

const ANSWERED = /GraphQL query answered (\d+) after (\d+) actor requests?(?: \((.*)\))?$/;

interface Answered {
  data: { blocks: { number: string; transactionCount?: string; transactions: { status: string | null; from: { balance: string }; logs: { topics: string[] }[] }[] }[] };
  /** Requests by kind, as the transport logged them. */
  requests: Record<string, number>;
  total: number;
}

/** Runs one query and reads the transport's own count of the actor requests it made. */
async function run(query: string): Promise<Answered> {
  const since = node.output().length;
  const res = await fetch(node.graphqlUrl!, { method: 'POST', headers: { 'content-type': 'application/graphql' }, body: query });
  const body = (await res.json()) as { data: Answered['data']; errors?: unknown };
  if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(body)}`);
  const { match } = await node.waitForLog(ANSWERED, { since });
  const requests = Object.fromEntries((match[3] ?? '').split(', ').filter(Boolean).map((entry) => entry.split(' ') as [string, string]).map(([kind, n]) => [kind, Number(n)]));
  return { data: body.data, requests, total: Number(match[2]) };
}

const explorerQuery = (from: number, to: number) =>
  `{ blocks(from: ${from}, to: ${to}) { number transactions { hash status gasUsed from { address balance } to { address } logs { index topics data } } } }`;

test.serial('35 blocks with transactions, receipts, senders\' balances and logs cost the chain as many requests as 5 blocks', async (t) => {
  const all = await run(explorerQuery(0, 34));
  const few = await run(explorerQuery(30, 34));
  t.is(all.data.blocks.length, 35);
  t.is(all.data.blocks.flatMap((block) => block.transactions).length, 34);
  t.true(all.data.blocks.some((block) => block.transactions.some((tx) => tx.logs.length > 0)), 'the chain has logs to read');
  t.is(few.data.blocks.length, 5);
  t.deepEqual(all.requests, few.requests);
  t.is(all.total, few.total);
  // One request per kind of data: blocks, their transactions, their receipts, the senders' accounts.
  t.deepEqual(all.requests, { 'chain.blocks': 1, 'chain.blockTransactions': 1, 'chain.receipts': 1, 'chain.accounts': 1 });
});

test.serial('blocks are read without their transactions unless the query asks for them', async (t) => {
  const counts = await run('{ blocks(from: 0, to: 34) { number transactionCount } }');
  t.is(counts.data.blocks.reduce((sum, block) => sum + Number(block.transactionCount), 0), 34);
  t.deepEqual(counts.requests, { 'chain.blocks': 1 });
  const hashes = await run('{ blocks(from: 0, to: 34) { transactions { hash } } }');
  t.is(hashes.data.blocks.flatMap((block) => block.transactions).length, 34);
  t.deepEqual(hashes.requests, { 'chain.blocks': 1, 'chain.blockTransactions': 1 });
});

test.serial("a transaction by hash is read with its own receipt: neither its block's transactions nor its receipts", async (t) => {
  const withLogs = await run('{ blocks(from: 0, to: 34) { number transactions { hash index status gasUsed logs { index } } } }');
  const [block, tx] = withLogs.data.blocks
    .flatMap((b) => (b as unknown as { number: string; transactions: { hash: string; index: string; status: string | null; gasUsed: string; logs: { index: string }[] }[] }).transactions.map((each) => [b, each] as const))
    .find(([, each]) => each.logs.length > 0)!;
  const one = (await run(`{ transaction(hash: "${tx.hash}") { index status gasUsed logs { index } block { number } } }`)) as unknown as {
    data: { transaction: { index: string; status: string | null; gasUsed: string; logs: { index: string }[]; block: { number: string } } };
    requests: Record<string, number>;
  };
  t.deepEqual(one.data.transaction.logs, tx.logs, 'the same log indexes as read through the block');
  t.is(one.data.transaction.index, tx.index);
  t.is(one.data.transaction.block.number, block.number);
  t.is(one.data.transaction.status, tx.status);
  t.is(one.data.transaction.gasUsed, tx.gasUsed);
  t.is(one.requests['chain.transactions'], 1);
  t.is(one.requests['chain.receipts'] ?? 0, 0);
  t.is(one.requests['chain.blockTransactions'] ?? 0, 0);
});

test.serial('a query that reads nothing from the actors says so', async (t) => {
  const since = node.output().length;
  const res = await fetch(node.graphqlUrl!, { method: 'POST', headers: { 'content-type': 'application/graphql' }, body: '{ chainID }' });
  t.is(res.status, 200);
  const { match } = await node.waitForLog(ANSWERED, { since });
  t.is(match[2], '0');
});
