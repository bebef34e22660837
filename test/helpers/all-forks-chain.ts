/**
 * A chain that crosses every fork Basalt runs, as Ethereum mainnet did: Frontier at genesis, one
 * block-numbered fork per block from Homestead to Gray Glacier (mined blocks with block rewards),
 * the merge by terminal total difficulty, then Shanghai, Cancun, Prague, Osaka, BPO1 and BPO2 by
 * timestamp, two proof-of-stake blocks per fork from Cancun on.
 *
 * The blocks are made in this process by ethereumjs' block builder on the Common Basalt builds from
 * the genesis (src/shared/ethereum/common.ts), so the fork rules are the genesis' own: legacy
 * transactions (unprotected before EIP-155), access-list transactions from Berlin, fee-market ones
 * from London, blob transactions from Cancun filling each block to its fork's blob maximum,
 * set-code transactions and EIP-7002/EIP-7251 requests from Prague, withdrawals from Shanghai and a
 * parent beacon block root from Cancun. The system contracts come from the dev genesis.
 *
 * The builder is told where the merge is by a `mergeNetsplitBlock`; the chain's own genesis
 * (`genesisJson`) instead names the terminal total difficulty the mined blocks reach, as mainnet's
 * does. Proof-of-work seals are not real: an importer skips their validation.
 */
import type { Block } from '@ethereumjs/block';
import { RLP } from '@ethereumjs/rlp';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAccessList2930Tx, createBlob4844Tx, createEOACode7702Tx, createFeeMarket1559Tx, createLegacyTx } from '@ethereumjs/tx';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Address, bigIntToBytes, bytesToHex, createAddressFromPrivateKey, eoaCode7702SignAuthorization, hexToBytes, intToBytes, setLengthLeft } from '@ethereumjs/util';
import { buildBlock, createVM } from '@ethereumjs/vm';
import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { buildGenesis, writeGenesisState } from '../../src/shared/ethereum/common.js';
import { loadDevNetwork, parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';

export const CHAIN_ID = 7103n;
export const BLOCK_TIME = 10n;
export const GENESIS_DIFFICULTY = 0x20000n;
/** Block 1 is Frontier; each later block-numbered fork starts one block after the previous one. */
const BLOCK_FORKS = {
  homesteadBlock: 2,
  eip150Block: 3,
  eip155Block: 4,
  eip158Block: 4,
  byzantiumBlock: 5,
  constantinopleBlock: 6,
  petersburgBlock: 7,
  istanbulBlock: 8,
  muirGlacierBlock: 9,
  berlinBlock: 10,
  londonBlock: 11,
  arrowGlacierBlock: 12,
  grayGlacierBlock: 13,
};
/** The last mined block: the first proof-of-stake block follows it. */
export const TERMINAL_BLOCK = 13n;
/** Block n has timestamp n × 10: Shanghai from block 15, Cancun 16, Prague 18, Osaka 20, BPO1 22, BPO2 24. */
export const TIME_FORKS = { shanghaiTime: 150, cancunTime: 160, pragueTime: 180, osakaTime: 200, bpo1Time: 220, bpo2Time: 240 };
export const LAST_BLOCK = 25n;
/**
 * Small blob targets and fractions, so that full blocks move the excess blob gas and the blob base fee
 * fork by fork. BPO2 has no entry: it keeps BPO1's parameters (the genesis of the user report).
 */
export const BLOB_SCHEDULE = {
  cancun: { target: 1, max: 2, baseFeeUpdateFraction: 40_000 },
  prague: { target: 1, max: 3, baseFeeUpdateFraction: 50_000 },
  osaka: { target: 2, max: 3, baseFeeUpdateFraction: 60_000 },
  bpo1: { target: 2, max: 4, baseFeeUpdateFraction: 70_000 },
};

export const SENDER_KEY = hexToBytes(`0x${'a1'.repeat(32)}`);
export const SENDER = createAddressFromPrivateKey(SENDER_KEY);
/** Signs the EIP-7702 authorizations: its account delegates to the store contract. */
export const AUTHORITY_KEY = hexToBytes(`0x${'a2'.repeat(32)}`);
export const AUTHORITY = createAddressFromPrivateKey(AUTHORITY_KEY);
export const RECIPIENT = new Address(hexToBytes(`0x${'77'.repeat(20)}`));
export const WITHDRAWAL_RECIPIENT = new Address(hexToBytes(`0x${'57'.repeat(20)}`));
export const POW_COINBASE = new Address(hexToBytes(`0x${'c0'.repeat(20)}`));
export const POS_COINBASE = new Address(hexToBytes(`0x${'c1'.repeat(20)}`));
/** Gwei each withdrawal pays. */
export const WITHDRAWAL_GWEI = 1000n;
export const BEACON_ROOTS_ADDRESS = '0x000f3df6d732807ef1319fb7b8bb8522d0beac02';
export const HISTORY_ADDRESS = '0x0000f90827f1c53a10cb7a02335b175320002935';
export const WITHDRAWAL_REQUEST_ADDRESS = '0x00000961ef480eb55e80d19ad83579a64c007002';
export const CONSOLIDATION_REQUEST_ADDRESS = '0x0000bbddc7ce488642fb579f8b00f3a590007251';
const SYSTEM_CONTRACTS = [BEACON_ROOTS_ADDRESS, HISTORY_ADDRESS, WITHDRAWAL_REQUEST_ADDRESS, CONSOLIDATION_REQUEST_ADDRESS];

/** Runtime storing the first calldata word under the block number (no PUSH0: it must run on Frontier). */
const STORE_RUNTIME = '6000354355';
const STORE_DEPLOY = `0x6005600c60003960056000f3${STORE_RUNTIME}`;
export const STORE = new Address(keccak_256(RLP.encode([SENDER.bytes, new Uint8Array()])).subarray(12));

/** The genesis of the chain; `merge` is how it names the merge (the builder's netsplit block, or the TTD). */
function genesisJson(merge: Record<string, unknown>): string {
  const dev = loadDevNetwork().genesisJson as { alloc: Record<string, unknown> };
  const alloc: Record<string, unknown> = {
    [SENDER.toString().slice(2)]: { balance: '0xd3c21bcecceda1000000' },
    [AUTHORITY.toString().slice(2)]: { balance: '0x0' },
  };
  for (const address of SYSTEM_CONTRACTS) alloc[address.slice(2)] = dev.alloc[address.slice(2)];
  return JSON.stringify({
    config: { chainId: Number(CHAIN_ID), ...BLOCK_FORKS, ...merge, ...TIME_FORKS, blobSchedule: BLOB_SCHEDULE, ethash: {} },
    nonce: '0x42',
    timestamp: '0x0',
    gasLimit: '0x1c9c380',
    difficulty: `0x${GENESIS_DIFFICULTY.toString(16)}`,
    mixHash: `0x${'00'.repeat(32)}`,
    coinbase: `0x${'00'.repeat(20)}`,
    extraData: '0x',
    alloc,
  });
}

export interface AllForksChain {
  /** The chain's genesis: forks by block and time, `terminalTotalDifficulty` for the merge. */
  genesisJson: string;
  blocks: Block[];
  terminalTotalDifficulty: bigint;
}

const fakeVersionedHash = (n: bigint, i: number) => {
  const hash = sha256(new TextEncoder().encode(`blob ${n} ${i}`));
  hash[0] = 0x01;
  return hash;
};

/** Generates blocks 1..LAST_BLOCK (see the file comment). */
export async function generateAllForksChain(): Promise<AllForksChain> {
  const builderGenesis = parseGenesisJson(genesisJson({ mergeNetsplitBlock: Number(TERMINAL_BLOCK + 1n) }));
  const { common, block: genesisBlock } = await buildGenesis(builderGenesis);
  const vm = await createVM({ common: common.copy(), stateManager: new MerkleStateManager({ common }) });
  await writeGenesisState(vm.stateManager as MerkleStateManager, builderGenesis);
  const blocks: Block[] = [];
  let parent = genesisBlock;
  let nonce = 0n;
  let authorityNonce = 0n;
  let withdrawalIndex = 0n;
  for (let n = 1n; n <= LAST_BLOCK; n++) {
    const timestamp = n * BLOCK_TIME;
    vm.common.setHardforkBy({ blockNumber: n, timestamp });
    const fork = vm.common.hardfork();
    const active = (eip: number) => vm.common.isActivatedEIP(eip);
    const proofOfStake = vm.common.consensusType() === 'pos';
    const builder = await buildBlock(vm, {
      parentBlock: parent,
      headerData: {
        number: n,
        timestamp,
        // EIP-1559: the London block doubles the gas limit (its target is then the old limit).
        gasLimit: n === BigInt(BLOCK_FORKS.londonBlock) ? parent.header.gasLimit * 2n : parent.header.gasLimit,
        coinbase: proofOfStake ? POS_COINBASE : POW_COINBASE,
        // After the merge the mix hash is the beacon chain's randomness (PREVRANDAO).
        ...(proofOfStake ? { mixHash: keccak_256(Uint8Array.of(Number(n), 1)) } : {}),
        ...(active(4788) ? { parentBeaconBlockRoot: keccak_256(Uint8Array.of(Number(n), 2)) } : {}),
      },
      ...(active(4895) ? { withdrawals: [0, 1].map((i) => ({ index: withdrawalIndex++, validatorIndex: BigInt(i), address: WITHDRAWAL_RECIPIENT, amount: WITHDRAWAL_GWEI })) } : {}),
      blockOpts: { calcDifficultyFromHeader: parent.header, putBlockIntoBlockchain: false, skipConsensusFormatValidation: true },
    });
    const txCommon = txCommonFor(CHAIN_ID, fork);
    const fees = { maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n };
    const base = (to: Address | undefined, data = '0x', value = 0n, gasLimit = 300_000n) => ({ nonce: nonce++, gasLimit, to, value, data: hexToBytes(data as `0x${string}`) });
    const txs: TypedTransaction[] = [];
    // Legacy: the store contract's deployment, then a call writing the block's storage slot.
    if (n === 1n) txs.push(createLegacyTx({ ...base(undefined, STORE_DEPLOY), gasPrice: 10n ** 11n }, { common: txCommon }).sign(SENDER_KEY));
    else txs.push(createLegacyTx({ ...base(STORE, bytesToHex(setLengthLeft(bigIntToBytes(n), 32))), gasPrice: 10n ** 11n }, { common: txCommon }).sign(SENDER_KEY));
    if (active(2930)) {
      const accessList = [{ address: STORE.toString(), storageKeys: [bytesToHex(setLengthLeft(bigIntToBytes(n), 32))] }];
      txs.push(createAccessList2930Tx({ ...base(RECIPIENT, '0x', 1000n + n), chainId: CHAIN_ID, gasPrice: 10n ** 11n, accessList }, { common: txCommon }).sign(SENDER_KEY));
    }
    if (active(1559)) txs.push(createFeeMarket1559Tx({ ...base(RECIPIENT, '0x', 2000n + n), chainId: CHAIN_ID, ...fees }, { common: txCommon }).sign(SENDER_KEY));
    if (active(4844)) {
      const maxBlobs = Number(vm.common.getBlobGasSchedule().maxBlobGasPerBlock / vm.common.param('blobGasPerBlob'));
      const blobVersionedHashes = Array.from({ length: maxBlobs }, (_, i) => fakeVersionedHash(n, i));
      txs.push(createBlob4844Tx({ ...base(RECIPIENT, '0x', 3000n + n), chainId: CHAIN_ID, ...fees, maxFeePerBlobGas: 10n ** 12n, blobVersionedHashes }, { common: txCommon }).sign(SENDER_KEY));
    }
    if (active(7702) && (fork === 'prague' || fork === 'osaka') && parent.header.common.hardfork() !== fork) {
      // The first block of Prague and of Osaka: the authority delegates to the store contract.
      const authorization = eoaCode7702SignAuthorization({ chainId: bytesToHex(bigIntToBytes(CHAIN_ID)), address: STORE.toString(), nonce: bytesToHex(intToBytes(Number(authorityNonce++))) }, AUTHORITY_KEY);
      txs.push(createEOACode7702Tx({ ...base(AUTHORITY), chainId: CHAIN_ID, ...fees, authorizationList: [authorization] }, { common: txCommon }).sign(SENDER_KEY));
    }
    if (active(7685)) {
      // An EIP-7002 withdrawal request (pubkey, amount) and an EIP-7251 consolidation request (source, target), fee 1 wei each.
      const pubkey = (tag: number) => new Uint8Array(48).fill(tag);
      const withdrawal = bytesToHex(new Uint8Array([...pubkey(Number(n)), ...setLengthLeft(bigIntToBytes(n), 8)]));
      const consolidation = bytesToHex(new Uint8Array([...pubkey(Number(n)), ...pubkey(0xee)]));
      txs.push(createFeeMarket1559Tx({ ...base(new Address(hexToBytes(WITHDRAWAL_REQUEST_ADDRESS)), withdrawal, 1n), chainId: CHAIN_ID, ...fees }, { common: txCommon }).sign(SENDER_KEY));
      txs.push(createFeeMarket1559Tx({ ...base(new Address(hexToBytes(CONSOLIDATION_REQUEST_ADDRESS)), consolidation, 1n), chainId: CHAIN_ID, ...fees }, { common: txCommon }).sign(SENDER_KEY));
    }
    for (const tx of txs) {
      const result = await builder.addTransaction(tx, { allowNoBlobs: true });
      if (result.execResult.exceptionError) throw new Error(`block ${n} (${fork}): a type-${tx.type} transaction failed: ${result.execResult.exceptionError.error}`);
    }
    const { block } = await builder.build();
    blocks.push(block);
    parent = block;
  }
  const terminalTotalDifficulty = blocks.slice(0, Number(TERMINAL_BLOCK)).reduce((td, b) => td + b.header.difficulty, GENESIS_DIFFICULTY);
  return { genesisJson: genesisJson({ terminalTotalDifficulty: `0x${terminalTotalDifficulty.toString(16)}` }), blocks, terminalTotalDifficulty };
}
