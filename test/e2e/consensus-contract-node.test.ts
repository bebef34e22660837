/**
 * A real node on a custom QBFT genesis in contract validator mode with a block reward paid to a
 * mining beneficiary (qbft-and-p2p.md §7, §8): the validator set comes from `getValidators()` of a
 * contract in the genesis alloc, blocks carry no validator list and no vote, vote methods answer
 * "Method not enabled", and every block credits the beneficiary.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { formatNodeKey } from '../../src/shared/ethereum/node-key.js';
import { decodeExtraData, genesisExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf } from '../../src/shared/qbft/seal.js';
import { encodeAddressArray } from '../harness/qbft-simulation/fake-chain.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const dev = loadDevNetwork();
const VALIDATOR = addressOf(dev.validatorKey);
const CONTRACT = '0x0000000000000000000000000000000000008888';
const BENEFICIARY = '0x000000000000000000000000000000000000beef';
const REWARD = 100n;

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

  const node = await startNode({
    genesis: genesisPath,
    dataPath: join(dataPath, 'data'),
    args: [`--node-private-key-file=${keyPath}`, '--rpc-http-api=ETH,QBFT'],
  });
  try {
    const head = await waitFor('three blocks in contract mode', () => node.rpc<string>('eth_blockNumber').then(Number), (n) => n >= 3, 40_000, 300);
    const block = await node.rpc<{ extraData: string; miner: string; number: string }>('eth_getBlockByNumber', ['0x2', false]);
    const extra = decodeExtraData(Buffer.from(block.extraData.slice(2), 'hex'));
    t.deepEqual(extra.validators, [], 'contract-mode blocks list no validators');
    t.is(extra.vote, undefined);
    t.is(extra.seals.length, 1);
    t.is(block.miner, hex(VALIDATOR));

    t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['latest']), [hex(VALIDATOR)]);
    t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['0x0']), [hex(VALIDATOR)]);
    t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['pending']), [hex(VALIDATOR)]);
    t.deepEqual(await node.rpcError('qbft_proposeValidatorVote', [BENEFICIARY, true]), { code: -32604, message: 'Method not enabled' });
    t.deepEqual(await node.rpcError('qbft_getPendingVotes'), { code: -32604, message: 'Method not enabled' });

    // No transactions: the beneficiary holds exactly one reward per block; the validator nothing.
    const atBlock = '0x' + head.toString(16);
    t.is(BigInt(await node.rpc<string>('eth_getBalance', [BENEFICIARY, atBlock])), REWARD * BigInt(head));
    t.is(BigInt(await node.rpc<string>('eth_getBalance', [hex(VALIDATOR), atBlock])), 0n);
  } finally {
    t.is(await node.stop(), 0);
    removeDataPath(dataPath);
  }
});
