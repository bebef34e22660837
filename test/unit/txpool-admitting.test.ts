// The pool's answer to a block selection says how many transactions are still between arrival and
// verdict: a block being built after its timer waits for them (block-prebuilder.ts, `catchUp`).
import test from 'ava';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { devNetwork, signedTx } from '../helpers/dev-chain.js';
import { inlineDecode, poolActor, poolHead } from '../helpers/pool-actor.js';

const selection = { maxCount: 100, gasLimit: 30_000_000n, baseFee: 7n };

test('a block selection counts the transactions still being decoded, and stops counting each once it is decided', async (t) => {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const decode = inlineDecode();
  const pool = poolActor(parseGenesisJson(JSON.stringify(devNetwork.genesisJson)), poolHead(0n), async (raw, rules) => {
    await gate;
    return decode(raw, rules);
  });
  t.is((await pool.consensus.select(selection)).admitting, 0);

  const txs = [0n, 1n].map((nonce) => signedTx(DEV_ACCOUNTS[0].privateKey, nonce));
  const garbage = Uint8Array.of(0x02, 0xc1, 0x80);
  const raws = [...txs.map((tx) => tx.serialize()), garbage];
  const arriving = pool.p2p.peerTransactions({ raws, hashes: [...txs.map((tx) => tx.hash()), new Uint8Array(32).fill(9)] });
  const during = await pool.consensus.select(selection);
  t.is(during.admitting, 3, 'two transactions and one undecodable payload are being decoded');
  t.is(during.transactions.length, 0, 'none selectable yet');

  open();
  t.deepEqual(await arriving, { added: 2 });
  const after = await pool.consensus.select(selection);
  t.is(after.admitting, 0, 'the refused one counts no more either');
  t.is(after.transactions.length, 2);
});
