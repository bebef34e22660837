/**
 * QBFT on a real single-validator dev node: the qbft_* methods, a validator vote cast through
 * JSON-RPC, and what happens once the validator it adds is offline (the chain stops cleanly: no
 * crash, no fork, JSON-RPC keeps answering, SIGTERM still exits 0).
 */
import test from 'ava';
import { decodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { addressOf } from '../../src/shared/qbft/seal.js';
import { loadDevNetwork } from '../../src/shared/ethereum/genesis.js';
import { removeDataPath, startNode, tempDataPath, waitFor } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const DEV_VALIDATOR = hex(addressOf(loadDevNetwork().validatorKey));
/** The validator the vote adds: nobody runs it. */
const OFFLINE_VALIDATOR = '0x00000000000000000000000000000000000000aa';

interface RpcBlock {
  number: string;
  hash: string;
  miner: string;
  extraData: string;
}

let node: NodeProcess;
const dataPath = tempDataPath();

test.before(async () => {
  node = await startNode({ dataPath, args: ['--rpc-http-api=ETH,NET,WEB3,QBFT'] });
});

test.after.always(async () => {
  await node?.kill();
  removeDataPath(dataPath);
});

const rpcError = (method: string, params: unknown[]) => node.rpcError(method, params);

async function headNumber(): Promise<number> {
  return Number(await node.rpc<string>('eth_blockNumber'));
}

const waitForHead = (atLeast: number, timeoutMs: number) => waitFor(`head ${atLeast}`, headNumber, (head) => head >= atLeast, timeoutMs);

test.serial('qbft_* answer Besu shapes on the sole-validator dev node', async (t) => {
  await waitForHead(3, 15_000);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['latest']), [DEV_VALIDATOR]);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['0x1']), [DEV_VALIDATOR]);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['pending']), [DEV_VALIDATOR]);
  t.is(await node.rpc('qbft_getValidatorsByBlockNumber', ['0xffffff']), null);
  const block1 = await node.rpc<RpcBlock>('eth_getBlockByNumber', ['0x1', false]);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockHash', [block1.hash]), [DEV_VALIDATOR]);
  t.is(await node.rpc('qbft_getValidatorsByBlockHash', ['0x' + '11'.repeat(32)]), null);
  // A plain JSON number, not a quantity.
  t.is(await node.rpc('qbft_getRequestTimeoutSeconds'), 4);
  t.deepEqual(await node.rpc('qbft_getPendingVotes'), {});

  const metrics = await node.rpc<{ address: string; proposedBlockCount: string; lastProposedBlockNumber: string }[]>('qbft_getSignerMetrics', ['0x1', '0x3']);
  // [1, 3): blocks 1 and 2, both by the dev validator.
  t.deepEqual(metrics, [{ address: DEV_VALIDATOR, proposedBlockCount: '0x2', lastProposedBlockNumber: '0x2' }]);

  t.deepEqual(await rpcError('qbft_proposeValidatorVote', ['not-an-address', true]), { code: -32602, message: 'Invalid address params' });
  t.deepEqual(await rpcError('qbft_proposeValidatorVote', [OFFLINE_VALIDATOR]), { code: -32602, message: 'Invalid vote type params' });
  t.deepEqual(await rpcError('qbft_proposeValidatorVote', [OFFLINE_VALIDATOR, 'yes']), { code: -32602, message: 'Invalid vote type params' });
  t.deepEqual(await rpcError('qbft_discardValidatorVote', []), { code: -32602, message: 'Invalid address params' });
  t.deepEqual(await rpcError('qbft_getSignerMetrics', ['0x3', '0x1']), { code: -32602, message: 'Invalid block number params' });
  t.deepEqual(await rpcError('qbft_getValidatorsByBlockNumber', ['finalized']), { code: -39001, message: 'Unknown block' });
  t.deepEqual(await rpcError('qbft_getValidatorsByBlockHash', ['0x12']), { code: -32602, message: 'Invalid block hash params' });

  // A drop vote for a non-validator would change nothing, so it is never cast: safe to store and discard.
  t.true(await node.rpc('qbft_proposeValidatorVote', ['0x00000000000000000000000000000000000000bb', false]));
  t.deepEqual(await node.rpc('qbft_getPendingVotes'), { '0x00000000000000000000000000000000000000bb': false });
  t.true(await node.rpc('qbft_discardValidatorVote', ['0x00000000000000000000000000000000000000bb']));
  t.deepEqual(await node.rpc('qbft_getPendingVotes'), {});
});

test.serial('a vote to add a validator lands in the next block, the set grows, and the chain then halts cleanly', async (t) => {
  const before = await headNumber();
  t.true(await node.rpc('qbft_proposeValidatorVote', [OFFLINE_VALIDATOR, true]));
  t.deepEqual(await node.rpc('qbft_getPendingVotes'), { [OFFLINE_VALIDATOR]: true });

  // Find the first block after the vote with a vote in it.
  let voteBlock: RpcBlock | undefined;
  const deadline = Date.now() + 15_000;
  for (let n = before + 1; !voteBlock; ) {
    if (Date.now() > deadline) return t.fail('no block carried the vote');
    const block = await node.rpc<RpcBlock | null>('eth_getBlockByNumber', ['0x' + n.toString(16), false]);
    if (!block) {
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const vote = decodeExtraData(Buffer.from(block.extraData.slice(2), 'hex')).vote;
    if (vote) voteBlock = block;
    else n += 1;
  }
  const voteNumber = Number(voteBlock.number);
  t.log(`vote proposed at head ${before}, cast in block ${voteNumber}`);
  // The next block built after the call (the one being built at that moment may already be sealed).
  t.true(voteNumber === before + 1 || voteNumber === before + 2, `vote cast in block ${voteNumber}, head was ${before}`);
  const vote = decodeExtraData(Buffer.from(voteBlock.extraData.slice(2), 'hex')).vote!;
  t.is(hex(vote.recipient), OFFLINE_VALIDATOR);
  t.true(vote.add);
  t.is(voteBlock.miner, DEV_VALIDATOR);

  // The block that carries the vote was signed by the old set; the set after it has both.
  const grown = [OFFLINE_VALIDATOR, DEV_VALIDATOR].sort();
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', [voteBlock.number]), [DEV_VALIDATOR]);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockHash', [voteBlock.hash]), [DEV_VALIDATOR]);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['pending']), grown);
  // Besu keeps a local proposal until it is discarded.
  t.deepEqual(await node.rpc('qbft_getPendingVotes'), { [OFFLINE_VALIDATOR]: true });

  // Two validators need two commits: with the new one offline nothing more is finalised. Round 0 of
  // the next block times out (4 s), and only then is the head read.
  await node.waitForLog(new RegExp(`QBFT round change: block ${voteNumber + 1} round 1 \\(timeout 8 s\\)`), { timeoutMs: 15_000 });
  t.is(await headNumber(), voteNumber);
  t.is(node.process.exitCode, null);
  const again = await node.rpc<RpcBlock>('eth_getBlockByNumber', [voteBlock.number, false]);
  t.is(again.hash, voteBlock.hash);
  t.is(await node.rpc('eth_getBlockByNumber', ['0x' + (voteNumber + 1).toString(16), false]), null);
  t.deepEqual(await node.rpc('qbft_getValidatorsByBlockNumber', ['latest']), [DEV_VALIDATOR]);
  t.regex(node.output(), /one of 2 validators/);
  t.notRegex(node.output(), /actor exited|Failed|uncaught/i);

  const code = await node.stop();
  t.is(code, 0);
});
