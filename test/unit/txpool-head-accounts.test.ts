// A new head carries its senders' accounts (chain.ts, `senderAccounts`): the pool admits their next
// transactions on those, without asking the chain, and still asks for senders the head did not carry.
import test from 'ava';
import type { AccountSnapshot, NewHeadEvent } from '../../src/shared/actors/messages.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { Logger } from '../../src/shared/util/log.js';
import { TxPoolActor } from '../../src/txpool/txpool-actor.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { devNetwork, signedTx } from '../helpers/dev-chain.js';
import { inlineDecode, poolHead } from '../helpers/pool-actor.js';

test('senders a new head carries are admitted on the accounts it carried; others are read from the chain', async (t) => {
  const asked: string[][] = [];
  let head = poolHead(0n);
  const pool = new TxPoolActor({
    genesis: parseGenesisJson(JSON.stringify(devNetwork.genesisJson)),
    pool: {},
    decode: inlineDecode(),
    accounts: async (addresses) => {
      asked.push(addresses.map((address) => Buffer.from(address).toString('hex')));
      return { head, accounts: addresses.map(() => ({ nonce: 0n, balance: 10n ** 20n, hasCode: false })) };
    },
    log: new Logger('TxPool'),
  });
  pool.setHead(head);

  head = poolHead(1n);
  const carried: AccountSnapshot = { nonce: 1n, balance: 10n ** 20n, hasCode: false };
  const event: NewHeadEvent = {
    head,
    removedBlocks: [],
    addedBlocks: [head.hash],
    includedTxHashes: [],
    senderNonces: [[DEV_ACCOUNTS[0].address, 1n]],
    // Checksummed, as an address may come: the pool's keys are lower case.
    senderAccounts: [[DEV_ACCOUNTS[0].address.toUpperCase().replace('0X', '0x'), carried]],
    removedTransactions: [],
  };
  pool.onNewHead(event);

  const submit = (key: string, nonce: bigint) => {
    const tx = signedTx(key, nonce);
    return pool.p2p.peerTransactions({ raws: [tx.serialize()], hashes: [tx.hash()] });
  };
  t.deepEqual(await submit(DEV_ACCOUNTS[0].privateKey, 0n), { added: 0 }, 'nonce 0 is below the carried account nonce');
  t.deepEqual(await submit(DEV_ACCOUNTS[0].privateKey, 1n), { added: 1 });
  t.deepEqual(asked, [], 'no account read for the carried sender');

  t.deepEqual(await submit(DEV_ACCOUNTS[1].privateKey, 0n), { added: 1 });
  t.deepEqual(asked, [[DEV_ACCOUNTS[1].address.slice(2).toLowerCase()]], 'one read for a sender the head did not carry');

  // The next head carries nothing: the carried account was for head 1 only.
  head = poolHead(2n);
  pool.onNewHead({ ...event, head, addedBlocks: [head.hash], senderNonces: [], senderAccounts: undefined });
  t.deepEqual(await submit(DEV_ACCOUNTS[0].privateKey, 2n), { added: 1 });
  t.is(asked.length, 2, 'read again at head 2');
});
