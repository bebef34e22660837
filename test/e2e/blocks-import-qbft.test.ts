/**
 * `blocks import` of a QBFT chain with the real CLI: blocks a real dev node produced (with a few
 * transactions), fetched with debug_getRawBlock, import into a fresh data path to the node's head;
 * every block's QBFT header rules and commit seals are checked, so a block whose seal was altered or
 * that a non-validator sealed stops the import at that block, exit 1, the database at the block before.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RLP } from '@ethereumjs/rlp';
import { createFeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { ImportFailure, importBlocks } from '../../src/chain/block-importer.js';
import { splitBlocks } from '../../src/chain/block-file.js';
import { qbftSealedBlockCheck } from '../../src/chain/block-validation-qbft.js';
import { Chain } from '../../src/chain/chain.js';
import { databasePath } from '../../src/shared/util/data-path.js';
import { loadDevNetwork, parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { chainSpecFromGenesis } from '../../src/shared/execution/network-spec.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { HeaderField, QbftBlock } from '../../src/shared/qbft/block.js';
import { decodeExtraData, encodeExtraData, genesisExtraData } from '../../src/shared/qbft/extra-data.js';
import type { BftExtraData, BftVote } from '../../src/shared/qbft/extra-data.js';
import { addressOf, compareAddresses, signCommitSeal } from '../../src/shared/qbft/seal.js';
import { encodeAddressArray } from '../harness/qbft-simulation/fake-chain.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { storeAndLogDeployCode } from '../helpers/contracts.js';
import { removeDataPath, runCli, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

/** Blocks the node must have produced (the first transactions land in the first few). */
const MIN_HEIGHT = 6;

const workDir = tempDataPath();
const paths: string[] = [workDir];
/** Encoded blocks 0..head of the dev node, and its head. */
const blocks: Uint8Array[] = [];
let head: { number: number; hash: string };

function signedTx(key: string, data?: string): string {
  const tx = createFeeMarket1559Tx(
    {
      chainId: 1337n,
      nonce: 0n,
      gasLimit: data ? 300_000n : 21_000n,
      maxFeePerGas: 10n ** 11n,
      maxPriorityFeePerGas: 10n ** 9n,
      to: data ? undefined : '0x00000000000000000000000000000000000c0ffe',
      value: data ? 0n : 7n,
      data: data ? hexToBytes(data as `0x${string}`) : undefined,
    },
    { common: txCommonFor(1337n, 'cancun') },
  ).sign(hexToBytes(key as `0x${string}`));
  return bytesToHex(tx.serialize());
}

test.before(async () => {
  let node: NodeProcess | undefined;
  try {
    node = await startNode({ dataPath: join(workDir, 'node'), args: ['--rpc-http-api=ETH,NET,WEB3,DEBUG'] });
    const running = node;
    const hashes = [
      await running.rpc<string>('eth_sendRawTransaction', [signedTx(DEV_ACCOUNTS[0].privateKey)]),
      await running.rpc<string>('eth_sendRawTransaction', [signedTx(DEV_ACCOUNTS[1].privateKey, storeAndLogDeployCode())]),
    ];
    for (const hash of hashes) {
      await waitFor(`receipt of ${hash}`, () => running.rpc<{ status: string } | null>('eth_getTransactionReceipt', [hash]), (receipt) => receipt !== null, 20_000);
    }
    const number = await waitFor(`block ${MIN_HEIGHT}`, async () => Number(await running.rpc<string>('eth_blockNumber')), (n) => n >= MIN_HEIGHT, 20_000);
    for (let n = 0; n <= number; n++) {
      blocks.push(hexToBytes(await running.rpc<`0x${string}`>('debug_getRawBlock', [`0x${n.toString(16)}`])));
    }
    head = { number, hash: (await running.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])).hash };
  } finally {
    await node?.stop();
  }
});

test.after.always(() => paths.forEach(removeDataPath));

function freshDataPath(): string {
  const path = tempDataPath();
  paths.push(path);
  return path;
}

function writeBlockFile(name: string, encoded: Uint8Array[]): string {
  const file = join(workDir, name);
  writeFileSync(file, Buffer.concat(encoded.map((b) => Buffer.from(b))));
  return file;
}

function importDev(dataPath: string, file: string) {
  return runCli(['--network=dev', `--data-path=${dataPath}`, 'blocks', 'import', `--from=${file}`]);
}

async function storedHead(dataPath: string): Promise<{ number: bigint; hash: string }> {
  const chain = await Chain.open(databasePath(dataPath), await chainSpecFromGenesis(JSON.stringify(loadDevNetwork().genesisJson)));
  try {
    return { number: chain.getHead().number, hash: bytesToHex(chain.getHead().hash) };
  } finally {
    await chain.close();
  }
}

/** `encoded` with its extraData commit seals replaced by `reseal(seals, block)`. */
function withSeals(encoded: Uint8Array, reseal: (seals: Uint8Array[], block: QbftBlock) => Uint8Array[]): Uint8Array {
  const block = QbftBlock.fromRlp(encoded);
  const [header, ...body] = RLP.decode(encoded) as unknown as [Uint8Array[], ...Uint8Array[]];
  const extra = decodeExtraData(header[HeaderField.extraData]!);
  const changed = [...header];
  changed[HeaderField.extraData] = encodeExtraData({ ...extra, seals: reseal(extra.seals, block) });
  return RLP.encode([changed, ...body]);
}

test.serial('the dev node\'s blocks import with every commit seal checked, to the node\'s head', async (t) => {
  t.true(blocks.slice(1).some((b) => QbftBlock.fromRlp(b).transactionCount > 0), 'the chain holds transactions');
  const dataPath = freshDataPath();
  const run = await importDev(dataPath, writeBlockFile('good.blocks', blocks));
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, new RegExp(`${head.number} blocks imported, 1 skipped, 2 transactions`));
  t.regex(run.stdout, new RegExp(`Head #${head.number} ${head.hash}`));
  t.deepEqual(await storedHead(dataPath), { number: BigInt(head.number), hash: head.hash });
});

test.serial('a block whose commit seal was altered stops the import there; the database keeps the block before', async (t) => {
  const dataPath = freshDataPath();
  const altered = withSeals(blocks[3]!, (seals) =>
    seals.map((seal, i) => {
      if (i > 0) return seal;
      const flipped = Uint8Array.from(seal);
      flipped[10] = flipped[10]! ^ 0x01;
      return flipped;
    }),
  );
  const hash = bytesToHex(QbftBlock.fromRlp(altered).hash());
  const run = await importDev(dataPath, writeBlockFile('altered-seal.blocks', [...blocks.slice(0, 3), altered, ...blocks.slice(4)]));
  t.is(run.code, 1, run.stdout);
  t.regex(run.stderr, new RegExp(`Block #3 \\(${hash}\\) could not be imported: invalid QBFT header: a commit seal (is not from a validator|does not recover)`));
  t.regex(run.stderr, /database keeps the chain up to block #2 /);
  t.is((await storedHead(dataPath)).number, 2n);
});

test.serial('a block sealed by a key that is not a validator\'s, or with no seal at all, is refused', async (t) => {
  const outsider = randomBytes(32);
  const sealedByOutsider = withSeals(blocks[4]!, (_seals, block) => [signCommitSeal(block.digest(), outsider)]);
  const dataPath = freshDataPath();
  const run = await importDev(dataPath, writeBlockFile('outsider.blocks', [...blocks.slice(1, 4), sealedByOutsider]));
  t.is(run.code, 1, run.stdout);
  t.regex(run.stderr, /Block #4 \(0x[0-9a-f]{64}\) could not be imported: invalid QBFT header: a commit seal is not from a validator/);
  t.is((await storedHead(dataPath)).number, 3n);

  // The same data path continues from block 3; an unsealed block 4 lacks the quorum.
  const unsealed = withSeals(blocks[4]!, () => []);
  const again = await importDev(dataPath, writeBlockFile('unsealed.blocks', [unsealed]));
  t.is(again.code, 1, again.stdout);
  t.regex(again.stderr, /Block #4 .* could not be imported: invalid QBFT header: 0 commit seals, quorum is 1/);
  t.is((await storedHead(dataPath)).number, 3n);
});

// ---------------------------------------------------------------------------------------------
// The validator set a block is checked against, in one process: votes and the validator contract
// ---------------------------------------------------------------------------------------------

const dev = loadDevNetwork();
const DEV_KEY = dev.validatorKey;
const OTHER_KEY = Uint8Array.from(randomBytes(32));
const DEV_VALIDATOR = addressOf(DEV_KEY);
const OTHER_VALIDATOR = addressOf(OTHER_KEY);
const BOTH = [DEV_VALIDATOR, OTHER_VALIDATOR].sort(compareAddresses);

interface BlockPlan {
  /** extraData validators (block-header mode) — empty in contract mode. */
  validators: Uint8Array[];
  vote?: BftVote;
  sealers: Uint8Array[];
}

/** Blocks built and sealed as planned on a scratch chain (nothing checks them there), encoded. */
async function buildChain(genesisJson: string, plans: BlockPlan[]): Promise<Uint8Array[]> {
  const chain = await Chain.open(freshDataPath(), await chainSpecFromGenesis(genesisJson));
  try {
    const encoded: Uint8Array[] = [];
    for (const plan of plans) {
      const head = chain.getHead();
      const unsealed: BftExtraData = { vanity: new Uint8Array(32), validators: plan.validators, round: 0, seals: [], ...(plan.vote ? { vote: plan.vote } : {}) };
      const built = await chain.buildBlock({
        timestamp: head.timestamp + 1n,
        coinbase: DEV_VALIDATOR,
        extraData: encodeExtraData(unsealed),
        maxBuildMs: 1000,
        transactions: [],
      });
      const digest = QbftBlock.fromRlp(built.block.serialize()).digest();
      const event = await chain.importBuilt(built, encodeExtraData({ ...unsealed, seals: plan.sealers.map((key) => signCommitSeal(digest, key)) }));
      encoded.push((await chain.store.getBlock(event.head.hash))!.serialize());
    }
    return encoded;
  } finally {
    await chain.close();
  }
}

/** Imports `encoded` into a fresh chain as `blocks import` does; resolves with the head and the failure, if any. */
async function importInProcess(genesisJson: string, encoded: Uint8Array[]): Promise<{ head: bigint; failure?: string }> {
  const chain = await Chain.open(freshDataPath(), await chainSpecFromGenesis(genesisJson));
  try {
    const data = Buffer.concat(encoded.map((b) => Buffer.from(b)));
    await importBlocks(chain, splitBlocks(data), {
      rules: { consensus: 'qbft' },
      total: encoded.length,
      checkSealedBlock: qbftSealedBlockCheck(chain, parseGenesisJson(genesisJson)),
    });
    return { head: chain.getHead().number };
  } catch (err) {
    if (!(err instanceof ImportFailure)) throw err;
    return { head: chain.getHead().number, failure: err.message };
  } finally {
    await chain.close();
  }
}

const resealed = (encoded: Uint8Array, keys: Uint8Array[]): Uint8Array =>
  withSeals(encoded, (_seals, block) => keys.map((key) => signCommitSeal(block.digest(), key)));

test.serial('block-header mode: a validator voted in must seal the blocks after the vote', async (t) => {
  const genesisJson = JSON.stringify(dev.genesisJson);
  const chain = await buildChain(genesisJson, [
    { validators: [DEV_VALIDATOR], vote: { recipient: OTHER_VALIDATOR, add: true }, sealers: [DEV_KEY] },
    { validators: BOTH, sealers: [DEV_KEY, OTHER_KEY] },
  ]);
  t.deepEqual(await importInProcess(genesisJson, chain), { head: 2n });

  // After the vote the set is two validators, so one seal is short of the quorum.
  const oneSeal = await importInProcess(genesisJson, [chain[0]!, resealed(chain[1]!, [DEV_KEY])]);
  t.is(oneSeal.head, 1n);
  t.regex(oneSeal.failure ?? '', /^Block #2 \(0x[0-9a-f]{64}\) could not be imported: invalid QBFT header: 1 commit seals, quorum is 2$/);

  // Before the vote the newcomer is no validator: its seal on block 1 is refused.
  const early = await importInProcess(genesisJson, [resealed(chain[0]!, [DEV_KEY, OTHER_KEY])]);
  t.is(early.head, 0n);
  t.regex(early.failure ?? '', /^Block #1 .* could not be imported: invalid QBFT header: a commit seal is not from a validator$/);
});

test.serial('contract mode: the seals are checked against getValidators() of the validator contract', async (t) => {
  const contract = '0x0000000000000000000000000000000000008888';
  const data = encodeAddressArray(BOTH);
  // CODECOPY the ABI array stored after this 12-byte prologue and RETURN it.
  const code = Uint8Array.of(0x60, data.length, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, data.length, 0x60, 0x00, 0xf3, ...data);
  const genesis = structuredClone(dev.genesisJson) as { config: { qbft: Record<string, unknown> }; alloc: Record<string, unknown>; extraData: string };
  genesis.config.qbft.validatorcontractaddress = contract;
  genesis.extraData = bytesToHex(genesisExtraData([]));
  genesis.alloc[contract.slice(2)] = { balance: '0x0', code: bytesToHex(code) };
  const genesisJson = JSON.stringify(genesis);

  const chain = await buildChain(genesisJson, [
    { validators: [], sealers: [DEV_KEY, OTHER_KEY] },
    { validators: [], sealers: [OTHER_KEY, DEV_KEY] },
  ]);
  t.deepEqual(await importInProcess(genesisJson, chain), { head: 2n });

  const oneSeal = await importInProcess(genesisJson, [chain[0]!, resealed(chain[1]!, [OTHER_KEY])]);
  t.is(oneSeal.head, 1n);
  t.regex(oneSeal.failure ?? '', /^Block #2 .* could not be imported: invalid QBFT header: 1 commit seals, quorum is 2$/);

  const outsider = await importInProcess(genesisJson, [resealed(chain[0]!, [DEV_KEY, Uint8Array.from(randomBytes(32))])]);
  t.is(outsider.head, 0n);
  t.regex(outsider.failure ?? '', /a commit seal is not from a validator$/);
});
