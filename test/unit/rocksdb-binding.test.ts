/**
 * The copy of rocksdb's prebuilt binary that loads on Node 22/24 (src/shared/storage/rocksdb-binding.ts): its
 * own symbols (not the unique ones) bind locally and nothing else changed. That it loads and works is shown by every test
 * that opens a database; on Node 22 by the CI step that runs the end-to-end files under it.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bindSymbolsLocally, dynamicSymbols } from '../../src/shared/storage/rocksdb-binding.js';

const GNU_UNIQUE = 10;
const prebuilt = join(dirname(createRequire(import.meta.url).resolve('rocksdb/package.json')), 'prebuilds', 'linux-x64', 'node.napi.glibc.node');

test('every symbol the prebuilt binary defines but its unique ones becomes local and hidden; the rest of the file is unchanged', (t) => {
  const original = readFileSync(prebuilt);
  const before = [...dynamicSymbols(original)];
  const exported = before.filter((symbol) => symbol.defined && symbol.binding !== 0 && symbol.binding !== GNU_UNIQUE);
  t.true(before.some((symbol) => symbol.defined && symbol.binding === GNU_UNIQUE), 'it has GNU_UNIQUE symbols, which keep it loaded');
  t.true(exported.length > 1000, 'the prebuilt exports its C++ template instances');

  const copy = Buffer.from(original);
  t.is(bindSymbolsLocally(copy), exported.length);
  const after = [...dynamicSymbols(copy)];
  t.is(after.length, before.length);
  for (const [index, symbol] of after.entries()) {
    if (symbol.defined && symbol.binding !== GNU_UNIQUE) t.deepEqual([symbol.binding, symbol.visibility], [0, 2]);
    else t.deepEqual(symbol, before[index]!);
  }
  const edited = new Set(exported.flatMap((symbol) => [symbol.offset + 4, symbol.offset + 5]));
  const otherChange = copy.findIndex((byte, offset) => byte !== original[offset] && !edited.has(offset));
  t.is(otherChange, -1, 'only the binding and visibility bytes of defined symbols change');

  t.is(bindSymbolsLocally(copy), 0, 'a second pass changes nothing');
});

test('a file that is not a 64-bit ELF object is refused', (t) => {
  t.throws(() => bindSymbolsLocally(Buffer.from('#!/bin/sh\necho not an ELF object, just long enough to read\n')), { message: /not a 64-bit little-endian ELF file/ });
});
