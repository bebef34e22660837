/**
 * Per-block QBFT settings with timestamp-typed transitions (qbft-and-p2p.md §8 last bullet, Besu ≥
 * 26.3), the block timer's longer-of-two-periods rule (§5.1), rewards by the block's timestamp, and
 * the London gas-limit rule of the QBFT header rule set (§1 `gasLimit` row).
 */
import test from 'ava';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { Address } from '@ethereumjs/util';

import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import type { QbftConfig } from '../../src/shared/ethereum/genesis.js';
import { HeaderField, QbftBlock } from '../../src/shared/qbft/block.js';
import { qbftBlockRewardRules } from '../../src/shared/execution/qbft-block-rewards.js';
import { QbftController } from '../../src/consensus/controller.js';
import { encodeExtraData } from '../../src/shared/qbft/extra-data.js';
import { checkHeaderRules } from '../../src/shared/qbft/header-rules.js';
import type { HeaderRuleContext } from '../../src/shared/qbft/header-rules.js';
import { QbftSchedule } from '../../src/shared/qbft/schedule.js';
import { addressOf } from '../../src/shared/qbft/seal.js';
import { ValidatorTracker } from '../../src/shared/qbft/validators.js';
import { FakeChain, fakeGenesis } from '../harness/qbft-simulation/fake-chain.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');
const address = (n: number): Uint8Array => Uint8Array.from({ length: 20 }, (_, i) => (i === 19 ? n : 0));
const T0 = 1_700_000_000n;

const QBFT_CONFIG: QbftConfig = {
  blockPeriodSeconds: 2,
  epochLength: 30000,
  requestTimeoutSeconds: 1,
  emptyBlockPeriodSeconds: 0,
  blockPeriodMilliseconds: 0,
  blockReward: 0n,
  gossipedHistoryLimit: 1000,
  messageQueueLimit: 1000,
  duplicateMessageLimit: 100,
  futureMessagesLimit: 1000,
  futureMessagesMaxDistance: 10,
};

// ---------------------------------------------------------------------------------------------
// Timestamp-typed transitions
// ---------------------------------------------------------------------------------------------

test('with a timestamp fork, transition values from its timestamp on are block timestamps, smaller ones block numbers', (t) => {
  const beneficiary = address(0xbe);
  const schedule = new QbftSchedule(
    QBFT_CONFIG,
    [
      { block: 10n, blockReward: 5n },
      { block: T0 + 1000n, blockPeriodSeconds: 5, miningBeneficiary: beneficiary },
    ],
    { forkTimestamps: [T0 + 500n, T0 + 900n], genesisTimestamp: T0 },
  );
  t.is(schedule.timestampThreshold, T0 + 500n, 'the first timestamp fork');
  t.true(schedule.hasTimestampTransitions);
  // Block-number transition: by number, whatever the time.
  t.is(schedule.settingsFor(9n, T0 + 20n).blockReward, 0n);
  t.is(schedule.settingsFor(10n, T0 + 22n).blockReward, 5n);
  // Timestamp transition: a block number far below T0 + 1000 still gets it once its time has come.
  t.is(schedule.settingsFor(50n, T0 + 999n).blockPeriodSeconds, 2);
  t.is(schedule.settingsFor(50n, T0 + 1000n).blockPeriodSeconds, 5);
  t.is(schedule.settingsFor(50n, T0 + 1000n).blockReward, 5n, 'cumulative over the earlier transition');
  t.is(hex(schedule.beneficiaryFor({ number: 50n, timestamp: T0 + 999n }, address(1))), hex(address(1)));
  t.is(hex(schedule.beneficiaryFor({ number: 50n, timestamp: T0 + 1000n }, address(1))), hex(beneficiary));
  // Without the block's timestamp a timestamp schedule cannot answer.
  t.throws(() => schedule.settingsFor(50n), { message: /timestamp is needed/ });
});

test('without timestamp forks, or with all of them at genesis and a zero genesis time, every transition is a block number', (t) => {
  const transitions = [{ block: 100n, blockPeriodSeconds: 7 }, { block: T0 + 10n, blockPeriodSeconds: 9 }];
  for (const forks of [{}, { forkTimestamps: [0n], genesisTimestamp: 0n }]) {
    const schedule = new QbftSchedule(QBFT_CONFIG, transitions, forks);
    t.is(schedule.timestampThreshold, undefined);
    t.false(schedule.hasTimestampTransitions);
    t.is(schedule.settingsFor(100n).blockPeriodSeconds, 7);
    t.is(schedule.settingsFor(1000n, T0 + 50n).blockPeriodSeconds, 7, 'T0+10 is a (far) block number');
  }
  // shanghaiTime 0 on a chain with a real genesis time: small values stay block numbers, unix times are times.
  const schedule = new QbftSchedule(QBFT_CONFIG, transitions, { forkTimestamps: [0n], genesisTimestamp: T0 });
  t.is(schedule.timestampThreshold, T0);
  t.is(schedule.settingsFor(100n, T0 + 1n).blockPeriodSeconds, 7);
  t.is(schedule.settingsFor(101n, T0 + 10n).blockPeriodSeconds, 9);
});

test('a validators override in a timestamp transition is refused at startup', (t) => {
  t.throws(() => new QbftSchedule(QBFT_CONFIG, [{ block: T0 + 10n, validators: [address(1)] }], { forkTimestamps: [T0], genesisTimestamp: T0 }), {
    message: /needs a block-number transition/,
  });
});

test('the genesis file wires fork timestamps and londonBlock into the schedule', (t) => {
  const genesis = parseGenesisJson(
    JSON.stringify({
      config: {
        chainId: 1337,
        berlinBlock: 0,
        londonBlock: 12,
        shanghaiTime: Number(T0 + 3600n),
        qbft: { blockperiodseconds: 2 },
        transitions: { qbft: [{ block: 5, blockperiodseconds: 3 }, { block: Number(T0 + 7200n), blockperiodseconds: 4 }] },
      },
      timestamp: '0x' + T0.toString(16),
      gasLimit: '0x1c9c380',
      difficulty: '0x1',
      extraData: '0x',
      alloc: {},
    }),
  );
  const schedule = QbftSchedule.fromGenesis(genesis);
  t.is(schedule.londonBlock, 12n);
  t.is(schedule.timestampThreshold, T0 + 3600n);
  t.is(schedule.settingsFor(5n, T0 + 10n).blockPeriodSeconds, 3);
  t.is(schedule.settingsFor(6n, T0 + 7199n).blockPeriodSeconds, 3);
  t.is(schedule.settingsFor(6n, T0 + 7200n).blockPeriodSeconds, 4);
});

test('block timer: the longer of the period at the parent and the period a period later (§5.1)', async (t) => {
  const forks = { forkTimestamps: [T0], genesisTimestamp: T0 };
  const longer = new QbftSchedule(QBFT_CONFIG, [{ block: T0 + 100n, blockPeriodSeconds: 10 }], forks);
  t.is(longer.blockPeriodAfter({ number: 7n, timestamp: T0 + 97n }), 2, 'T0+99 is still before the transition');
  t.is(longer.blockPeriodAfter({ number: 7n, timestamp: T0 + 98n }), 10, 'T0+100 is at it: the longer period already');
  t.is(longer.blockPeriodAfter({ number: 7n, timestamp: T0 + 100n }), 10);
  const shorter = new QbftSchedule({ ...QBFT_CONFIG, blockPeriodSeconds: 5 }, [{ block: T0 + 100n, blockPeriodSeconds: 1 }], forks);
  t.is(shorter.blockPeriodAfter({ number: 7n, timestamp: T0 + 96n }), 5, 'a shorter period waits for the parent to be past it');
  t.is(shorter.blockPeriodAfter({ number: 7n, timestamp: T0 + 100n }), 1);

  // The state machine arms its block timer with it.
  const key = keccak_256(Uint8Array.of(1));
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators: [addressOf(key)] }));
  const schedule = new QbftSchedule(QBFT_CONFIG, [{ block: T0 + 1n, blockPeriodSeconds: 10 }], forks);
  const context = await new ValidatorTracker(schedule, chain).heightContext(chain.headInfo());
  t.is(context.settings.blockPeriodSeconds, 10);
  const controller = new QbftController({ nodeKey: key, vanity: new Uint8Array(32), requestTimeoutSeconds: 1, duplicateMessageLimit: 100, futureMessagesLimit: 1000, futureMessagesMaxDistance: 10 });
  const actions = controller.handle({ kind: 'newHeight', context }, Number(T0) * 1000);
  t.deepEqual(actions, [{ kind: 'setTimer', timer: { slot: 'block', height: 1n }, atMs: Number(T0 + 10n) * 1000 }]);
});

test('a timestamp transition to contract mode: the next height reads the contract once its time is reached', async (t) => {
  const contract = address(0x88);
  const validators = [address(1), address(2)];
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators, contractValidators: [address(3)] }), [contract]);
  const schedule = new QbftSchedule(QBFT_CONFIG, [{ block: T0 + 2n, validatorSelectionMode: 'contract', validatorContractAddress: contract }], {
    forkTimestamps: [T0],
    genesisTimestamp: T0,
  });
  const tracker = new ValidatorTracker(schedule, chain);
  // Genesis at T0, period 2: block 1 is at T0+2 at the earliest, in contract mode.
  const context = await tracker.heightContext(chain.headInfo());
  t.is(context.settings.validatorSelectionMode, 'contract');
  t.deepEqual(context.validators.map(hex), [hex(address(3))]);
  t.deepEqual((await tracker.validatorsFor(1n, T0 + 1n)).map(hex), validators.map(hex), 'a block 1 at T0+1 would still be in block-header mode');
  t.deepEqual((await tracker.validatorsAfter({ number: 0n, timestamp: T0 })).map(hex), [hex(address(3))]);
});

test('block rewards and beneficiary follow the block\'s timestamp when transitions are by time', async (t) => {
  const beneficiary = address(0xbe);
  const schedule = new QbftSchedule(QBFT_CONFIG, [{ block: T0 + 60n, blockReward: 1000n, miningBeneficiary: beneficiary }], {
    forkTimestamps: [T0],
    genesisTimestamp: T0,
  });
  const rules = qbftBlockRewardRules(schedule)!;
  t.truthy(rules);
  const coinbase = address(1);
  t.is(hex(rules.executionCoinbase(30n, T0 + 59n, coinbase)), hex(coinbase));
  t.is(hex(rules.executionCoinbase(30n, T0 + 60n, coinbase)), hex(beneficiary));
  const stateManager = new MerkleStateManager();
  await rules.finalizeBlockState(stateManager, { number: 30n, timestamp: T0 + 59n, coinbase });
  t.is(await stateManager.getAccount(new Address(coinbase)), undefined, 'no reward before the transition: the account is not touched');
  await rules.finalizeBlockState(stateManager, { number: 31n, timestamp: T0 + 61n, coinbase });
  t.is((await stateManager.getAccount(new Address(beneficiary)))?.balance, 1000n);
});

// ---------------------------------------------------------------------------------------------
// London gas-limit rule
// ---------------------------------------------------------------------------------------------

function scalar(value: bigint): Uint8Array {
  if (value === 0n) return new Uint8Array(0);
  let text = value.toString(16);
  if (text.length % 2) text = '0' + text;
  return Uint8Array.from(Buffer.from(text, 'hex'));
}

test('gas limit: moves by less than parent/1024; at the London block the reference is twice the parent\'s limit', async (t) => {
  const key = keccak_256(Uint8Array.of(1));
  const validators = [addressOf(key)];
  const chain = new FakeChain(fakeGenesis({ timestamp: T0, validators }));
  const template = chain.build(
    {
      request: 0,
      height: 1n,
      round: 0,
      parentHash: chain.head.hash(),
      timestamp: T0 + 1n,
      coinbase: validators[0]!,
      extraData: encodeExtraData({ vanity: new Uint8Array(32), validators, round: 0, seals: [] }),
    },
    [],
  );
  const parentGasLimit = 10_240_000n;
  const parentHash = keccak_256(Uint8Array.of(4));
  /** A header at `number` on a parent at number-1 with `parentGasLimit`. */
  const at = (number: bigint, gasLimit: bigint) => {
    const [header, ...body] = template.values() as [Uint8Array[], ...Uint8Array[][]];
    const fields = [...header];
    fields[HeaderField.parentHash] = parentHash;
    fields[HeaderField.number] = scalar(number);
    fields[HeaderField.gasLimit] = scalar(gasLimit);
    const block = QbftBlock.fromValues([fields, ...body]);
    const rules: HeaderRuleContext = {
      parent: { number: number - 1n, hash: parentHash, timestamp: T0, gasLimit: parentGasLimit },
      validators,
      mode: 'blockheader',
      blockPeriodSeconds: 1,
      blockPeriodMilliseconds: 0,
      nowMs: Number(T0) * 1000 + 1000,
      londonBlock: 5n,
    };
    return checkHeaderRules(block, rules, false);
  };
  const bound = parentGasLimit / 1024n; // 10 000
  // Before London: the plain rule, strict.
  t.is(at(4n, parentGasLimit), undefined);
  t.is(at(4n, parentGasLimit + bound - 1n), undefined);
  t.regex(at(4n, parentGasLimit + bound)!, /gas limit moved/);
  t.regex(at(4n, parentGasLimit - bound)!, /gas limit moved/);
  t.regex(at(4n, parentGasLimit * 2n)!, /gas limit moved/);
  // The London block: the reference is 2 × parent, the bound 2 × parent / 1024.
  t.is(at(5n, parentGasLimit * 2n), undefined);
  t.is(at(5n, parentGasLimit * 2n + 2n * bound - 1n), undefined);
  t.is(at(5n, parentGasLimit * 2n - 2n * bound + 1n), undefined);
  t.regex(at(5n, parentGasLimit * 2n + 2n * bound)!, /gas limit moved/);
  t.regex(at(5n, parentGasLimit)!, /gas limit moved/, 'copying the parent\'s limit at the London block is refused');
  // After it: plain again.
  t.is(at(6n, parentGasLimit), undefined);
  t.regex(at(6n, parentGasLimit * 2n)!, /gas limit moved/);
});
