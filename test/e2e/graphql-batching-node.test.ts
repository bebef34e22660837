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
  data: { blocks: { number: string; transactions: { status: string | null; from: { balance: string }; logs: { topics: string[] }[] }[] }[] };
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
  // One request per kind of data: blocks, their receipts, the senders' accounts.
  t.deepEqual(all.requests, { 'chain.blocks': 1, 'chain.receipts': 1, 'chain.accounts': 1 });
});

test.serial('a query that reads nothing from the actors says so', async (t) => {
  const since = node.output().length;
  const res = await fetch(node.graphqlUrl!, { method: 'POST', headers: { 'content-type': 'application/graphql' }, body: '{ chainID }' });
  t.is(res.status, 200);
  const { match } = await node.waitForLog(ANSWERED, { since });
  t.is(match[2], '0');
});
