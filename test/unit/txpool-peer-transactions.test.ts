// Peers' transactions in the pool actor: with several peers the same transaction arrives more than
// once, and peers go on forwarding transactions a block has just included. Neither is decoded (sender
// recovery, a decode thread's work) again: the pool knows them by the hash p2p computed.
import test from 'ava';
import type { NewHeadEvent } from '../../src/shared/actors/messages.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import type { TxPoolActor } from '../../src/txpool/txpool-actor.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { devNetwork, signedTx } from '../helpers/dev-chain.js';
import { inlineDecode, poolActor, poolHead } from '../helpers/pool-actor.js';

/** A pool actor that records what it decodes; each decode waits for `gate` (open by default). */
function poolCountingDecodes(gate: Promise<void> = Promise.resolve()): { pool: TxPoolActor; decoded: Uint8Array[] } {
  const decoded: Uint8Array[] = [];
  const decode = inlineDecode();
  const pool = poolActor(parseGenesisJson(JSON.stringify(devNetwork.genesisJson)), poolHead(0n), async (raw, rules) => {
    decoded.push(raw);
    await gate;
    return decode(raw, rules);
  });
  return { pool, decoded };
}

test('a peer transaction the pool holds is not decoded again', async (t) => {
  const { pool, decoded } = poolCountingDecodes();
  const tx = signedTx(DEV_ACCOUNTS[0].privateKey, 0n);
  const from = (raws: Uint8Array[]) => pool.p2p.peerTransactions({ raws, hashes: raws.map(() => tx.hash()) });
  t.deepEqual(await from([tx.serialize()]), { added: 1 });
  t.is(decoded.length, 1);
  t.deepEqual(await from([tx.serialize()]), { added: 0 }, 'the copy from a second peer');
  t.is(decoded.length, 1, 'known by its hash, not decoded');
  t.deepEqual(await pool.p2p.unknownTransactions({ hashes: [tx.hash()] }), []);
});

test('a peer transaction a recent block included is not decoded; others still are', async (t) => {
  const { pool, decoded } = poolCountingDecodes();
  const included = signedTx(DEV_ACCOUNTS[0].privateKey, 0n);
  const next = signedTx(DEV_ACCOUNTS[0].privateKey, 1n);
  const event: NewHeadEvent = {
    head: poolHead(1n),
    removedBlocks: [],
    addedBlocks: [poolHead(1n).hash],
    includedTxHashes: [included.hash()],
    senderNonces: [[DEV_ACCOUNTS[0].address, 1n]],
    removedTransactions: [],
  };
  pool.onNewHead(event);
  t.deepEqual(await pool.p2p.peerTransactions({ raws: [included.serialize()], hashes: [included.hash()] }), { added: 0 });
  t.deepEqual(decoded, [], 'the late copy of an included transaction');
  t.deepEqual(await pool.p2p.peerTransactions({ raws: [next.serialize()], hashes: [next.hash()] }), { added: 1 });
  t.deepEqual(decoded, [next.serialize()]);
});

test('a transaction being decoded is known: a second peer\'s copy is not decoded, nor fetched after an announcement', async (t) => {
  let open: () => void = () => undefined;
  const { pool, decoded } = poolCountingDecodes(new Promise((resolve) => (open = resolve)));
  const tx = signedTx(DEV_ACCOUNTS[0].privateKey, 0n);
  const first = pool.p2p.peerTransactions({ raws: [tx.serialize()], hashes: [tx.hash()] });
  const second = pool.p2p.peerTransactions({ raws: [tx.serialize()], hashes: [tx.hash()] });
  t.deepEqual(await pool.p2p.unknownTransactions({ hashes: [tx.hash()] }), [], 'announced by a third peer meanwhile');
  open();
  t.deepEqual(await Promise.all([first, second]), [{ added: 1 }, { added: 0 }]);
  t.is(decoded.length, 1);
});
