/**
 * Folder = thread: what each thread loads follows from its entry point's imports. This walks the
 * value imports (type-only imports load nothing) from every worker entry and from the CLI entry, and
 * checks that no thread loads another thread's folder or a heavy library it has no use for — an HTTP
 * worker loading the EVM or devp2p, say, costs memory and start-up time in every transport thread.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from '../helpers/node-process.js';

const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*'([^']+)'\s*\)/g;

/**
 * Source files (relative to the repository) and packages that `entry` loads, directly or not; with
 * `atStart`, only through static imports (what a thread loads before it serves anything).
 */
function reachable(entry: string, atStart = false): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const pattern of atStart ? [IMPORT] : [IMPORT, DYNAMIC_IMPORT]) {
      for (const match of text.matchAll(pattern)) {
        const specifier = match[1]!;
        if (!specifier.startsWith('.')) {
          packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
          continue;
        }
        const target = resolve(dirname(join(REPO_ROOT, file)), specifier).replace(/\.js$/, '.ts');
        if (existsSync(target)) pending.push(relative(REPO_ROOT, target));
      }
    }
  }
  return { files, packages };
}

const THREAD_FOLDERS = ['src/chain/', 'src/txpool/', 'src/consensus/', 'src/p2p/', 'src/logindex/', 'src/transport/', 'src/main/', 'src/tasks/', 'src/reader/'];

/** Each entry, the folders of its own thread (besides src/shared/), and packages it must not load. */
const ENTRIES: { entry: string; own: string[]; forbiddenPackages: string[] }[] = [
  // bcrypt never runs on a transport thread: logins go to the login pool (workers/tasks/credentials-login.task.ts).
  { entry: 'workers/transport.worker.ts', own: ['src/transport/'], forbiddenPackages: ['@ethereumjs/devp2p', '@ethereumjs/vm', '@ethereumjs/evm', 'rocksdb', 'bcryptjs'] },
  { entry: 'workers/txpool.worker.ts', own: ['src/txpool/'], forbiddenPackages: ['@ethereumjs/devp2p', '@ethereumjs/vm', '@ethereumjs/evm', 'rocksdb'] },
  { entry: 'workers/consensus.worker.ts', own: ['src/consensus/'], forbiddenPackages: ['@ethereumjs/devp2p', '@ethereumjs/vm', '@ethereumjs/evm', 'rocksdb'] },
  { entry: 'workers/p2p.worker.ts', own: ['src/p2p/'], forbiddenPackages: ['@ethereumjs/vm', '@ethereumjs/evm', 'rocksdb'] },
  { entry: 'workers/logindex.worker.ts', own: ['src/logindex/'], forbiddenPackages: ['@ethereumjs/devp2p', '@ethereumjs/vm', '@ethereumjs/evm', 'hyper-express'] },
  { entry: 'workers/chain.worker.ts', own: ['src/chain/'], forbiddenPackages: ['@ethereumjs/devp2p', 'hyper-express'] },
  // A state reader reads state through the chain: it never opens RocksDB.
  { entry: 'workers/reader.worker.ts', own: ['src/reader/'], forbiddenPackages: ['@ethereumjs/devp2p', 'hyper-express', 'rocksdb'] },
  { entry: 'workers/tasks/transaction-decode.task.ts', own: ['src/tasks/'], forbiddenPackages: ['@ethereumjs/devp2p', '@ethereumjs/vm', 'rocksdb'] },
  { entry: 'workers/tasks/credentials-login.task.ts', own: ['src/tasks/'], forbiddenPackages: ['@ethereumjs/devp2p', '@ethereumjs/vm', '@ethereumjs/evm', 'rocksdb', 'hyper-express'] },
];

for (const { entry, own, forbiddenPackages: forbidden } of ENTRIES) {
  // Metrics are served from the main thread; a worker keeps plain counters and never loads the client library.
  const forbiddenPackages = [...forbidden, 'prom-client'];
  test(`${entry} loads only its own thread's folders, src/shared/ and allowed packages`, (t) => {
    const { files, packages } = reachable(entry);
    const foreign = [...files].filter((file) => THREAD_FOLDERS.some((folder) => file.startsWith(folder)) && !own.some((folder) => file.startsWith(folder)));
    t.deepEqual(foreign, [], `${entry} loads files of another thread's folder`);
    t.deepEqual(
      forbiddenPackages.filter((name) => packages.has(name)),
      [],
      `${entry} loads packages it should not`,
    );
  });
}

/**
 * What threads load at start, before anything asks them for it: every thread costs its modules in
 * RSS (bench/node-memory.ts). GraphQL and authentication load on a transport thread that serves them;
 * the log index and the transports format logs and compare bytes without @ethereumjs/* (whose util
 * alone costs a thread ~7 MB), consensus and the pool do their work without it (~12 MB each); nor does any of them load
 * @noble/secp256k1 (node ids are derived in node-id.ts, on the p2p and main threads); keccak comes from hash-wasm's keccak-only build.
 */
const NOT_AT_START: { entry: string; packages: string[] }[] = [
  { entry: 'workers/transport.worker.ts', packages: ['graphql', 'jose', 'piscina', '@ethereumjs/util', '@ethereumjs/tx', '@ethereumjs/common', '@noble/secp256k1'] },
  { entry: 'workers/logindex.worker.ts', packages: ['@ethereumjs/util', '@ethereumjs/tx', '@ethereumjs/common', '@noble/secp256k1'] },
  // Consensus works on RLP values (src/shared/qbft/block.ts); the pool formats pending transactions with ethereumjs only when asked (src/txpool/pending-view.ts).
  { entry: 'workers/consensus.worker.ts', packages: ['@ethereumjs/util', '@ethereumjs/tx', '@ethereumjs/common', '@ethereumjs/block', 'hash-wasm'] },
  { entry: 'workers/txpool.worker.ts', packages: ['@ethereumjs/util', '@ethereumjs/tx', '@ethereumjs/common', '@ethereumjs/block', '@ethereumjs/statemanager', '@noble/secp256k1'] },
  { entry: 'src/main/supervisor/node.ts', packages: ['prom-client'] },
];

for (const { entry, packages: notAtStart } of NOT_AT_START) {
  test(`${entry} does not load ${notAtStart.join(', ')} at start`, (t) => {
    const { packages } = reachable(entry, true);
    t.deepEqual(notAtStart.filter((name) => packages.has(name)), [], `${entry} loads at start packages it may load later`);
  });
}

test("keccak is hash-wasm's keccak-only build, not the index that bundles every algorithm", (t) => {
  const text = readFileSync(join(REPO_ROOT, 'src/shared/ethereum/keccak.ts'), 'utf8');
  t.deepEqual([...text.matchAll(IMPORT)].map((m) => m[1]).filter((s) => s!.startsWith('hash-wasm')), ['hash-wasm/dist/keccak.umd.min.js']);
});

test('src/shared/ loads no thread folder', (t) => {
  const shared = [...reachable('workers/transport.worker.ts').files, ...reachable('workers/chain.worker.ts').files, ...reachable('workers/reader.worker.ts').files].filter((f) => f.startsWith('src/shared/'));
  for (const file of shared) {
    const foreign = [...reachable(file).files].filter((f) => THREAD_FOLDERS.some((folder) => f.startsWith(folder)));
    t.deepEqual(foreign, [], `${file} reaches into a thread folder`);
  }
});
