/**
 * A node's threads carry the names the supervisor knows them by (src/shared/util/thread-name.ts), which is
 * what `top -H` and `ps -L` show: every actor, the state reader and the transaction decoding thread
 * (which start only once a call or a transaction needs them), the login thread at the first /login;
 * Node's own threads stay `node`. Read from /proc, so Linux only.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Wallet } from 'ethers';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { EXAMPLE_CREDENTIALS } from '../helpers/jwt.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import { readThreads } from '../../bench/lib/proc.js';
import { threadsBesideChain } from '../../src/shared/util/task-pool.js';

/** The names of the threads of process `pid`, with how many threads bear each. */
function threadNames(pid: number): Map<string, number> {
  const names = new Map<string, number>();
  for (const { name } of readThreads(pid)) names.set(name, (names.get(name) ?? 0) + 1);
  return names;
}

(process.platform === 'linux' ? test : test.skip)('threads are named after their actors, the reader and the decoding threads too', async (t) => {
  const node = await startNode({ p2p: true, args: ['--rpc-http-workers=2'] });
  t.teardown(async () => {
    await node.kill();
    removeDataPath(node.dataPath);
  });
  const pid = node.process.pid!;
  const atStart = threadNames(pid);
  for (const name of ['chain', 'consensus', 'p2p', 'txpool', 'logindex', 'transport-0', 'transport-1']) t.is(atStart.get(name), 1, name);
  t.false(atStart.has('reader-0'), 'the reader starts at the first call that reads state');

  // A call that reads state starts the reader; a transaction starts a decoding thread.
  t.is(await node.rpc('eth_call', [{ to: DEV_ACCOUNTS[1].address, data: '0x' }, 'latest']), '0x');
  const wallet = new Wallet(DEV_ACCOUNTS[1].privateKey);
  const raw = await wallet.signTransaction({ chainId: 1337, nonce: 0, to: DEV_ACCOUNTS[2].address, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, type: 2 });
  const hash = await node.rpc<string>('eth_sendRawTransaction', [raw]);
  t.regex(hash, /^0x[0-9a-f]{64}$/);
  await waitFor('the reader and a decoding thread', async () => threadNames(pid), (now) => now.has('reader-0') && now.has('tx-decode'));
  // The decode threads start together; by the time the transaction is in a block all have named themselves.
  await waitFor('the receipt', () => node.rpc('eth_getTransactionReceipt', [hash]), (receipt) => receipt !== null);
  const names = threadNames(pid);
  t.is(names.get('reader-0'), 1);
  t.is(names.get('tx-decode'), threadsBesideChain(availableParallelism()), 'one decode thread per core but the chain\'s');
  // Node's own threads (V8's platform workers, libuv's pool) keep the process's name.
  t.true((names.get('node') ?? 0) >= 2);
});

(process.platform === 'linux' ? test : test.skip)('the login thread is named at the first /login', async (t) => {
  const dir = tempDataPath();
  const credentialsFile = join(dir, 'credentials.toml');
  writeFileSync(credentialsFile, EXAMPLE_CREDENTIALS);
  const node = await startNode({ args: ['--rpc-http-authentication-enabled', `--rpc-http-authentication-credentials-file=${credentialsFile}`] });
  t.teardown(async () => {
    await node.kill();
    removeDataPath(node.dataPath);
    removeDataPath(dir);
  });
  const pid = node.process.pid!;
  t.false(threadNames(pid).has('login'), 'no login thread before a login');
  const answer = await fetch(`${node.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'user', password: 'pegasys' }) });
  t.is(answer.status, 200, await answer.text());
  const names = await waitFor('the login thread', async () => threadNames(pid), (now) => now.has('login'));
  t.is(names.get('login'), 1);
  // bcrypt takes the CPU the JSON-RPC threads leave idle; every other thread keeps the normal priority.
  for (const { name, nice } of readThreads(pid)) t.is(nice > 0, name === 'login', `${name} niceness ${nice}`);
});
