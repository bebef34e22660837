/**
 * A live QBFT node (the dev validator on a custom genesis) crossing Prague → Osaka → BPO1 → BPO2 by
 * time while it produces blocks: the forks are scheduled seconds after the node starts, each with its
 * own `blobSchedule` entry. Each era gets one more one-blob transaction than its blocks may hold (the
 * pre-Osaka KZG wrapper in Prague, EIP-7594's cell-proof wrapper from Osaka on), released together
 * at the era's first block; the block that takes them must hold exactly the era's maximum. eth_config is asked in each era, and at the end every block's excess
 * blob gas, eth_feeHistory's blob base fees and ratios, and eth_blobBaseFee are checked against an
 * independent computation with the blob parameters of each block's timestamp.
 *
 * Not in `npm test`: its fork times are fixed in the genesis before the node starts, so it lasts over
 * three minutes however fast the machine is, and on a machine too loaded to verify an era's blobs
 * within that era it fails. `npm run test:e2e:slow` runs it.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Mainnet, createCustomCommon } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import { createBlob4844Tx, createFeeMarket1559Tx } from '@ethereumjs/tx';
import { bytesToHex, getBlobs, hexToBytes } from '@ethereumjs/util';
import { loadKZG } from 'kzg-wasm';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { GAS_PER_BLOB, blobBaseFee, blobParamsOf, nextExcessBlobGas } from '../helpers/blob-fees.js';
import type { BlobParams } from '../helpers/blob-fees.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

/** Distinct blob parameters per fork; small targets so that the blocks filled below move the excess blob gas. */
const BLOB_SCHEDULE = {
  cancun: { target: 1, max: 2, baseFeeUpdateFraction: 40_000 },
  prague: { target: 1, max: 3, baseFeeUpdateFraction: 50_000 },
  osaka: { target: 1, max: 2, baseFeeUpdateFraction: 60_000 },
  bpo1: { target: 2, max: 3, baseFeeUpdateFraction: 70_000 },
  bpo2: { target: 1, max: 2, baseFeeUpdateFraction: 45_000 },
};
type Era = 'cancun' | 'prague' | 'osaka' | 'bpo1' | 'bpo2';
const ERAS: readonly Era[] = ['cancun', 'prague', 'osaka', 'bpo1', 'bpo2'];

/**
 * Seconds after the genesis file is written; the schedule is fixed before the node starts, so the slow work
 * goes where there is room for it. Before Prague the node's transaction decoder loads KZG's trusted setup
 * (on its first blob transaction: 10–20 s on an idle machine, two minutes seen on a heavily loaded one).
 * Osaka is long because every later era's transactions are sent in it: from Osaka the pool checks
 * EIP-7594's 128 cell proofs per blob, about a second per blob idle, several seconds loaded (ten blobs
 * took 57 s with a load average of 16–19 on two cores).
 */
const OFFSETS = { pragueTime: 100, osakaTime: 115, bpo1Time: 185, bpo2Time: 200 };

const dev = loadDevNetwork();
const SENDER = DEV_ACCOUNTS[1];
const BLOB_RECIPIENT = '0x000000000000000000000000000000000000b10b';
const hex = (n: bigint | number) => `0x${n.toString(16)}`;

type RpcBlock = { number: string; hash: string; timestamp: string; blobGasUsed?: string; excessBlobGas?: string; baseFeePerGas: string; transactions: string[] };
type Receipt = { blockNumber: string; status: string; blobGasUsed: string };
type EthConfig = { current: { activationTime: number; blobSchedule: unknown; forkId: string }; next: { activationTime: number; blobSchedule: unknown } | null };

let node: NodeProcess;
let dataPath: string;
let forkTimes: Record<Exclude<Era, 'cancun'>, bigint>;
let kzg: Awaited<ReturnType<typeof loadKZG>>;

function eraAt(timestamp: bigint): Era {
  return timestamp >= forkTimes.bpo2 ? 'bpo2' : timestamp >= forkTimes.bpo1 ? 'bpo1' : timestamp >= forkTimes.osaka ? 'osaka' : timestamp >= forkTimes.prague ? 'prague' : 'cancun';
}
const paramsOf = (era: Era): BlobParams => blobParamsOf(BLOB_SCHEDULE[era]);

/** One blob, its commitment and both kinds of proof, computed once: every transaction carries the same blob. */
let blob: { data: `0x${string}`; commitment: `0x${string}`; blobProof: `0x${string}`; cellProofs: `0x${string}`[] };

/** A signed one-blob transaction of SENDER in the wrapper of the era: version 0 before Osaka, version 1 after. */
function blobTransaction(nonce: bigint, cellProofs: boolean): { raw: Uint8Array; hash: string } {
  const common = createCustomCommon({ chainId: 1337 }, Mainnet, { hardfork: 'osaka', customCrypto: { kzg } });
  const tx = createBlob4844Tx(
    {
      chainId: 1337n,
      nonce,
      gasLimit: 21_000n,
      maxFeePerGas: 10n ** 11n,
      maxPriorityFeePerGas: 10n ** 9n,
      maxFeePerBlobGas: 10n ** 12n,
      to: BLOB_RECIPIENT,
      blobs: [blob.data],
      kzgCommitments: [blob.commitment],
      kzgProofs: blob.cellProofs,
    },
    { common },
  ).sign(hexToBytes(SENDER.privateKey));
  const raw = cellProofs
    ? tx.serializeNetworkWrapper()
    : new Uint8Array([3, ...RLP.encode([tx.raw(), [hexToBytes(blob.data)], [hexToBytes(blob.commitment)], [hexToBytes(blob.blobProof)]])]);
  return { raw, hash: bytesToHex(tx.hash()) };
}

/** A plain EIP-1559 transfer of SENDER: fills the nonce gap in front of an era's blob transactions. */
function transfer(nonce: bigint): { raw: Uint8Array; hash: string } {
  const tx = createFeeMarket1559Tx(
    { chainId: 1337n, nonce, gasLimit: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n, to: BLOB_RECIPIENT, value: 1n },
    { common: createCustomCommon({ chainId: 1337 }, Mainnet, { hardfork: 'osaka' }) },
  ).sign(hexToBytes(SENDER.privateKey));
  return { raw: tx.serialize(), hash: bytesToHex(tx.hash()) };
}

/** Sends a raw transaction; answers the error, or undefined once accepted. A call outlasting the HTTP timeout (KZG loading) is sent again. */
async function send(raw: Uint8Array): Promise<(Error & { code?: number }) | undefined> {
  for (;;) {
    const error = await node.rpc('eth_sendRawTransaction', [bytesToHex(raw)]).then(
      () => undefined,
      (err: Error & { code?: number }) => err,
    );
    if (error?.message !== 'Timeout expired') return error;
  }
}

const latest = () => node.rpc<RpcBlock>('eth_getBlockByNumber', ['latest', false]);

/** Waits for the first block of `era` (or a later one) to be the head. */
function headIn(era: Exclude<Era, 'cancun'>, timeoutMs: number): Promise<RpcBlock> {
  return waitFor(`a block of ${era} (from ${forkTimes[era]})`, latest, (b) => BigInt(b.timestamp) >= forkTimes[era], timeoutMs, 250);
}

test.before(async (t) => {
  // Loading KZG here and computing the blob's 128 cell proofs take minutes on a loaded machine.
  t.timeout(300_000);
  kzg = await loadKZG();
  const data = getBlobs('blobs across the BPO forks')[0]!;
  const commitment = kzg.blobToKZGCommitment(data) as `0x${string}`;
  blob = { data, commitment, blobProof: kzg.computeBlobKZGProof(data, commitment) as `0x${string}`, cellProofs: kzg.computeCellsAndProofs(data)[1] as `0x${string}`[] };

  dataPath = tempDataPath();
  const now = BigInt(Math.floor(Date.now() / 1000));
  forkTimes = { prague: now + BigInt(OFFSETS.pragueTime), osaka: now + BigInt(OFFSETS.osakaTime), bpo1: now + BigInt(OFFSETS.bpo1Time), bpo2: now + BigInt(OFFSETS.bpo2Time) };
  const genesis = structuredClone(dev.genesisJson) as { config: Record<string, unknown> };
  genesis.config.pragueTime = Number(forkTimes.prague);
  genesis.config.osakaTime = Number(forkTimes.osaka);
  genesis.config.bpo1Time = Number(forkTimes.bpo1);
  genesis.config.bpo2Time = Number(forkTimes.bpo2);
  genesis.config.blobSchedule = BLOB_SCHEDULE;
  const genesisPath = join(dataPath, 'genesis.json');
  const keyPath = join(dataPath, 'validator.key');
  writeFileSync(genesisPath, JSON.stringify(genesis));
  writeFileSync(keyPath, formatNodeKey(dev.validatorKey));
  node = await startNode({ genesis: genesisPath, dataPath: join(dataPath, 'data'), args: [`--node-private-key-file=${keyPath}`] });
});

test.after.always(async () => {
  await node?.stop();
  if (dataPath) removeDataPath(dataPath);
});

test.serial('blob transactions fill each era\'s blocks to that era\'s maximum; eth_config follows the head across Prague, Osaka, BPO1 and BPO2', async (t) => {
  t.timeout(400_000);
  // Before Prague: Cancun's parameters, Prague next.
  const first = await latest();
  t.true(BigInt(first.timestamp) < forkTimes.prague, 'the node started before Prague');
  const cancunConfig = await node.rpc<EthConfig>('eth_config');
  t.deepEqual(cancunConfig.current.blobSchedule, BLOB_SCHEDULE.cancun);
  t.is(cancunConfig.next?.activationTime, Number(forkTimes.prague));

  // The decoder loads KZG on its first blob transaction: a transaction that is nothing but its type byte
  // starts the load, fails to decode once it is loaded, and costs no nonce.
  const warmUp = Date.now();
  t.truthy(await send(Uint8Array.of(3, 0xc0)), 'a bare type byte is refused');
  t.log(`KZG loaded by the node's decoder in ${((Date.now() - warmUp) / 1000).toFixed(1)} s`);

  const forkIds = new Set<string>([cancunConfig.current.forkId]);
  /** At the era's first block: eth_config describes the era, and the next one. */
  const enter = async (era: Exclude<Era, 'cancun'>): Promise<void> => {
    const eraStart = await headIn(era, 150_000);
    const next = ERAS[ERAS.indexOf(era) + 1] as Exclude<Era, 'cancun'> | undefined;
    t.true(next === undefined || BigInt(eraStart.timestamp) < forkTimes[next], `still in ${era}: the previous era's work took too long`);
    const config = await node.rpc<EthConfig>('eth_config');
    t.is(config.current.activationTime, Number(forkTimes[era]), `${era}: activation time`);
    t.deepEqual(config.current.blobSchedule, BLOB_SCHEDULE[era], `${era}: blob schedule`);
    if (next === undefined) t.is(config.next, null);
    else t.deepEqual(config.next, { ...config.next!, activationTime: Number(forkTimes[next]), blobSchedule: BLOB_SCHEDULE[next] });
    forkIds.add(config.current.forkId);
  };
  /** The era's blob transactions were mined in the era, the fullest block holding exactly its maximum. */
  const check = async (era: Exclude<Era, 'cancun'>, txs: readonly { hash: string }[]): Promise<void> => {
    const counts = new Map<string, number>();
    for (const tx of txs) {
      const receipt = await waitFor(`receipt of a ${era} blob transaction`, () => node.rpc<Receipt | null>('eth_getTransactionReceipt', [tx.hash]), (r) => r !== null, 30_000, 250);
      t.is(receipt!.status, '0x1');
      t.is(receipt!.blobGasUsed, hex(GAS_PER_BLOB));
      counts.set(receipt!.blockNumber, (counts.get(receipt!.blockNumber) ?? 0) + 1);
    }
    for (const number of counts.keys()) {
      const block = await node.rpc<RpcBlock>('eth_getBlockByNumber', [number, false]);
      t.is(eraAt(BigInt(block.timestamp)), era, `${era}: block ${number} is in the era`);
    }
    const { max } = BLOB_SCHEDULE[era];
    t.is(Math.max(...counts.values()), max, `${era}: the fullest block holds the era's maximum of ${max} blobs (${JSON.stringify([...counts])})`);
  };
  const since = (from: number) => `${((Date.now() - from) / 1000).toFixed(1)} s`;

  // Prague (the version 0 wrapper, cheap to check): max + 1 one-blob transactions, the first nonce sent last so
  // that they become executable together.
  await enter('prague');
  let nonce = BigInt(await node.rpc<string>('eth_getTransactionCount', [SENDER.address, 'latest']));
  const prague = Array.from({ length: BLOB_SCHEDULE.prague.max + 1 }, (_, i) => blobTransaction(nonce + BigInt(i), false));
  for (const tx of [...prague.slice(1), prague[0]!]) t.is((await send(tx.raw))?.message, undefined, 'prague: blob transaction accepted');
  await check('prague', prague);

  // From Osaka the pool checks EIP-7594's cell proofs, seconds per blob on a loaded machine. So every later
  // era's transactions are sent in Osaka, each era's behind a nonce gap that a plain transfer fills at the
  // era's first block.
  await enter('osaka');
  nonce = BigInt(await node.rpc<string>('eth_getTransactionCount', [SENDER.address, 'latest']));
  const batches = (['osaka', 'bpo1', 'bpo2'] as const).map((era) => {
    const release = transfer(nonce);
    const blobs = Array.from({ length: BLOB_SCHEDULE[era].max + 1 }, (_, i) => blobTransaction(nonce + 1n + BigInt(i), true));
    nonce += 1n + BigInt(blobs.length);
    return { era, release, blobs };
  });
  const sending = Date.now();
  const [osaka, ...later] = batches;
  // The pool takes the new wrapper once it has seen Osaka's first block: retried until then.
  await waitFor('the cell-proof wrapper accepted', () => send(osaka!.blobs[0]!.raw), (error) => error === undefined, 15_000, 250);
  for (const tx of osaka!.blobs.slice(1)) t.is((await send(tx.raw))?.message, undefined, 'osaka: blob transaction accepted');
  t.is((await send(osaka!.release.raw))?.message, undefined, 'osaka: the release');
  t.log(`osaka: ${osaka!.blobs.length} blob transactions sent in ${since(sending)}`);
  for (const batch of later) for (const tx of batch.blobs) t.is((await send(tx.raw))?.message, undefined, `${batch.era}: blob transaction queued`);
  t.log(`every blob transaction sent in ${since(sending)}, ${Math.floor(Date.now() / 1000) - Number(forkTimes.osaka)} s into Osaka (${OFFSETS.bpo1Time - OFFSETS.osakaTime} s long)`);
  await check('osaka', osaka!.blobs);
  for (const batch of later) {
    await enter(batch.era);
    t.is((await send(batch.release.raw))?.message, undefined, `${batch.era}: the release`);
    await check(batch.era, batch.blobs);
  }
  t.is(forkIds.size, 5, 'a fork id per era');
});

test.serial('every block\'s excess blob gas, blob base fee and blob gas ratio follow the blob parameters of its timestamp; eth_blobBaseFee the next block\'s', async (t) => {
  const head = await waitFor('a block after the last blob block', latest, (b) => BigInt(b.number) > 0n, 5_000);
  const count = Number(BigInt(head.number));
  const history = await node.rpc<{ oldestBlock: string; baseFeePerBlobGas: string[]; blobGasUsedRatio: number[] }>('eth_feeHistory', [hex(count), head.number, []]);
  t.is(history.oldestBlock, '0x1');
  let parent = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['0x0', false]);
  const excessByEra = new Map<Era, bigint>();
  for (let n = 1; n <= count; n++) {
    const block = await node.rpc<RpcBlock>('eth_getBlockByNumber', [hex(n), false]);
    const timestamp = BigInt(block.timestamp);
    const era = eraAt(timestamp);
    const params = paramsOf(era);
    const expectedExcess = nextExcessBlobGas(
      { excessBlobGas: BigInt(parent.excessBlobGas!), blobGasUsed: BigInt(parent.blobGasUsed!), baseFeePerGas: BigInt(parent.baseFeePerGas) },
      params,
      timestamp >= forkTimes.osaka,
    );
    t.is(block.excessBlobGas, hex(expectedExcess), `excess blob gas of block ${n} (${era})`);
    const used = BigInt(block.blobGasUsed!);
    t.true(used <= params.max * GAS_PER_BLOB, `block ${n} within ${era}'s blob maximum`);
    t.is(history.baseFeePerBlobGas[n - 1], hex(blobBaseFee(expectedExcess, params)), `blob base fee of block ${n} (${era})`);
    t.is(history.blobGasUsedRatio[n - 1], Number(used) / Number(params.max * GAS_PER_BLOB), `blob gas ratio of block ${n} (${era})`);
    if (expectedExcess > (excessByEra.get(era) ?? 0n)) excessByEra.set(era, expectedExcess);
    parent = block;
  }
  // The blobs moved the excess in every era, so each era's fraction mattered.
  for (const era of ['prague', 'osaka', 'bpo1', 'bpo2'] as const) t.true((excessByEra.get(era) ?? 0n) > 0n, `excess blob gas in ${era}`);
  // The next block is BPO2's: eth_blobBaseFee and the last fee-history entry, asked of the same head.
  const snapshot = await waitFor(
    'eth_blobBaseFee and eth_feeHistory at one head',
    async () => {
      const before = await node.rpc<string>('eth_blockNumber');
      const [fee, next] = await Promise.all([node.rpc<string>('eth_blobBaseFee'), node.rpc<{ baseFeePerBlobGas: string[] }>('eth_feeHistory', ['0x1', before, []])]);
      const headBlock = await node.rpc<RpcBlock>('eth_getBlockByNumber', [before, false]);
      return { same: (await node.rpc<string>('eth_blockNumber')) === before, fee, next: next.baseFeePerBlobGas[1], headBlock };
    },
    (s) => s.same,
    10_000,
    50,
  );
  const last = snapshot.headBlock;
  const expectedNext = blobBaseFee(
    nextExcessBlobGas({ excessBlobGas: BigInt(last.excessBlobGas!), blobGasUsed: BigInt(last.blobGasUsed!), baseFeePerGas: BigInt(last.baseFeePerGas) }, paramsOf('bpo2'), true),
    paramsOf('bpo2'),
  );
  t.is(snapshot.fee, hex(expectedNext));
  t.is(snapshot.next, hex(expectedNext));
});
