/**
 * Result shapes (§4) checked against Besu's expected answers for the fixture chain
 * (`chain/testBlockchain.blocks`: Frontier blocks 1–32, a London/Shanghai block 33 with a 1559 tx
 * and a withdrawal, a Cancun block 34 with a blob tx). Blocks and transactions are the real decoded
 * ones; comparisons are on JSON text, so member order counts.
 */
import test from 'ava';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBlockFromBytesArray, type Block } from '@ethereumjs/block';
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import {
  createEOACode7702Tx,
  createFeeMarket1559Tx,
  createLegacyTx,
  createTxFromRLP,
  type TypedTransaction,
} from '@ethereumjs/tx';
import { keccak_256 } from '@noble/hashes/sha3.js';
import * as secp from '@noble/secp256k1';
import type { BlockBytes } from '@ethereumjs/block';
import type { RawLog, StoredReceipt } from '../../src/shared/ethereum/chain-records.js';
import { BESU_FIXTURES } from '../helpers/node-process.js';
import {
  formatBlock,
  formatFilterLog,
  formatMinedTransaction,
  formatPendingTransaction,
  formatReceipt,
  formatReceiptLog,
  toData,
  toQuantity,
} from '../../src/shared/rpc/format.js';

const BESU = BESU_FIXTURES;
if (!existsSync(BESU)) throw new Error(`Besu fixtures not found at ${BESU} (set BESU_FIXTURES)`);

/** `0x` + the byte repeated 20 times: a recognisable address. */
const repeatedAddress = (byte: string) => `0x${byte.repeat(20)}` as const;

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text.replace(/^0x/, ''), 'hex'));

// ---------------------------------------------------------------------------------------------
// The fixture chain
// ---------------------------------------------------------------------------------------------

/** ethereumjs refuses blob txs without a KZG backend; decoding a block never calls it. */
const unusedKzg = {} as never;

function commonFor(number: number): Common {
  const hardfork = number <= 32 ? Hardfork.Chainstart : number === 33 ? Hardfork.Shanghai : Hardfork.Cancun;
  return new Common({ chain: Mainnet, hardfork, customCrypto: { kzg: unusedKzg } });
}

function loadChain(): Block[] {
  let rest: Uint8Array = new Uint8Array(readFileSync(join(BESU, 'chain', 'testBlockchain.blocks')));
  const blocks: Block[] = [];
  while (rest.length > 0) {
    const { data, remainder } = RLP.decode(rest, true) as unknown as { data: BlockBytes; remainder: Uint8Array };
    rest = remainder;
    blocks.push(createBlockFromBytesArray(data, { common: commonFor(blocks.length), skipConsensusFormatValidation: true }));
  }
  return blocks;
}

const chain = loadChain();
const byHash = new Map(chain.map((block) => [toData(block.hash()), block]));
const txByHash = new Map<string, { block: Block; index: number }>();
for (const block of chain) block.transactions.forEach((tx, index) => txByHash.set(toData(tx.hash()), { block, index }));

function totalDifficulty(number: bigint): bigint {
  return chain.slice(0, Number(number) + 1).reduce((sum, block) => sum + block.header.difficulty, 0n);
}

function locationOf(block: Block, index: number) {
  return {
    blockHash: block.hash(),
    blockNumber: block.header.number,
    blockTimestamp: block.header.timestamp,
    index,
    ...(block.header.baseFeePerGas === undefined ? {} : { baseFeePerGas: block.header.baseFeePerGas }),
  };
}

interface Fixture {
  request: { method: string; params: unknown[] };
  response: { result: unknown };
}

const fixtures: [string, Fixture][] = readdirSync(join(BESU, 'rpc', 'eth'))
  .filter((name) => name.endsWith('.json'))
  .map((name) => [name, JSON.parse(readFileSync(join(BESU, 'rpc', 'eth', name), 'utf8')) as Fixture]);

function fixturesOf(pattern: RegExp): [string, Fixture][] {
  return fixtures.filter(([, f]) => !Array.isArray(f.request) && pattern.test(f.request.method) && f.response.result !== null && typeof f.response.result === 'object');
}

test('the fixture chain decodes to the known head', (t) => {
  t.is(chain.length, 35);
  t.is(toData(chain[34]!.hash()), '0x4859ea10d276f6df988eabd48a02e0696cfd3deb769d2a5e0e416a5f3191028a');
});

// ---------------------------------------------------------------------------------------------
// Blocks (§4.1) and mined transactions (§4.2)
// ---------------------------------------------------------------------------------------------

const blockFixtures = fixturesOf(/^eth_getBlockBy(Number|Hash)$/);
test('block fixtures are present', (t) => t.true(blockFixtures.length >= 4));

for (const [name, fixture] of blockFixtures) {
  test(`formatBlock matches ${name}`, (t) => {
    const expected = fixture.response.result as { hash: string };
    const block = byHash.get(expected.hash);
    if (block === undefined) return t.fail(`block ${expected.hash} not in the chain`);
    const actual = formatBlock(block, {
      fullTransactions: fixture.request.params[1] === true,
      hash: block.hash(),
      totalDifficulty: totalDifficulty(block.header.number),
    });
    t.is(JSON.stringify(actual), JSON.stringify(expected));
  });
}

test('formatBlock: uncle hashes, given size and senders, QBFT hash', (t) => {
  const block = chain[4]!; // two ommers
  const qbftHash = new Uint8Array(32).fill(0xab);
  const sender = new Uint8Array(20).fill(0x11);
  const formatted = formatBlock(block, {
    fullTransactions: true,
    hash: qbftHash,
    totalDifficulty: 5n,
    size: 1234,
    senders: [sender],
  });
  t.deepEqual(formatted.uncles, block.uncleHeaders.map((uncle) => toData(uncle.hash())));
  t.is((formatted.uncles as string[]).length, 2);
  t.is(formatted.hash, toData(qbftHash));
  t.is(formatted.size, '0x4d2');
  t.is(formatted.totalDifficulty, '0x5');
  const [tx] = formatted.transactions as { blockHash: string; from: string }[];
  t.is(tx!.blockHash, toData(qbftHash));
  t.is(tx!.from, toData(sender));
  // no fork fields on a Frontier block
  for (const key of ['baseFeePerGas', 'withdrawalsRoot', 'withdrawals', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash']) {
    t.false(key in formatted, key);
  }
});

const txFixtures = fixturesOf(/^eth_getTransactionBy(Hash|BlockHashAndIndex|BlockNumberAndIndex)$/);
test('mined transaction fixtures are present', (t) => t.true(txFixtures.length >= 8));

for (const [name, fixture] of txFixtures) {
  test(`formatMinedTransaction matches ${name}`, (t) => {
    const expected = fixture.response.result as { hash: string };
    const found = txByHash.get(expected.hash);
    if (found === undefined) return t.fail(`tx ${expected.hash} not in the chain`);
    const actual = formatMinedTransaction(found.block.transactions[found.index]!, locationOf(found.block, found.index));
    t.is(JSON.stringify(actual), JSON.stringify(expected));
  });
}

// ---------------------------------------------------------------------------------------------
// Receipts (§4.4) and logs (§4.5)
// ---------------------------------------------------------------------------------------------

interface ExpectedLog {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
  transactionIndex: string;
  blockNumber: string;
}

interface ExpectedReceipt {
  transactionHash: string;
  cumulativeGasUsed: string;
  gasUsed: string;
  effectiveGasPrice: string;
  logsBloom: string;
  logs: ExpectedLog[];
  root?: string;
  status?: string;
  contractAddress: string | null;
  blobGasUsed?: string;
  blobGasPrice?: string;
}

const rawLogOf = (log: ExpectedLog): RawLog => [hex(log.address), log.topics.map(hex), hex(log.data)];

/**
 * The execution results (gas, bloom, logs, status/root) are taken from the expected answer — the
 * transport does not execute — while everything that identifies the transaction (hash, sender,
 * recipient, type, location) comes from the decoded chain.
 */
function storedReceiptFor(expected: ExpectedReceipt, tx: TypedTransaction): StoredReceipt {
  const receipt: StoredReceipt = {
    cumulativeGasUsed: BigInt(expected.cumulativeGasUsed),
    gasUsed: BigInt(expected.gasUsed),
    logsBloom: hex(expected.logsBloom),
    logs: expected.logs.map(rawLogOf),
    txType: tx.type,
    effectiveGasPrice: BigInt(expected.effectiveGasPrice),
    from: tx.getSenderAddress().bytes,
  };
  if (expected.root !== undefined) receipt.root = hex(expected.root);
  else receipt.status = Number(expected.status) as 0 | 1;
  if (tx.to !== undefined) receipt.to = tx.to.bytes;
  if (expected.contractAddress !== null) receipt.contractAddress = hex(expected.contractAddress);
  if (expected.blobGasUsed !== undefined) receipt.blobGasUsed = BigInt(expected.blobGasUsed);
  if (expected.blobGasPrice !== undefined) receipt.blobGasPrice = BigInt(expected.blobGasPrice);
  return receipt;
}

const receiptFixtures = fixturesOf(/^eth_getTransactionReceipt$|^eth_getBlockReceipts$/);
test('receipt fixtures are present', (t) => t.true(receiptFixtures.length >= 6));

for (const [name, fixture] of receiptFixtures) {
  test(`formatReceipt matches ${name}`, (t) => {
    const result = fixture.response.result as ExpectedReceipt | ExpectedReceipt[];
    const expectedList = Array.isArray(result) ? result : [result];
    const actual = expectedList.map((expected) => {
      const found = txByHash.get(expected.transactionHash);
      if (found === undefined) throw new Error(`tx ${expected.transactionHash} not in the chain`);
      const tx = found.block.transactions[found.index]!;
      return formatReceipt(storedReceiptFor(expected, tx), {
        txHash: tx.hash(),
        blockHash: found.block.hash(),
        blockNumber: found.block.header.number,
        blockTimestamp: found.block.header.timestamp,
        index: found.index,
        logIndexStart: expected.logs.length > 0 ? Number(expected.logs[0]!.logIndex) : 0,
      });
    });
    t.is(JSON.stringify(Array.isArray(result) ? actual : actual[0]), JSON.stringify(result));
  });
}

const logFixtures = fixturesOf(/^eth_getLogs$/).filter(([, f]) => (f.response.result as unknown[]).length > 0);
test('log fixtures are present', (t) => t.true(logFixtures.length >= 4));

for (const [name, fixture] of logFixtures) {
  test(`formatFilterLog matches ${name}`, (t) => {
    const expected = fixture.response.result as ExpectedLog[];
    const actual = expected.map((log) => {
      const block = chain[Number(log.blockNumber)]!;
      const txIndex = Number(log.transactionIndex);
      return formatFilterLog(rawLogOf(log), {
        blockHash: block.hash(),
        blockNumber: block.header.number,
        blockTimestamp: block.header.timestamp,
        txHash: block.transactions[txIndex]!.hash(),
        txIndex,
        logIndex: Number(log.logIndex),
      });
    });
    t.is(JSON.stringify(actual), JSON.stringify(expected));
  });
}

test('receipt logs and filter logs carry the same facts in their two orders', (t) => {
  const log: RawLog = [new Uint8Array(20).fill(1), [new Uint8Array(32).fill(2)], Uint8Array.of(3)];
  const loc = { blockHash: new Uint8Array(32).fill(4), blockNumber: 5n, blockTimestamp: 6n, txHash: new Uint8Array(32).fill(7), txIndex: 8, logIndex: 9 };
  const inReceipt = formatReceiptLog(log, loc);
  const inFilter = formatFilterLog(log, loc);
  t.deepEqual(Object.keys(inReceipt), ['address', 'topics', 'data', 'blockNumber', 'transactionHash', 'transactionIndex', 'blockHash', 'blockTimestamp', 'logIndex', 'removed']);
  t.deepEqual(Object.keys(inFilter), ['logIndex', 'removed', 'blockNumber', 'blockHash', 'blockTimestamp', 'transactionHash', 'transactionIndex', 'address', 'data', 'topics']);
  t.deepEqual({ ...inReceipt }, { ...inFilter, removed: false });
  t.is(inFilter.logIndex, '0x9');
  t.is(formatFilterLog(log, { ...loc, removed: true }).removed, true);
});

test('formatReceipt: revertReason after transactionIndex, status 0, no blob members', (t) => {
  const receipt: StoredReceipt = {
    status: 0,
    cumulativeGasUsed: 100n,
    gasUsed: 50n,
    logsBloom: new Uint8Array(256),
    logs: [],
    txType: 2,
    effectiveGasPrice: 7n,
    from: new Uint8Array(20).fill(1),
    revertReason: Uint8Array.of(0x08, 0xc3),
  };
  const formatted = formatReceipt(receipt, {
    txHash: new Uint8Array(32).fill(2),
    blockHash: new Uint8Array(32).fill(3),
    blockNumber: 1n,
    blockTimestamp: 2n,
    index: 0,
    logIndexStart: 0,
  });
  t.deepEqual(Object.keys(formatted), ['blockHash', 'blockNumber', 'contractAddress', 'cumulativeGasUsed', 'from', 'gasUsed', 'effectiveGasPrice', 'logs', 'logsBloom', 'status', 'to', 'transactionHash', 'transactionIndex', 'revertReason', 'type']);
  t.is(formatted.status, '0x0');
  t.is(formatted.to, null);
  t.is(formatted.contractAddress, null);
  t.is(formatted.revertReason, '0x08c3');
  t.is(formatted.type, '0x2');
});

// ---------------------------------------------------------------------------------------------
// Transactions signed here: EIP-155 example, 1559 effective price, 7702, pending shape (§4.3)
// ---------------------------------------------------------------------------------------------

/** The key and expected signature of the EIP-155 specification's worked example. */
const EIP155_KEY = hex('4646464646464646464646464646464646464646464646464646464646464646');
const EIP155_SIGNED =
  '0xf86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83';
const senderOf = (key: Uint8Array) => toData(keccak_256(secp.getPublicKey(key, false).subarray(1)).subarray(12));

const london = new Common({ chain: Mainnet, hardfork: Hardfork.London });
const prague = new Common({ chain: Mainnet, hardfork: Hardfork.Prague });
const somewhere = { blockHash: new Uint8Array(32).fill(9), blockNumber: 100n, blockTimestamp: 1_700_000_000n, index: 3 };

test('EIP-155 legacy tx: chainId present, raw v, r and s as quantities (EIP-155 worked example)', (t) => {
  const tx = createLegacyTx(
    { nonce: 9, gasPrice: 20_000_000_000n, gasLimit: 21000, to: '0x3535353535353535353535353535353535353535', value: 10n ** 18n },
    { common: london },
  ).sign(EIP155_KEY);
  t.is(toData(tx.serialize()), EIP155_SIGNED);
  const formatted = formatMinedTransaction(tx, somewhere);
  t.deepEqual(Object.keys(formatted), ['blockHash', 'blockNumber', 'blockTimestamp', 'chainId', 'from', 'gas', 'gasPrice', 'hash', 'input', 'nonce', 'to', 'transactionIndex', 'type', 'value', 'v', 'r', 's']);
  t.is(formatted.chainId, '0x1');
  t.is(formatted.v, '0x25');
  t.is(formatted.r, '0x28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276');
  t.is(formatted.s, '0x67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83');
  t.is(formatted.hash, toData(keccak_256(hex(EIP155_SIGNED))));
  t.is(formatted.from, senderOf(EIP155_KEY));
  t.is(formatted.gasPrice, '0x4a817c800');
  t.is(formatted.transactionIndex, '0x3');
  t.is(formatted.input, '0x');
});

test('1559 tx: gasPrice is the effective price of its block, v equals yParity', (t) => {
  const tx = createFeeMarket1559Tx(
    { chainId: 1, nonce: 0, maxPriorityFeePerGas: 2n, maxFeePerGas: 100n, gasLimit: 21000, to: repeatedAddress('11'), accessList: [] },
    { common: london },
  ).sign(EIP155_KEY);
  t.is(formatMinedTransaction(tx, { ...somewhere, baseFeePerGas: 10n }).gasPrice, toQuantity(12n)); // baseFee + tip
  t.is(formatMinedTransaction(tx, { ...somewhere, baseFeePerGas: 99n }).gasPrice, toQuantity(100n)); // capped at maxFee
  const formatted = formatMinedTransaction(tx, { ...somewhere, baseFeePerGas: 10n });
  t.deepEqual(Object.keys(formatted), ['accessList', 'blockHash', 'blockNumber', 'blockTimestamp', 'chainId', 'from', 'gas', 'gasPrice', 'maxPriorityFeePerGas', 'maxFeePerGas', 'hash', 'input', 'nonce', 'to', 'transactionIndex', 'type', 'value', 'yParity', 'v', 'r', 's']);
  t.is(formatted.v, formatted.yParity);
  t.deepEqual(formatted.accessList, []);
  t.is(formatted.type, '0x2');
});

test('7702 tx: authorizationList with quantities and the address as data', (t) => {
  const tx = createEOACode7702Tx(
    {
      chainId: 1,
      nonce: 1,
      maxPriorityFeePerGas: 1n,
      maxFeePerGas: 10n,
      gasLimit: 100000,
      to: repeatedAddress('22'),
      authorizationList: [{ chainId: '0x1', address: repeatedAddress('33'), nonce: '0x0', yParity: '0x1', r: '0x00ff', s: '0x02' }],
    },
    { common: prague },
  ).sign(EIP155_KEY);
  const formatted = formatMinedTransaction(tx, { ...somewhere, baseFeePerGas: 1n });
  t.deepEqual(Object.keys(formatted).slice(0, 3), ['accessList', 'authorizationList', 'blockHash']);
  t.deepEqual(formatted.authorizationList, [{ chainId: '0x1', address: repeatedAddress('33'), nonce: '0x0', yParity: '0x1', r: '0xff', s: '0x2' }]);
  t.is(formatted.type, '0x4');
});

test('pending 1559 tx: null block members, gasPrice = maxFeePerGas, publicKey and raw', (t) => {
  const tx = createFeeMarket1559Tx(
    { chainId: 1, nonce: 5, maxPriorityFeePerGas: 2n, maxFeePerGas: 100n, gasLimit: 21000, value: 1n },
    { common: london },
  ).sign(EIP155_KEY);
  const publicKey = secp.getPublicKey(EIP155_KEY, false);
  const formatted = formatPendingTransaction(tx, { address: hex(senderOf(EIP155_KEY)), publicKey });
  t.deepEqual(Object.keys(formatted), ['blockHash', 'blockNumber', 'from', 'gas', 'gasPrice', 'maxPriorityFeePerGas', 'maxFeePerGas', 'hash', 'input', 'nonce', 'to', 'transactionIndex', 'value', 'yParity', 'v', 'r', 's', 'accessList', 'chainId', 'publicKey', 'raw', 'type']);
  t.is(formatted.blockHash, null);
  t.is(formatted.blockNumber, null);
  t.is(formatted.transactionIndex, null);
  t.is(formatted.to, null); // contract creation
  t.is(formatted.gasPrice, '0x64');
  t.is(formatted.publicKey, toData(publicKey.subarray(1)));
  t.is(formatted.raw, toData(tx.serialize()));
  t.is(formatted.chainId, '0x1');
  t.is(formatted.from, senderOf(EIP155_KEY));
  // without a known sender the transaction's own recovery gives the same answer
  t.deepEqual(formatPendingTransaction(tx), formatted);
});

test('pending pre-EIP-155 legacy tx: chainId null, no yParity, no accessList', (t) => {
  const tx = createTxFromRLP(hex('f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83'), { common: london });
  t.is(formatPendingTransaction(tx).chainId, '0x1');
  const frontier = createLegacyTx({ nonce: 0, gasPrice: 1, gasLimit: 21000, to: repeatedAddress('44') }, { common: new Common({ chain: Mainnet, hardfork: Hardfork.Chainstart }) }).sign(EIP155_KEY);
  const formatted = formatPendingTransaction(frontier);
  t.deepEqual(Object.keys(formatted), ['blockHash', 'blockNumber', 'from', 'gas', 'gasPrice', 'hash', 'input', 'nonce', 'to', 'transactionIndex', 'value', 'v', 'r', 's', 'chainId', 'publicKey', 'raw', 'type']);
  t.is(formatted.chainId, null);
  t.true(formatted.v === '0x1b' || formatted.v === '0x1c');
  t.is(formatted.type, '0x0');
});

test('toQuantity and toData encodings', (t) => {
  t.is(toQuantity(0n), '0x0');
  t.is(toQuantity(255), '0xff');
  t.is(toData(new Uint8Array(0)), '0x');
  t.is(toData(Uint8Array.of(0, 10, 255)), '0x000aff');
  const view = Uint8Array.of(1, 2, 3, 4).subarray(1, 3);
  t.is(toData(view), '0x0203');
});
