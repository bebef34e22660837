/**
 * The chain's account cache (`decodedAccountCaches`: decoded entries on a hash map) keeps, reverts,
 * commits and flushes accounts as ethereumjs' own cache does, checked side by side with it.
 */
import test from 'ava';
import { Caches } from '@ethereumjs/statemanager';
import { Account, Address, bytesToHex } from '@ethereumjs/util';
import { decodedAccountCaches } from '../../src/chain/batch-commit-state.js';

const address = (n: number) => new Address(Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? n : 0)));
const account = (balance: bigint) => new Account(0n, balance);

/** What a cache answers for addresses 1–4, its size and what it would flush, in comparable form. */
function view(caches: Caches) {
  const cache = caches.account!;
  const read = (n: number) => {
    const entry = cache.get(address(n));
    return entry?.accountRLP === undefined ? entry : bytesToHex(entry.accountRLP);
  };
  return { reads: [1, 2, 3, 4].map(read), size: cache.size() };
}

test('puts, nested checkpoints, reverts, commits, flush and clear: as the library cache', (t) => {
  const ours = decodedAccountCaches();
  const library = new Caches();
  const both = (f: (caches: Caches) => void) => [ours, library].forEach(f);

  both((c) => c.account!.put(address(1), account(10n)));
  both((c) => c.account!.checkpoint());
  both((c) => c.account!.put(address(1), account(11n)));
  both((c) => c.account!.put(address(2), account(20n)));
  t.deepEqual(view(ours), view(library));
  both((c) => c.account!.revert());
  t.deepEqual(view(ours), view(library), 'a revert restores the old account and forgets the new one');
  t.is(view(ours).reads[1], undefined);

  both((c) => c.account!.checkpoint());
  both((c) => c.account!.put(address(3), account(30n)));
  both((c) => c.account!.checkpoint());
  both((c) => c.account!.put(address(4), account(40n)));
  both((c) => c.account!.commit());
  both((c) => c.account!.commit());
  t.deepEqual(view(ours), view(library), 'commits keep what was written');
  const flushed = (c: Caches) => c.account!.flush().map(([key, entry]) => [key, entry.accountRLP === undefined ? undefined : bytesToHex(entry.accountRLP)]);
  const [ourFlush, libraryFlush] = [flushed(ours), flushed(library)];
  t.deepEqual(ourFlush, libraryFlush);
  t.is(ourFlush.length, 3, 'the accounts written since the last flush: 1, 3 and 4');
  t.is(flushed(ours).length, 0, 'a second flush has nothing left');

  both((c) => c.account!.clear());
  t.deepEqual(view(ours), view(library));
  t.is(view(ours).size, 0);
});
