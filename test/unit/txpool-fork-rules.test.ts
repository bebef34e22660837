// Which transaction types the pool admits follows the fork of the block after the head, which the
// chain names in its head (HeadInfo.nextHardfork): the pool thread keeps no ethereumjs Common.
import test from 'ava';
import { createEOACode7702Tx } from '@ethereumjs/tx';
import { bytesToHex, eoaCode7702SignAuthorization, hexToBytes } from '@ethereumjs/util';
import { Chain } from '../../src/chain/chain.js';
import { FORK_ORDER, loadDevNetwork, parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { jsonTextToString } from '../../src/shared/rpc/json-text.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { signedTx } from '../helpers/dev-chain.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { poolActor, poolHead } from '../helpers/pool-actor.js';

const TYPE_EIPS = [
  [1, 2930],
  [2, 1559],
  [3, 4844],
  [4, 7702],
] as const;

test('the transaction types of every fork are those ethereumjs activates at that fork', (t) => {
  for (const hardfork of ['chainstart', ...FORK_ORDER]) {
    const common = txCommonFor(1337n, hardfork);
    const expected = [0, ...TYPE_EIPS.filter(([, eip]) => common.isActivatedEIP(eip)).map(([type]) => type)];
    t.deepEqual(txRulesFor(1337n, hardfork).allowedTypes, expected, hardfork);
  }
  t.throws(() => txRulesFor(1337n, 'amsterdam'), { message: 'no transaction rules for the unknown fork amsterdam' });
});

/** The dev network with Prague and Osaka at `pragueTime` instead of genesis (Cancun before). */
function devGenesisWithPragueAt(pragueTime: number): string {
  const dev = structuredClone(loadDevNetwork().genesisJson) as { config: Record<string, unknown> };
  return JSON.stringify({ ...dev, config: { ...dev.config, pragueTime, osakaTime: pragueTime } });
}

test("the chain's head names the fork of the block after it, one block period later", async (t) => {
  const json = devGenesisWithPragueAt(10);
  const path = tempDataPath();
  t.teardown(() => removeDataPath(path));
  const chain = await Chain.open(path, await chainSpecFromGenesis(json));
  try {
    t.is(chain.spec.blockPeriodSeconds, 1n, "the dev network's blockperiodseconds");
    const genesisTime = chain.getHead().timestamp;
    t.true(genesisTime < 9n, 'the dev genesis is older than the fork');
    t.is(chain.getHead().nextHardfork, 'cancun');
    for (const [timestamp, next] of [[8n, 'cancun'], [9n, 'osaka'], [12n, 'osaka']] as const) {
      const head = chain.getHead();
      const built = await chain.buildBlock({ timestamp, coinbase: new Uint8Array(20), extraData: head.extraData, maxBuildMs: 10_000, transactions: [] });
      await chain.importBuilt(built, head.extraData);
      t.is(chain.getHead().timestamp, timestamp);
      t.is(chain.getHead().nextHardfork, next, `after the block at ${timestamp}`);
    }
  } finally {
    await chain.close();
  }
});

test("the pool admits a set-code transaction (type 4) once its head's next block is Prague, and shows it pending", async (t) => {
  const pool = poolActor(parseGenesisJson(devGenesisWithPragueAt(10)), poolHead(1n, 'cancun'));
  const [sender, delegate] = [DEV_ACCOUNTS[1], DEV_ACCOUNTS[2]];
  const authorization = eoaCode7702SignAuthorization({ chainId: '0x539', address: DEV_ACCOUNTS[0].address, nonce: '0x0' }, hexToBytes(delegate.privateKey as `0x${string}`));
  const setCode = createEOACode7702Tx(
    { chainId: 1337n, nonce: 0n, gasLimit: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 2n, to: delegate.address as `0x${string}`, authorizationList: [authorization] },
    { common: txCommonFor(1337n, 'prague') },
  ).sign(hexToBytes(sender.privateKey as `0x${string}`));
  const rpc = pool.transportHandlers(0).rpc;
  const send = async () => JSON.parse(jsonTextToString(await rpc({ method: 'eth_sendRawTransaction', params: { raw: setCode.serialize() } }))) as string;

  await t.throwsAsync(send, { message: 'Invalid transaction type' }, 'the next block is still Cancun');
  const transfer = signedTx(DEV_ACCOUNTS[0].privateKey, 0n);
  t.is(JSON.parse(jsonTextToString(await rpc({ method: 'eth_sendRawTransaction', params: { raw: transfer.serialize() } }))), bytesToHex(transfer.hash()));

  pool.setHead(poolHead(1n, 'prague'));
  t.is(await send(), bytesToHex(setCode.hash()));
  // The pending view loads ethereumjs on first use, and formats with Prague's rules.
  const view = JSON.parse(jsonTextToString(await rpc({ method: 'eth_getTransactionByHash', params: { hash: setCode.hash() } }))) as Record<string, unknown>;
  t.is(view.hash, bytesToHex(setCode.hash()));
  t.is(view.type, '0x4');
  t.is(view.blockHash, null);
  t.is(view.from, sender.address.toLowerCase());
  t.is(view.raw, bytesToHex(setCode.serialize()));
});

test('the pool loads its pending-transaction view only to show a transaction it holds', async (t) => {
  let loads = 0;
  const load = () => {
    loads++;
    return import('../../src/txpool/pending-view.js');
  };
  const pool = poolActor(parseGenesisJson(JSON.stringify(loadDevNetwork().genesisJson)), poolHead(1n), undefined, load);
  const rpc = pool.transportHandlers(0).rpc;
  const byHash = async (hash: Uint8Array) => JSON.parse(jsonTextToString(await rpc({ method: 'eth_getTransactionByHash', params: { hash } }))) as Record<string, unknown> | null;

  // Mined or unknown: the chain answers those, after the pool's null.
  t.is(await byHash(new Uint8Array(32).fill(7)), null);
  t.is(loads, 0);
  const transfer = signedTx(DEV_ACCOUNTS[0].privateKey, 0n);
  await rpc({ method: 'eth_sendRawTransaction', params: { raw: transfer.serialize() } });
  t.is((await byHash(transfer.hash()))!.hash, bytesToHex(transfer.hash()));
  t.is((await byHash(transfer.hash()))!.nonce, '0x0');
  t.is(loads, 1);
});
