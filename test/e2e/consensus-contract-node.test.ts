/**
 * A real node on a custom QBFT genesis in contract validator mode with a block reward paid to a
 * mining beneficiary (qbft-and-p2p.md §7, §8): the validator set comes from `getValidators()` of a
 * contract in the genesis alloc, blocks carry no validator list and no vote, vote methods answer
 * "Method not enabled", and every block credits the beneficiary.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { decodeExtraData, genesisExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf } from '../../src/shared/qbft/seal.js';
import { encodeAddressArray } from '../harness/qbft-simulation/fake-chain.js';
import { REPO_ROOT, freePort, removeDataPath, tempDataPath } from '../helpers/node-process.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const dev = loadDevNetwork();
const VALIDATOR = addressOf(dev.validatorKey);
const CONTRACT = '0x0000000000000000000000000000000000008888';
const BENEFICIARY = '0x000000000000000000000000000000000000beef';
const REWARD = 100n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runtime code that returns a fixed ABI `address[]`: CODECOPY the data after the code, RETURN it. */
function fixedAddressArrayCode(addresses: Uint8Array[]): string {
  const data = encodeAddressArray(addresses);
  if (data.length > 0xff) throw new Error('too many addresses for this tiny contract');
  const code = Uint8Array.of(0x60, data.length, 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, data.length, 0x60, 0x00, 0xf3, ...data);
  return hex(code);
}

test('contract validator mode and a block reward on a real node', async (t) => {
  t.timeout(90_000);
  const dataPath = tempDataPath();
  const genesis = structuredClone(dev.genesisJson) as Record<string, unknown> & { config: { qbft: Record<string, unknown> }; alloc: Record<string, unknown> };
  genesis.config.qbft.validatorcontractaddress = CONTRACT;
  genesis.config.qbft.blockreward = REWARD.toString();
  genesis.config.qbft.miningbeneficiary = BENEFICIARY;
  genesis.extraData = hex(genesisExtraData([]));
  genesis.alloc[CONTRACT.slice(2)] = { balance: '0x0', code: fixedAddressArrayCode([VALIDATOR]) };
  const genesisPath = join(dataPath, 'genesis.json');
  const keyPath = join(dataPath, 'validator.key');
  writeFileSync(genesisPath, JSON.stringify(genesis));
  writeFileSync(keyPath, formatNodeKey(dev.validatorKey));

  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin/run.js'),
      `--genesis-file=${genesisPath}`,
      `--data-path=${join(dataPath, 'data')}`,
      `--node-private-key-file=${keyPath}`,
      '--rpc-http-enabled',
      `--rpc-http-port=${port}`,
      '--rpc-http-api=ETH,QBFT',
      '--p2p-enabled=false',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const rpc = async <T>(method: string, params: unknown[] = []): Promise<{ result?: T; error?: { code: number; message: string } }> => {
    const res = await fetch(`http://127.0.0.1:${port}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await res.json()) as { result?: T; error?: { code: number; message: string } };
  };
  try {
    let head = 0;
    const deadline = Date.now() + 40_000;
    while (head < 3) {
      if (child.exitCode !== null) throw new Error(`node exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`no blocks in contract mode:\n${output}`);
      await sleep(300);
      head = Number((await rpc<string>('eth_blockNumber').catch(() => ({ result: '0x0' }))).result ?? 0);
    }
    const block = (await rpc<{ extraData: string; miner: string; number: string }>('eth_getBlockByNumber', ['0x2', false])).result!;
    const extra = decodeExtraData(Buffer.from(block.extraData.slice(2), 'hex'));
    t.deepEqual(extra.validators, [], 'contract-mode blocks list no validators');
    t.is(extra.vote, undefined);
    t.is(extra.seals.length, 1);
    t.is(block.miner, hex(VALIDATOR));

    t.deepEqual((await rpc('qbft_getValidatorsByBlockNumber', ['latest'])).result, [hex(VALIDATOR)]);
    t.deepEqual((await rpc('qbft_getValidatorsByBlockNumber', ['0x0'])).result, [hex(VALIDATOR)]);
    t.deepEqual((await rpc('qbft_getValidatorsByBlockNumber', ['pending'])).result, [hex(VALIDATOR)]);
    t.deepEqual((await rpc('qbft_proposeValidatorVote', [BENEFICIARY, true])).error, { code: -32604, message: 'Method not enabled' });
    t.deepEqual((await rpc('qbft_getPendingVotes')).error, { code: -32604, message: 'Method not enabled' });

    // No transactions: the beneficiary holds exactly one reward per block; the validator nothing.
    const atBlock = '0x' + head.toString(16);
    t.is(BigInt((await rpc<string>('eth_getBalance', [BENEFICIARY, atBlock])).result!), REWARD * BigInt(head));
    t.is(BigInt((await rpc<string>('eth_getBalance', [hex(VALIDATOR), atBlock])).result!), 0n);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    t.is(await exited, 0);
    removeDataPath(dataPath);
  }
});
