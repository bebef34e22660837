// Besu's operator subcommands run as processes (bin/run.js): `rlp encode`, `public-key export` and
// `export-address`, `operator generate-blockchain-config`. Their output is parsed back and checked against
// the spec's vectors (qbft-and-p2p.md §2.4, §9.2–9.4); each error is its message and exit code.
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { runCli } from '../helpers/node-process.js';

const HELP_POINTER = '\nTo display full help:\nbasalt [COMMAND] --help\n';
const basalt = (args: string[], stdin?: string) => runCli(args, { timeoutMs: 60_000, ...(stdin === undefined ? {} : { stdin }) });

const tmp = mkdtempSync(join(tmpdir(), 'basalt-operator-'));
test.after.always(() => rmSync(tmp, { recursive: true, force: true }));
let files = 0;
/** A new file in the test folder holding `content` (a new path when content is undefined). */
function file(content?: string): string {
  const path = join(tmp, `f${files++}`);
  if (content !== undefined) writeFileSync(path, content);
  return path;
}

const hex = (bytes: Uint8Array): string => `0x${Buffer.from(bytes).toString('hex')}`;
const validatorsIn = (extraData: string): string[] => decodeExtraData(Buffer.from(extraData.slice(2), 'hex')).validators.map(hex);

// ---------------------------------------------------------------------------------------------
// rlp encode
// ---------------------------------------------------------------------------------------------

/** RLPSubCommandTest's vector (qbft-and-p2p.md §2.4): these validators, in this order, one without 0x. */
const RLP_VALIDATORS = ['be068f726a13c8d46c44be6ce9d275600e1735a4', '0x5ff6f4b66a46a2b2310a6f3a93aaddc0d9a1c193'];
const RLP_QBFT = '0xf84fa00000000000000000000000000000000000000000000000000000000000000000ea94be068f726a13c8d46c44be6ce9d275600e1735a4945ff6f4b66a46a2b2310a6f3a93aaddc0d9a1c193c080c0';

test('rlp encode --type=QBFT_EXTRA_DATA: the spec vector, from a file or standard input, to stdout or --to', async (t) => {
  const from = file(JSON.stringify(RLP_VALIDATORS));
  const printed = await basalt(['rlp', 'encode', `--from=${from}`, '--type=QBFT_EXTRA_DATA']);
  t.deepEqual([printed.code, printed.stdout, printed.stderr], [0, `${RLP_QBFT}\n`, '']);
  t.deepEqual(validatorsIn(RLP_QBFT), ['0xbe068f726a13c8d46c44be6ce9d275600e1735a4', '0x5ff6f4b66a46a2b2310a6f3a93aaddc0d9a1c193'], 'in the order given');

  // Standard input: whitespace anywhere, the type in any case.
  const piped = await basalt(['rlp', 'encode', '--type', 'qbft_extra_data'], `[\n  "${RLP_VALIDATORS[0]}",\n  "${RLP_VALIDATORS[1]}"\n]\n`);
  t.deepEqual([piped.code, piped.stdout], [0, `${RLP_QBFT}\n`]);

  const to = file();
  const written = await basalt(['rlp', 'encode', `--from=${from}`, '--type=QBFT_EXTRA_DATA', `--to=${to}`]);
  t.deepEqual([written.code, written.stdout, written.stderr], [0, '', '']);
  t.is(readFileSync(to, 'utf8'), RLP_QBFT, 'no newline in the file');

  // No validators: the contract-mode form of §2.3.
  const none = await basalt(['rlp', 'encode', '--type=QBFT_EXTRA_DATA'], '[]');
  t.is(none.stdout, '0xe5a00000000000000000000000000000000000000000000000000000000000000000c0c080c0\n');
});

test('rlp encode without --type is IBFT_EXTRA_DATA, as with Besu', async (t) => {
  const result = await basalt(['rlp', 'encode'], '["c2ab482b506de561668e07f04547232a72897daf"]');
  // Besu's IBFT 2.0 genesis extraData for one validator: a null vote and a four-byte round.
  t.is(result.stdout, '0xf83ea00000000000000000000000000000000000000000000000000000000000000000d594c2ab482b506de561668e07f04547232a72897daf808400000000c0\n');
});

test('rlp encode errors: parameter errors with Besu\'s messages, exit 2', async (t) => {
  const cases: [string[], string | undefined, string][] = [
    [['--type=RLP'], '[]', "Invalid value for option '--type': expected one of [IBFT_EXTRA_DATA, QBFT_EXTRA_DATA] (case-insensitive) but was 'RLP'"],
    [['--type=QBFT_EXTRA_DATA', '--type', 'IBFT_EXTRA_DATA'], '[]', "option '--type' (<type>) should be specified only once"],
    [[], ' \n', 'An error occurred while trying to read the JSON data.'],
    [[`--from=${join(tmp, 'absent.json')}`], undefined, 'Unable to read JSON file.'],
    [[], '{"validators":[]}', 'Unable to map the JSON data with selected type. Please check JSON input format. Expected a JSON array of validator addresses.'],
    [[], '["0x12"]', 'Unable to map the JSON data with selected type. Please check JSON input format. Entry 0 ("0x12") is not an address of 40 hex digits.'],
    [['--bogus'], '[]', "Unknown option: '--bogus'"],
    [['extra'], '[]', "Unmatched argument at index 2: 'extra'"],
  ];
  for (const [args, stdin, message] of cases) {
    const result = await basalt(['rlp', 'encode', ...args], stdin);
    t.is(result.code, 2, args.join(' '));
    t.is(result.stderr, `${message}\n${HELP_POINTER}`);
    t.is(result.stdout, '');
  }
  const invalid = await basalt(['rlp', 'encode', '--type=QBFT_EXTRA_DATA'], '["be068f726a13c8d46c44be6ce9d275600e1735a4"');
  t.is(invalid.code, 2);
  t.regex(invalid.stderr, /^Unable to load the JSON data\. Please check JSON input format\. .+\n\nTo display full help:/);

  const unwritable = await basalt(['rlp', 'encode', '--type=QBFT_EXTRA_DATA', `--to=${join(tmp, 'no-such-dir', 'out')}`], '[]');
  t.is(unwritable.code, 2);
  t.regex(unwritable.stderr, /^An error occurred while trying to write the RLP string\. ENOENT: no such file or directory/);
});

// ---------------------------------------------------------------------------------------------
// public-key export / export-address
// ---------------------------------------------------------------------------------------------

/** Besu's key vector (qbft-and-p2p.md §9.4), in a file as Besu's tests write it: no 0x, a newline. */
const VECTOR_KEY = '8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63\n';
const VECTOR_PUBLIC_KEY = '0x09b02f8a5fddd222ade4ea4528faefc399623af3f736be3c44f03e2df22fb792f3931a4d9573d333ca74343305762a753388c3422a86d98b713fc91c1ea04842';
const VECTOR_ADDRESS = '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73';

test('public-key export and export-address of --node-private-key-file: the spec vector, to stdout or --to', async (t) => {
  const key = file(VECTOR_KEY);
  const publicKey = await basalt(['public-key', 'export', `--node-private-key-file=${key}`]);
  t.deepEqual([publicKey.code, publicKey.stdout, publicKey.stderr], [0, `${VECTOR_PUBLIC_KEY}\n`, '']);
  // A node option before the subcommand, as Besu takes it.
  const address = await basalt([`--node-private-key-file=${key}`, 'public-key', 'export-address']);
  t.deepEqual([address.code, address.stdout], [0, `${VECTOR_ADDRESS}\n`]);

  const to = file();
  const written = await basalt(['public-key', 'export-address', `--node-private-key-file=${key}`, `--to=${to}`]);
  t.deepEqual([written.code, written.stdout], [0, '']);
  t.is(readFileSync(to, 'utf8'), VECTOR_ADDRESS);
  t.is(readFileSync(key, 'utf8'), VECTOR_KEY, 'the key file is only read');
});

test('public-key export on a data path without a key creates <data-path>/key (0600) and key.pub, then exports that key', async (t) => {
  const dataPath = join(tmp, 'fresh-data-path');
  const first = await basalt(['public-key', 'export', `--data-path=${dataPath}`]);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /^0x[0-9a-f]{128}\n$/);
  t.is(statSync(join(dataPath, 'key')).mode & 0o777, 0o600);
  t.regex(readFileSync(join(dataPath, 'key'), 'utf8'), /^0x[0-9a-f]{64}$/);
  t.is(readFileSync(join(dataPath, 'key.pub'), 'utf8'), first.stdout.trim());

  const again = await basalt([`--data-path=${dataPath}`, 'public-key', 'export']);
  t.is(again.stdout, first.stdout, 'the same key the second time');
  // The address is that of the key file, read as --node-private-key-file.
  const viaDataPath = await basalt(['public-key', 'export-address', `--data-path=${dataPath}`]);
  const viaFile = await basalt(['public-key', 'export-address', `--node-private-key-file=${join(dataPath, 'key')}`]);
  t.regex(viaDataPath.stdout, /^0x[0-9a-f]{40}\n$/);
  t.is(viaDataPath.stdout, viaFile.stdout);
});

test('public-key errors: a missing or malformed key file, another curve, an option it does not know (exit 2); an unwritable --to (exit 1)', async (t) => {
  const absent = join(tmp, 'absent.key');
  const missing = await basalt(['public-key', 'export', `--node-private-key-file=${absent}`]);
  t.deepEqual([missing.code, missing.stderr], [2, `Private key file doesn't exist: ${absent}\n${HELP_POINTER}`]);

  const bad = file('0x1234\n');
  const malformed = await basalt(['public-key', 'export-address', `--node-private-key-file=${bad}`]);
  t.deepEqual([malformed.code, malformed.stderr], [2, `Private key cannot be loaded from file ${bad}: expected 64 hex digits (0x optional) and nothing else\n${HELP_POINTER}`]);

  const zero = file(`0x${'00'.repeat(32)}`);
  const notAKey = await basalt(['public-key', 'export', `--node-private-key-file=${zero}`]);
  t.deepEqual([notAKey.code, notAKey.stderr], [2, `Private key cannot be loaded from file ${zero}: not a secp256k1 private key (zero, or not below the curve order)\n${HELP_POINTER}`]);

  const curve = await basalt(['public-key', 'export', `--node-private-key-file=${file(VECTOR_KEY)}`, '--ec-curve=secp256r1']);
  t.deepEqual([curve.code, curve.stderr], [2, `Invalid value for option '--ec-curve': 'secp256r1' is not supported; Basalt supports secp256k1 only\n${HELP_POINTER}`]);

  const unknown = await basalt(['public-key', 'export', '--rpc-htp-port=1']);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /^Unknown option: '--rpc-htp-port=1'\n/);

  const unwritable = await basalt(['public-key', 'export', `--node-private-key-file=${file(VECTOR_KEY)}`, `--to=${join(tmp, 'no-such-dir', 'key.pub')}`]);
  t.is(unwritable.code, 1);
  t.regex(unwritable.stderr, /^Unable to write to .*no-such-dir\/key\.pub: ENOENT/);
});

// ---------------------------------------------------------------------------------------------
// operator generate-blockchain-config
// ---------------------------------------------------------------------------------------------

/** Besu's test keys and their addresses (qbft-and-p2p.md §9.2). */
const BESU_KEYS = [
  '0x9481ee2b34196827e8c4807ae29c2675c15d3641e482ab81cc0bc3ef535755b426b9f5c474213df28a563fab0bf0830b455ee8955b3faac93075422a6abf160d',
  '0xf9dff57fc0bae7cba6577d82caf40cf6d266afc2a212775eb45c2188ab30aeed01e724daf4203649d4aa7e30717bfeeaf0b4c30b5d651bad39bcae8429759889',
];
const BESU_ADDRESSES = ['0xd5feb0fc5a54a89f97aeb34c3df15397c19f6dd2', '0xd6a9a4c886eb008ac307abdc1f38745c1dd13a88'];
const BESU_EXTRA_DATA = '0xf84fa00000000000000000000000000000000000000000000000000000000000000000ea94d5feb0fc5a54a89f97aeb34c3df15397c19f6dd294d6a9a4c886eb008ac307abdc1f38745c1dd13a88c080c0';

const GENESIS = {
  config: { chainId: 2017, berlinBlock: 0, qbft: { blockperiodseconds: 2, epochlength: 30000, requesttimeoutseconds: 4 } },
  nonce: '0x0',
  timestamp: '0x58ee40ba',
  gasLimit: '0x47b760',
  difficulty: '0x1',
  mixHash: '0x63746963616c2062797a616e74696e65206661756c7420746f6c6572616e6365',
  coinbase: '0x0000000000000000000000000000000000000000',
  alloc: { fe3b557e8fb62b89f4916b721be55ceb828dbd73: { balance: '0xad78ebc5ac6200000' } },
};

const configFile = (config: unknown): string => file(typeof config === 'string' ? config : JSON.stringify(config));
const generate = (config: unknown, ...args: string[]) => {
  const to = file();
  return { to, run: basalt(['operator', 'generate-blockchain-config', `--config-file=${configFile(config)}`, `--to=${to}`, ...args]) };
};

test('operator generate-blockchain-config with the nodes\' public keys: Besu\'s extraData vector, one folder per node, genesis as given', async (t) => {
  // A balance beyond a JavaScript number, and a key Besu would keep: both are written back as they were.
  const genesis = { ...GENESIS, alloc: { ...GENESIS.alloc, '627306090abab3a6e1400e9345bc60c78a8bef57': { balance: 'BIG' } } };
  const text = JSON.stringify({ genesis, blockchain: { nodes: { keys: BESU_KEYS } } }).replace('"BIG"', '90000000000000000000000');
  const { to, run } = generate(text);
  const result = await run;
  t.is(result.code, 0, result.stderr);
  t.is(result.stderr, '');
  t.deepEqual(result.stdout.split('\n').slice(0, 5), [
    'Importing public keys from configuration.',
    `Public key imported from configuration.(${BESU_KEYS[0]})`,
    `Public key imported from configuration.(${BESU_KEYS[1]})`,
    'Generating QBFT extra data.',
    'Writing genesis file.',
  ]);

  t.deepEqual(readdirSync(to).sort(), ['genesis.json', 'keys']);
  t.deepEqual(readdirSync(join(to, 'keys')).sort(), BESU_ADDRESSES);
  for (const [i, address] of BESU_ADDRESSES.entries()) {
    t.deepEqual(readdirSync(join(to, 'keys', address)), ['key.pub'], 'no private key for an imported public key');
    t.is(readFileSync(join(to, 'keys', address, 'key.pub'), 'utf8'), BESU_KEYS[i]);
  }

  const written = readFileSync(join(to, 'genesis.json'), 'utf8');
  // Jackson's pretty printer, as Besu writes it: `"key" : value`, two spaces, no final newline.
  t.true(written.startsWith('{\n  "config" : {\n    "chainId" : 2017,\n'), written);
  t.true(written.includes('"balance" : 90000000000000000000000\n'), 'the big number keeps its digits');
  t.false(written.endsWith('\n'));
  const parsed = JSON.parse(written) as Record<string, unknown>;
  t.is(parsed.extraData, BESU_EXTRA_DATA);
  t.deepEqual(Object.keys(parsed), [...Object.keys(genesis), 'extraData']);
  const { extraData: _extraData, ...rest } = parsed;
  t.deepEqual(rest, (JSON.parse(text) as { genesis: unknown }).genesis);
});

test('operator generate-blockchain-config generating four keys with --private-key-file-name=key: each folder is a data path of that node', async (t) => {
  const { to, run } = generate({ genesis: GENESIS, blockchain: { nodes: { generate: true, count: 4 } } }, '--private-key-file-name=key');
  const result = await run;
  t.is(result.code, 0, result.stderr);
  t.deepEqual(result.stdout.split('\n').slice(0, 7), [
    'Generating 4 nodes keys.',
    'Generating keypair for node 0.',
    'Generating keypair for node 1.',
    'Generating keypair for node 2.',
    'Generating keypair for node 3.',
    'Generating QBFT extra data.',
    'Writing genesis file.',
  ]);
  const folders = readdirSync(join(to, 'keys'));
  t.is(folders.length, 4);
  const genesis = JSON.parse(readFileSync(join(to, 'genesis.json'), 'utf8')) as { extraData: string };
  // The validators, in generation order, are exactly the four folders.
  t.deepEqual([...validatorsIn(genesis.extraData)].sort(), [...folders].sort());
  for (const folder of folders) {
    const dir = join(to, 'keys', folder);
    t.deepEqual(readdirSync(dir).sort(), ['key', 'key.pub']);
    t.regex(readFileSync(join(dir, 'key'), 'utf8'), /^0x[0-9a-f]{64}$/);
    t.is(statSync(join(dir, 'key')).mode & 0o777, 0o600);
    // The node reads the folder as its data path: its key is that of the folder's address and key.pub.
    const [address, publicKey] = await Promise.all([
      basalt(['public-key', 'export-address', `--data-path=${dir}`]),
      basalt(['public-key', 'export', `--data-path=${dir}`]),
    ]);
    t.is(address.stdout, `${folder}\n`);
    t.is(publicKey.stdout, `${readFileSync(join(dir, 'key.pub'), 'utf8')}\n`);
  }
});

test('operator generate-blockchain-config: IBFT 2.0 extraData for an ibft2 genesis, none without a BFT section, other file names', async (t) => {
  const ibft = generate({ genesis: { config: { chainId: 1, ibft2: {} } }, blockchain: { nodes: { keys: [BESU_KEYS[0]] } } });
  t.is((await ibft.run).code, 0);
  t.is(
    (JSON.parse(readFileSync(join(ibft.to, 'genesis.json'), 'utf8')) as { extraData: string }).extraData,
    '0xf83ea00000000000000000000000000000000000000000000000000000000000000000d594d5feb0fc5a54a89f97aeb34c3df15397c19f6dd2808400000000c0',
  );

  const plain = generate({ genesis: { config: { chainId: 1 }, extraData: '0x01' }, blockchain: { nodes: { generate: true, count: 1 } } }, '--genesis-file-name=g.json', '--private-key-file-name=k', '--public-key-file-name=p');
  t.is((await plain.run).code, 0);
  t.is(readFileSync(join(plain.to, 'g.json'), 'utf8'), '{\n  "config" : {\n    "chainId" : 1\n  },\n  "extraData" : "0x01"\n}');
  const [folder] = readdirSync(join(plain.to, 'keys'));
  t.deepEqual(readdirSync(join(plain.to, 'keys', folder!)).sort(), ['k', 'p']);
});

test('operator generate-blockchain-config errors: Besu\'s messages; nothing is written', async (t) => {
  const nodes = { nodes: { keys: BESU_KEYS } };
  const failures: [unknown, string[], string][] = [
    [{ genesis: GENESIS, blockchain: nodes }, ['--private-key-file-name=key.pub'], 'Output file paths must be unique.'],
    [{ genesis: { nonce: '0x0' }, blockchain: nodes }, [], 'Missing config section in config file'],
    [{ blockchain: nodes }, [], 'Missing config section in config file'],
    [{ genesis: GENESIS }, [], 'Missing blockchain.nodes section in config file: give "generate": true and a "count", or the nodes\' public "keys"'],
    [{ genesis: GENESIS, blockchain: { nodes: { keys: [7] } } }, [], 'Invalid key json of type: NUMBER'],
    [{ genesis: GENESIS, blockchain: { nodes: { keys: [`0x${'00'.repeat(64)}`] } } }, [], `0x${'00'.repeat(64)} is not a valid public key for elliptic curve secp256k1`],
    [{ genesis: GENESIS, blockchain: { nodes: { keys: [BESU_KEYS[0], BESU_KEYS[0]] } } }, [], `Public key ${BESU_KEYS[0]} is listed more than once.`],
    [{ genesis: GENESIS, blockchain: { nodes: { generate: true, count: 'four' } } }, [], 'Invalid value for blockchain.nodes.count: expected a whole number of nodes, got "four"'],
    [{ genesis: { ...GENESIS, config: { ...GENESIS.config, ecCurve: 'secp256r1' } }, blockchain: nodes }, [], 'Invalid parameter for ecCurve in genesis config: secp256r1 is not in the list of valid elliptic curves [secp256k1]'],
    [[1, 2], [], 'expected a JSON object, got ARRAY'],
    ['{"genesis": {', [], 'Invalid JSON in the config file'],
  ];
  for (const [config, args, message] of failures) {
    const { to, run } = generate(config, ...args);
    const result = await run;
    t.is(result.code, 1, message);
    t.true(result.stderr.includes(message), `${message} / ${result.stderr}`);
    t.false(existsSync(to), 'nothing written');
  }

  const missingFile = await basalt(['operator', 'generate-blockchain-config', `--config-file=${join(tmp, 'absent.json')}`, `--to=${file()}`]);
  t.is(missingFile.code, 1);
  t.regex(missingFile.stderr, /^Unable to read the config file .*absent\.json: ENOENT/);

  // The test folder is not empty.
  const full = await basalt(['operator', 'generate-blockchain-config', `--config-file=${configFile({ genesis: GENESIS, blockchain: nodes })}`, `--to=${tmp}`]);
  t.deepEqual([full.code, full.stderr], [1, 'Output directory already exists.\n']);
  t.false(existsSync(join(tmp, 'genesis.json')));

  const required = await basalt(['operator', 'generate-blockchain-config']);
  t.deepEqual([required.code, required.stderr], [2, `Missing required options: '--config-file=<FILE>', '--to=<DIRECTORY>'\n${HELP_POINTER}`]);
  const one = await basalt(['operator', 'generate-blockchain-config', `--config-file=${configFile({})}`]);
  t.deepEqual([one.code, one.stderr], [2, `Missing required option: '--to=<DIRECTORY>'\n${HELP_POINTER}`]);
});

test('every operator subcommand takes --version, as Besu\'s do', async (t) => {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const command of [['rlp', 'encode'], ['public-key', 'export'], ['public-key', 'export-address'], ['operator', 'generate-blockchain-config']]) {
    const result = await basalt([...command, '--version']);
    t.deepEqual([result.code, result.stdout, result.stderr], [0, `basalt/v${version}\n`, ''], command.join(' '));
  }
});
