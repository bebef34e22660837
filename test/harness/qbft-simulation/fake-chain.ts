/**
 * An in-memory chain for the QBFT simulation: real QBFT headers (so hashing, seals and header rules
 * are the production code) around a fake payload instead of EVM transactions.
 *
 * "Execution" folds each payload into the parent's state root with keccak, so a block whose state
 * root or transaction root does not follow from its parent is refused exactly where a real chain
 * would refuse it. A payload starting with 0x01 sets the list the fake validator contract returns.
 */
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';

import { HeaderField, QbftBlock } from '../../../src/shared/qbft/block.js';
import type { BuildBlockRequest, ParentInfo } from '../../../src/consensus/core-types.js';
import { genesisExtraData } from '../../../src/shared/qbft/extra-data.js';
import { EMPTY_LIST_HASH, QBFT_MIX_HASH, bytesEqual } from '../../../src/shared/qbft/header-rules.js';
import type { HeaderSummary, ValidatorChainView } from '../../../src/shared/qbft/validators.js';
import { GET_VALIDATORS_CALL } from '../../../src/shared/qbft/validators.js';

/** Payload op: the rest of the payload is a list of 20-byte addresses for the validator contract. */
export const SET_CONTRACT_VALIDATORS = 0x01;

const EMPTY_TRIE_ROOT = Uint8Array.from(Buffer.from('56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421', 'hex'));

export interface FakeState {
  root: Uint8Array;
  contractValidators: Uint8Array[];
}

export interface FakeGenesisOptions {
  timestamp: bigint;
  /** Genesis extraData validators (empty for a contract-mode genesis). */
  validators: Uint8Array[];
  gasLimit?: bigint;
  /** What the fake validator contract returns at genesis. */
  contractValidators?: Uint8Array[];
}

function scalar(value: bigint): Uint8Array {
  if (value === 0n) return new Uint8Array(0);
  let hex = value.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function header(fields: {
  parentHash: Uint8Array;
  coinbase: Uint8Array;
  stateRoot: Uint8Array;
  transactionsRoot: Uint8Array;
  number: bigint;
  gasLimit: bigint;
  timestamp: bigint;
  extraData: Uint8Array;
}): Uint8Array[] {
  return [
    fields.parentHash,
    EMPTY_LIST_HASH,
    fields.coinbase,
    fields.stateRoot,
    fields.transactionsRoot,
    EMPTY_TRIE_ROOT,
    new Uint8Array(256),
    scalar(1n),
    scalar(fields.number),
    scalar(fields.gasLimit),
    scalar(0n),
    scalar(fields.timestamp),
    fields.extraData,
    QBFT_MIX_HASH,
    new Uint8Array(8),
  ];
}

function transactionsRoot(transactions: Uint8Array[]): Uint8Array {
  return keccak_256(RLP.encode(transactions));
}

function applyPayload(state: FakeState, transactions: Uint8Array[]): FakeState {
  let { root, contractValidators } = state;
  for (const tx of transactions) {
    root = keccak_256(concat(root, tx));
    if (tx[0] === SET_CONTRACT_VALIDATORS) {
      contractValidators = [];
      for (let i = 1; i + 20 <= tx.length; i += 20) contractValidators.push(tx.slice(i, i + 20));
    }
  }
  return { root, contractValidators };
}

export function fakeGenesis(options: FakeGenesisOptions): { block: QbftBlock; state: FakeState } {
  const state: FakeState = { root: keccak_256(new TextEncoder().encode('genesis')), contractValidators: options.contractValidators ?? [] };
  const values = header({
    parentHash: new Uint8Array(32),
    coinbase: new Uint8Array(20),
    stateRoot: state.root,
    transactionsRoot: transactionsRoot([]),
    number: 0n,
    gasLimit: options.gasLimit ?? 30_000_000n,
    timestamp: options.timestamp,
    extraData: genesisExtraData(options.validators),
  });
  return { block: QbftBlock.fromValues([values, [], []]), state };
}

/** ABI encoding of an `address[]` return value. */
export function encodeAddressArray(addresses: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(64 + 32 * addresses.length);
  out[31] = 0x20;
  out.set(scalar(BigInt(addresses.length)), 64 - scalar(BigInt(addresses.length)).length);
  addresses.forEach((a, i) => out.set(a, 64 + 32 * i + 12));
  return out;
}

export class FakeChain implements ValidatorChainView {
  private readonly blocks: QbftBlock[] = [];
  private readonly states: FakeState[] = [];

  constructor(
    genesis: { block: QbftBlock; state: FakeState },
    /** Addresses of the fake validator contract (calls to any other address return nothing). */
    private readonly contractAddresses: readonly Uint8Array[] = [],
  ) {
    this.blocks.push(genesis.block);
    this.states.push(genesis.state);
  }

  get head(): QbftBlock {
    return this.blocks[this.blocks.length - 1]!;
  }

  get headNumber(): bigint {
    return BigInt(this.blocks.length - 1);
  }

  blockAt(number: bigint): QbftBlock | undefined {
    return number < 0n ? undefined : this.blocks[Number(number)];
  }

  headInfo(): ParentInfo {
    const head = this.head;
    return {
      number: head.number,
      hash: head.hash(),
      timestamp: head.timestamp,
      coinbase: head.coinbase,
      gasLimit: head.scalar(HeaderField.gasLimit),
    };
  }

  /** Builds a block on the head, as the chain actor does for a real node. */
  build(request: BuildBlockRequest, transactions: Uint8Array[]): QbftBlock {
    const parent = this.head;
    if (!bytesEqual(request.parentHash, parent.hash())) throw new Error('build request is not on the head');
    const state = applyPayload(this.states[this.states.length - 1]!, transactions);
    const values = header({
      parentHash: parent.hash(),
      coinbase: request.coinbase,
      stateRoot: state.root,
      transactionsRoot: transactionsRoot(transactions),
      number: parent.number + 1n,
      gasLimit: parent.scalar(HeaderField.gasLimit),
      timestamp: request.timestamp,
      extraData: request.extraData,
    });
    return QbftBlock.fromValues([values, transactions, []]);
  }

  /** Re-executes a block on its parent's state; returns the state, or why it does not follow. */
  execute(block: QbftBlock): { state?: FakeState; reason?: string } {
    const parent = this.blockAt(block.number - 1n);
    if (!parent || !bytesEqual(parent.hash(), block.parentHash)) return { reason: 'unknown parent' };
    const transactions = block.body[0];
    if (!Array.isArray(transactions) || !transactions.every((t) => t instanceof Uint8Array)) return { reason: 'malformed payload' };
    const txs = transactions as Uint8Array[];
    if (!bytesEqual(transactionsRoot(txs), block.field(HeaderField.transactionsRoot))) return { reason: 'transactions root mismatch' };
    const state = applyPayload(this.states[Number(block.number - 1n)]!, txs);
    if (!bytesEqual(state.root, block.field(HeaderField.stateRoot))) return { reason: 'state root mismatch' };
    return { state };
  }

  /** Appends a block that extends the head and executes correctly (header rules are the caller's). */
  append(block: QbftBlock): void {
    if (block.number !== this.headNumber + 1n || !bytesEqual(block.parentHash, this.head.hash())) {
      throw new Error(`block ${block.number} does not extend head ${this.headNumber}`);
    }
    const { state, reason } = this.execute(block);
    if (!state) throw new Error(`block ${block.number} does not execute: ${reason}`);
    this.blocks.push(block);
    this.states.push(state);
  }

  async headers(from: bigint, to: bigint): Promise<HeaderSummary[]> {
    const result: HeaderSummary[] = [];
    for (let n = from; n <= to && n <= this.headNumber; n++) {
      const block = this.blocks[Number(n)]!;
      result.push({
        number: block.number,
        hash: block.hash(),
        coinbase: block.coinbase,
        extraData: block.field(HeaderField.extraData),
        timestamp: block.timestamp,
        gasLimit: block.scalar(HeaderField.gasLimit),
      });
    }
    return result;
  }

  async callContract(blockNumber: bigint, contract: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
    const state = this.states[Number(blockNumber)];
    if (!state) throw new Error(`no state for block ${blockNumber}`);
    if (!this.contractAddresses.some((a) => bytesEqual(a, contract)) || !bytesEqual(data, GET_VALIDATORS_CALL)) {
      return new Uint8Array(0);
    }
    return encodeAddressArray(state.contractValidators);
  }
}
