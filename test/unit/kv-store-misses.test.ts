/**
 * Remembered misses (KvStore.rememberMisses): a key found absent answers absent without RocksDB until
 * the next write, and never hides a value a write brought, even one that lands while the miss is read.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvStore } from '../../src/shared/storage/kv-store.js';

const PREFIX = 0x74;
const key = (n: number) => new Uint8Array([PREFIX, n]);

async function withStore(run: (kv: KvStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'basalt-kv-misses-'));
  const kv = await KvStore.open(dir);
  try {
    await run(kv);
  } finally {
    await kv.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a remembered miss gives way to the value the next write brings', (t) =>
  withStore(async (kv) => {
    kv.rememberMisses(PREFIX);
    t.is(await kv.get(key(1)), undefined);
    t.is(await kv.get(key(1)), undefined, 'asked again: still absent');
    await kv.write([{ type: 'put', key: key(1), value: new Uint8Array([7]) }]);
    t.deepEqual(await kv.get(key(1)), new Uint8Array([7]));
    await kv.write([{ type: 'del', key: key(1) }]);
    t.is(await kv.get(key(1)), undefined, 'deleted: absent again');
  }));

test('a miss read while a write runs is not remembered', (t) =>
  withStore(async (kv) => {
    kv.rememberMisses(PREFIX);
    // Many reads of the missing key, a write of it in their midst: whatever each read answered, the
    // reads after the write has resolved find the value.
    const reads = Array.from({ length: 50 }, () => kv.get(key(2)));
    const write = kv.write([{ type: 'put', key: key(2), value: new Uint8Array([9]) }]);
    const more = Array.from({ length: 50 }, () => kv.get(key(2)));
    await Promise.all([...reads, write, ...more]);
    t.deepEqual(await kv.get(key(2)), new Uint8Array([9]));
  }));

test('keys of other prefixes are read as before', (t) =>
  withStore(async (kv) => {
    kv.rememberMisses(PREFIX);
    const other = new Uint8Array([0x62, 1]);
    t.is(await kv.get(other), undefined);
    await kv.write([{ type: 'put', key: other, value: new Uint8Array([1]) }]);
    t.deepEqual(await kv.get(other), new Uint8Array([1]));
  }));
