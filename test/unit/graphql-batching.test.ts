/**
 * GraphQL resolution against a real chain in one process, over real MessagePort channels to the
 * chain's handlers: a query over many blocks with their transactions, receipts, logs and accounts
 * costs a fixed number of actor round trips, the same for 10 blocks as for 100 (one bulk request per
 * kind of data per level), and a query over the limits costs none.
 */
import test from 'ava';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { ChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import { openChannel } from '../../src/shared/actors/channel.js';
import { TRANSPORT_CHAIN, TRANSPORT_LOGINDEX, TRANSPORT_TXPOOL } from '../../src/shared/actors/channels.js';
import type { PoolTxForBlock } from '../../src/shared/actors/messages.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { serveMethods, serveMethodsAsJsonText } from '../../src/shared/rpc/dispatch.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import { createGraphqlService, type GraphqlService } from '../../src/transport/graphql/execute.js';
import type { GraphqlBackend } from '../../src/transport/graphql/query-data.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { STORED_EVENT_TOPIC, storeAndLogDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { openLogIndexOver } from '../helpers/log-index.js';
import type { LogIndexActor } from '../../src/logindex/logindex-actor.js';

const dev = loadDevNetwork();
const txCommon = txCommonFor(1337n, 'cancun');
const BLOCKS = 100;

function signed(key: string, nonce: bigint, fields: { to?: string; data?: string }): PoolTxForBlock {
  const tx = createFeeMarket1559Tx(
    {
      chainId: 1337n,
      nonce,
      gasLimit: 300_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 1n,
      to: fields.to as `0x${string}` | undefined,
      data: fields.data === undefined ? undefined : hexToBytes(fields.data as `0x${string}`),
    },
    { common: txCommon },
  ).sign(hexToBytes(key as `0x${string}`));
  const decoded = decodeRawTransaction(tx.serialize(), txRulesFor(1337n, 'cancun'));
  return { raw: decoded.raw, hash: decoded.hash, senderPublicKey: decoded.senderPublicKey };
}

/** Block 1 deploys a contract that logs; each of the BLOCKS blocks after it holds two calls of it. */
async function buildChain(path: string): Promise<{ chain: Chain; contract: string }> {
  const chain = await Chain.open(path, await chainSpecFromGenesis(JSON.stringify(dev.genesisJson)), { syncEachBlock: false });
  const build = async (transactions: PoolTxForBlock[]) => {
    const head = chain.getHead();
    const built = await chain.buildBlock({ timestamp: head.timestamp + 1n, coinbase: new Uint8Array(20), extraData: head.extraData, maxBuildMs: 10_000, transactions });
    await chain.importBuilt(built, head.extraData);
    return built;
  };
  const [alice, bob] = [DEV_ACCOUNTS[0].privateKey, DEV_ACCOUNTS[1].privateKey];
  const deployed = await build([signed(alice, 0n, { data: storeAndLogDeployCode() })]);
  const receipts = await chain.store.getReceipts(deployed.hash);
  const contract = bytesToHex(receipts![0]!.contractAddress!);
  for (let n = 2; n <= BLOCKS + 1; n++) {
    const word = `0x${n.toString(16).padStart(64, '0')}`;
    await build([signed(alice, BigInt(n - 1), { to: contract, data: word }), signed(bob, BigInt(n - 2), { to: contract, data: word })]);
  }
  return { chain, contract };
}

/** Closed when the tests end: an open port keeps the process alive. */
const openPorts: MessagePort[] = [];

/** The chain's real handlers behind a real channel, with every request the transport end sends counted. */
function backendOf(chain: Chain, logIndex: LogIndexActor): { backend: GraphqlBackend; requests: string[] } {
  const rpc = new ChainRpc(chain, { rpcGasCap: 0n, minGasPrice: 0n });
  const serve = serveMethodsAsJsonText('chain', rpc.handlers);
  const chainPorts = new MessageChannel();
  openChannel(TRANSPORT_CHAIN, 'chain', chainPorts.port2).serve({ rpc: ({ method, params }) => serve(method, params), subscriptionInterest: () => null, ...rpc.bulkReads });
  const chainEnd = openChannel(TRANSPORT_CHAIN, 'transport', chainPorts.port1);
  const poolPorts = new MessageChannel();
  openChannel(TRANSPORT_TXPOOL, 'txpool', poolPorts.port2).serve({
    rpc: () => 'null',
    subscriptionInterest: () => null,
    pending: () => ({ count: 0, transactions: [] }), transactions: ({ hashes }) => hashes.map(() => null) });
  const poolEnd = openChannel(TRANSPORT_TXPOOL, 'transport', poolPorts.port1);
  const logPorts = new MessageChannel();
  openChannel(TRANSPORT_LOGINDEX, 'logindex', logPorts.port2).serve(logIndex.transportHandlers);
  const logEnd = openChannel(TRANSPORT_LOGINDEX, 'transport', logPorts.port1);
  openPorts.push(chainPorts.port1, poolPorts.port1, logPorts.port1);
  const requests: string[] = [];
  const backend: GraphqlBackend = {
    chain: { request: (type, body) => (requests.push(`chain.${type}`), chainEnd.request(type, body)) },
    txpool: { request: (type, body) => (requests.push(`txpool.${type}`), poolEnd.request(type, body)) },
    logindex: { request: (type, body) => (requests.push(`logindex.${type}`), logEnd.request(type, body)) },
    chainId: 1337n,
    headNumber: () => chain.getHead().number,
    syncStatus: () => undefined,
  };
  return { backend, requests };
}

/** Blocks with their transactions, each transaction's receipt fields, sender balance and logs. */
const explorerQuery = (from: number, to: number) => `{
  blocks(from: ${from}, to: ${to}) {
    number hash gasUsed
    transactions { hash nonce status gasUsed from { address balance } to { address } logs { index topics data account { address } } }
  }
}`;

interface ExplorerAnswer {
  data: {
    blocks: {
      number: string;
      hash: string;
      transactions: { hash: string; status: string; from: { address: string; balance: string }; logs: { topics: string[]; account: { address: string } }[] }[];
    }[];
  };
}

let chain: Chain;
let contract: string;
let path: string;
let logIndex: LogIndexActor;

test.before(async () => {
  path = tempDataPath();
  ({ chain, contract } = await buildChain(path));
  ({ actor: logIndex } = await openLogIndexOver(chain, `${path}/log-index`));
});

test.after.always(async () => {
  for (const port of openPorts) port.close();
  await logIndex?.close();
  await chain?.close();
  removeDataPath(path);
});

async function run(service: GraphqlService, query: string) {
  const reply = await service.run({ query }, Date.now() + 60_000);
  return { status: reply.status, body: JSON.parse(reply.body) as unknown };
}

test(`${BLOCKS} blocks with transactions, receipts, senders' balances and logs cost as many round trips as 10 blocks`, async (t) => {
  const counts: Record<number, string[]> = {};
  for (const blocks of [10, BLOCKS]) {
    const { backend, requests } = backendOf(chain, logIndex);
    const service = createGraphqlService(backend, { maxComplexity: 200, maxDepth: 0 });
    const { status, body } = await run(service, explorerQuery(2, blocks + 1));
    t.is(status, 200, JSON.stringify(body).slice(0, 500));
    const answer = body as ExplorerAnswer;
    t.is(answer.data.blocks.length, blocks);
    for (const block of answer.data.blocks) {
      const stored = (await chain.store.getBlockByNumber(BigInt(block.number)))!;
      t.is(block.hash, bytesToHex(stored.hash()));
      t.deepEqual(
        block.transactions.map((tx) => tx.hash),
        stored.transactions.map((tx) => bytesToHex(tx.hash())),
      );
      for (const tx of block.transactions) {
        t.is(tx.status, '0x1');
        t.deepEqual(tx.logs.map((log) => [log.topics, log.account.address]), [[[STORED_EVENT_TOPIC], contract]]);
        t.regex(tx.from.balance, /^0x[0-9a-f]+$/);
      }
    }
    counts[blocks] = requests;
  }
  // blocks (one message for up to 128), then their transactions, then every receipt of every block
  // at once, then every sender's account at every block at once.
  t.deepEqual(counts[BLOCKS], ['chain.blocks', 'chain.blockTransactions', 'chain.receipts', 'chain.accounts']);
  t.deepEqual(counts[10], counts[BLOCKS]);
});

test('a balance read through the batch equals the JSON-RPC answer for the same block', async (t) => {
  const { backend } = backendOf(chain, logIndex);
  const service = createGraphqlService(backend, { maxComplexity: 200, maxDepth: 0 });
  const { body } = await run(service, `{ block(number: 50) { account(address: "${DEV_ACCOUNTS[0].address}") { balance transactionCount } } }`);
  const rpc = serveMethods('chain', new ChainRpc(chain, { rpcGasCap: 0n, minGasPrice: 0n }).handlers);
  const address = hexToBytes(DEV_ACCOUNTS[0].address);
  const block = { kind: 'number', number: 50n } as const;
  t.deepEqual(body, {
    data: {
      block: {
        account: {
          balance: await rpc('eth_getBalance', { address, block }),
          transactionCount: await rpc('eth_getTransactionCount', { address, block }),
        },
      },
    },
  });
});

test('logs over a range are one request, and the transactions they name one request for all their blocks', async (t) => {
  const { backend, requests } = backendOf(chain, logIndex);
  const service = createGraphqlService(backend, { maxComplexity: 200, maxDepth: 0 });
  const { status, body } = await run(service, `{ logs(filter: { fromBlock: 2, toBlock: 40, topics: [["${STORED_EVENT_TOPIC}"]] }) { index data transaction { hash index block { number } } } }`);
  t.is(status, 200);
  const logs = (body as { data: { logs: { transaction: { block: { number: string } } }[] } }).data.logs;
  t.is(logs.length, 2 * 39);
  t.is(logs[0]!.transaction.block.number, '0x2');
  // The logs, then the blocks their transactions are in, then those blocks' transactions (each in one request).
  t.deepEqual(requests, ['logindex.logs', 'chain.blocks', 'chain.blockTransactions']);
});

test('a query over the complexity limit or the depth limit is refused before any read', async (t) => {
  const { backend, requests } = backendOf(chain, logIndex);
  const besu = createGraphqlService(backend, { maxComplexity: 200, maxDepth: 0 });
  const tooComplex = await run(besu, '{ block { transactions { block { transactions { block { number }}}}}}');
  t.deepEqual(tooComplex, {
    status: 400,
    body: { errors: [{ message: 'maximum query complexity exceeded 204 > 200', extensions: { classification: 'ExecutionAborted' } }] },
  });
  const shallow = createGraphqlService(backend, { maxComplexity: 200, maxDepth: 3 });
  const tooDeep = await run(shallow, '{ block { transactions { from { balance } } } }');
  t.deepEqual(tooDeep, {
    status: 400,
    body: { errors: [{ message: 'maximum query depth exceeded 4 > 3', extensions: { classification: 'ExecutionAborted' } }] },
  });
  t.deepEqual(requests, []);
  // At the limit itself the query runs.
  t.is((await run(shallow, '{ block { transactions { hash } } }')).status, 200);
  const cheap = createGraphqlService(backend, { maxComplexity: 5, maxDepth: 0 });
  t.is((await run(cheap, '{ block { number hash gasUsed gasLimit } }')).status, 200, 'complexity 5 is allowed at a limit of 5');
  t.is((await run(cheap, '{ block { number hash gasUsed gasLimit timestamp } }')).status, 400);
});

test('a fragment counts where it is spread, and @skip leaves its fields out of the count', async (t) => {
  const { backend } = backendOf(chain, logIndex);
  const service = createGraphqlService(backend, { maxComplexity: 5, maxDepth: 0 });
  const spread = 'fragment F on Block { number hash } { a: block { ...F } b: block { ...F } }';
  t.deepEqual(await run(service, spread), {
    status: 400,
    body: { errors: [{ message: 'maximum query complexity exceeded 6 > 5', extensions: { classification: 'ExecutionAborted' } }] },
  });
  const skipped = 'query Q($skip: Boolean!) { a: block { ...F } b: block @skip(if: $skip) { ...F } } fragment F on Block { number hash }';
  const reply = await service.run({ query: skipped, variables: { skip: true } }, Date.now() + 60_000);
  t.is(reply.status, 200);
  t.deepEqual(Object.keys((JSON.parse(reply.body) as { data: object }).data), ['a']);
});
