/** eth_config (EIP-7910) built from a fork schedule: current / next / last, per-fork contents. */
import test from 'ava';
import { crc32 } from 'node:zlib';
import { ethConfig } from '../../src/chain/fork-config.js';

const genesisHash = new Uint8Array(32).fill(7);
type ForkConfig = { activationTime: number | null; blobSchedule?: { max: number }; forkId: string; precompiles: Record<string, string>; systemContracts?: Record<string, string> };

const schedule = [
  { name: 'chainstart', block: 0 },
  { name: 'homestead', block: 0 },
  { name: 'byzantium', block: 0 },
  { name: 'istanbul', block: 0 },
  { name: 'berlin', block: 0 },
  { name: 'london', block: 5 },
  { name: 'shanghai', block: null, timestamp: 1000 },
  { name: 'cancun', block: null, timestamp: 2000 },
  { name: 'prague', block: null, timestamp: 3000 },
];

const context = (headFork: string) => ({
  schedule,
  chainId: 1337n,
  genesisHash,
  genesisTimestamp: 0n,
  headFork,
  blobSchedule: (hardfork: string) =>
    ({ cancun: { target: 3, max: 6, baseFeeUpdateFraction: 3338477 }, prague: { target: 6, max: 9, baseFeeUpdateFraction: 5007716 } })[hardfork as 'cancun'],
  blockTimestamp: async (n: bigint) => (n <= 10n ? 100n + n : undefined),
});

const forkHash = (...activations: bigint[]) => {
  let checksum = crc32(genesisHash);
  for (const a of activations) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(a);
    checksum = crc32(b, checksum);
  }
  return `0x${(checksum >>> 0).toString(16).padStart(8, '0')}`;
};

test('head at London: next is Shanghai, last is Prague', async (t) => {
  const config = (await ethConfig(context('london'))) as { current: ForkConfig; next: ForkConfig; last: ForkConfig };
  t.is(config.current.activationTime, 105, 'a block-numbered fork reports its block\'s timestamp');
  t.is(config.current.forkId, forkHash(5n));
  t.is(config.current.blobSchedule, undefined);
  t.is(config.current.systemContracts, undefined);
  t.is(Object.keys(config.current.precompiles).length, 9, 'through BLAKE2F');
  t.is(config.next.activationTime, 1000);
  t.is(config.next.forkId, forkHash(5n, 1000n));
  t.is(config.last.activationTime, 3000);
  t.is(config.last.forkId, forkHash(5n, 1000n, 2000n, 3000n));
  t.is(config.last.blobSchedule?.max, 9, 'Prague blob schedule');
  t.truthy(config.last.systemContracts?.HISTORY_STORAGE_ADDRESS);
  t.is(config.last.precompiles.BLS12_G1ADD, '0x000000000000000000000000000000000000000b');
});

test('head at the last fork: next and last are null', async (t) => {
  const config = (await ethConfig(context('prague'))) as { current: ForkConfig; next: null; last: null };
  t.is(config.next, null);
  t.is(config.last, null);
  t.is(config.current.activationTime, 3000);
});

test('everything at genesis: activation 0 and the bare genesis fork hash', async (t) => {
  const config = (await ethConfig({ ...context('cancun'), schedule: schedule.slice(0, 5).concat([{ name: 'london', block: 0 }, { name: 'shanghai', block: null, timestamp: 0 }, { name: 'cancun', block: null, timestamp: 0 }]) })) as {
    current: ForkConfig;
    next: null;
  };
  t.is(config.current.activationTime, 0);
  t.is(config.current.forkId, forkHash());
  t.is(config.current.blobSchedule?.max, 6);
  t.is(config.next, null);
});
