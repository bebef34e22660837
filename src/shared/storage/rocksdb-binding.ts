import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Loads the `rocksdb` package so that its prebuilt linux-x64 binary works on every Node from 20 on.
 *
 * That binary (rocksdb 5.2.1, built on CentOS 7 with the old `std::string` ABI) exports every C++
 * template it instantiated, `std::regex`'s among them. Node 22 and 24 export the same templates, built
 * with the new ABI, and the executable comes first in symbol lookup: RocksDB's static initialisers
 * compile a `std::regex` with Node's scanner, which lays out its string differently, and abort with
 * `std::bad_alloc`. A copy of the binary whose own symbols all bind locally (what linking with
 * hidden visibility would have given) loads on Node 20, 22 and 24 alike. It is written once, into the
 * folder node-gyp-build looks in before `prebuilds/`, and the package then loads it as its own.
 */
export async function loadRocksdb(): Promise<RocksFactory> {
  prepareLocalBindingCopy();
  const rocksdb: unknown = (await import('rocksdb')).default;
  return rocksdb as RocksFactory;
}

/** rocksdb is CommonJS whose typings claim a default export; the factory is the module itself. */
export type RocksFactory = (location: string) => RocksHandle;
export interface RocksHandle {
  open(options: { createIfMissing: boolean }, cb: (err: Error | undefined) => void): void;
  close(cb: (err: Error | undefined) => void): void;
  get(key: Uint8Array, options: { asBuffer: true; fillCache?: boolean }, cb: (err: Error | undefined, value: Buffer) => void): void;
  batch(ops: RocksOp[], options: { sync?: boolean }, cb: (err: Error | undefined) => void): void;
  iterator(options: { gte: Buffer; lt: Buffer; keys: true; values: false; keyAsBuffer: true }): RocksIterator;
}
export interface RocksIterator {
  next(cb: (err: Error | undefined, key?: Buffer) => void): void;
  end(cb: (err: Error | undefined) => void): void;
}
export type RocksOp = { type: 'put'; key: Uint8Array; value: Uint8Array } | { type: 'del'; key: Uint8Array };

/** The name of the copy in `build/Release/`; any other `.node` there is a from-source build, left in charge. */
export const LOCAL_BINDING_NAME = 'rocksdb-prebuilt-local-symbols.node';

function prepareLocalBindingCopy(): void {
  // node-gyp-build picks `node.napi.musl.node` on Alpine and has no other Linux prebuild to offer.
  if (process.platform !== 'linux' || process.arch !== 'x64' || existsSync('/etc/alpine-release')) return;
  const packageDir = dirname(createRequire(import.meta.url).resolve('rocksdb/package.json'));
  const prebuilt = join(packageDir, 'prebuilds', 'linux-x64', 'node.napi.glibc.node');
  const buildDir = join(packageDir, 'build', 'Release');
  if (!existsSync(prebuilt)) return;
  if (existsSync(buildDir) && readdirSync(buildDir).some((name) => name.endsWith('.node'))) return;
  const elf = readFileSync(prebuilt);
  bindSymbolsLocally(elf);
  // Written aside and renamed: two nodes starting at once must not load a half-written file.
  const partial = join(buildDir, `.${LOCAL_BINDING_NAME}.${process.pid}.${Date.now()}`);
  try {
    mkdirSync(buildDir, { recursive: true });
    writeFileSync(partial, elf, { mode: 0o755 });
    renameSync(partial, join(buildDir, LOCAL_BINDING_NAME));
  } catch (error) {
    throw new Error(
      `Cannot write ${join(buildDir, LOCAL_BINDING_NAME)}, the copy of RocksDB's prebuilt binary that loads on this Node ` +
        `(${(error as Error).message}): run Basalt once as the user who installed it, or make node_modules/rocksdb writable`,
    );
  }
}

const SHT_DYNSYM = 11;
const SHN_UNDEF = 0;
const STB_LOCAL = 0;
const STB_GNU_UNIQUE = 10;
const STV_HIDDEN = 2;
const ELF_SYMBOL_SIZE = 24;

/** One entry of an ELF file's dynamic symbol table, by where it lies in the file. */
export interface DynamicSymbol {
  offset: number;
  defined: boolean;
  binding: number;
  visibility: number;
}

/** The dynamic symbols of a 64-bit little-endian ELF file, the null entry left out. */
export function* dynamicSymbols(elf: Buffer): Generator<DynamicSymbol> {
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1) throw new Error('not a 64-bit little-endian ELF file');
  const sectionTable = Number(elf.readBigUInt64LE(0x28));
  const sectionEntrySize = elf.readUInt16LE(0x3a);
  const sectionCount = elf.readUInt16LE(0x3c);
  for (let index = 0; index < sectionCount; index++) {
    const section = sectionTable + index * sectionEntrySize;
    if (elf.readUInt32LE(section + 4) !== SHT_DYNSYM) continue;
    const start = Number(elf.readBigUInt64LE(section + 0x18));
    const end = start + Number(elf.readBigUInt64LE(section + 0x20));
    for (let offset = start + ELF_SYMBOL_SIZE; offset < end; offset += ELF_SYMBOL_SIZE) {
      yield { offset, defined: elf.readUInt16LE(offset + 6) !== SHN_UNDEF, binding: elf[offset + 4]! >> 4, visibility: elf[offset + 5]! & 3 };
    }
  }
}

/**
 * Makes every symbol an ELF shared object defines bind to its own definition: binding LOCAL (eager
 * relocations then skip the lookup) and visibility HIDDEN (lazy PLT resolution then does too). Symbols
 * it only uses stay as they are, and so do its GNU_UNIQUE ones (function-local statics of inline
 * code): glibc never unloads an object whose unique symbols it bound, and this one must stay loaded,
 * since the threads RocksDB ran on call its thread-local destructors when they exit, after a worker
 * thread that loaded it has ended. Edits `elf` in place; returns how many symbols it changed (0 the
 * second time).
 */
export function bindSymbolsLocally(elf: Buffer): number {
  let changed = 0;
  for (const symbol of dynamicSymbols(elf)) {
    if (!symbol.defined || symbol.binding === STB_GNU_UNIQUE || (symbol.binding === STB_LOCAL && symbol.visibility === STV_HIDDEN)) continue;
    elf[symbol.offset + 4] = (STB_LOCAL << 4) | (elf[symbol.offset + 4]! & 0xf);
    elf[symbol.offset + 5] = (elf[symbol.offset + 5]! & ~3) | STV_HIDDEN;
    changed++;
  }
  return changed;
}
