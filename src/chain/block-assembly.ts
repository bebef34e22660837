/**
 * A block being put together on the building state: opened on the head with the time and coinbase
 * of the block to come, fed pool transactions in one or more rounds, then sealed into a block.
 *
 * Feeding in rounds lets a proposer execute transactions while they arrive, before its block timer
 * fires (`Chain.prebuild`); at the timer only the late arrivals and the state root are left to do.
 * One assembly is open at a time, inside one journal checkpoint of the building VM: abandoning it
 * reverts everything it executed.
 */
import type { Block, BlockHeader, HeaderData } from '@ethereumjs/block';
import type { TypedTransaction } from '@ethereumjs/tx';
import { isBlob4844Tx } from '@ethereumjs/tx';
import { KECCAK256_RLP, bytesToHex, equalsBytes } from '@ethereumjs/util';
import { EVMError } from '@ethereumjs/evm';
import { Bloom } from '@ethereumjs/vm';
import type { RunTxResult, VM } from '@ethereumjs/vm';
import type { AccountSnapshot, PoolTxForBlock, RejectedTx } from '../shared/actors/messages.js';
import type { ChainOptions } from '../shared/actors/worker-data.js';
import type { ChainSpec } from '../shared/execution/chain-spec.js';
import { collectRequests, runPreTransactionSystemCalls } from '../shared/execution/system-calls.js';
import { txCommonFor } from '../shared/ethereum/tx-common.js';
import { orderedTrieRoot } from '../shared/ethereum/ordered-trie.js';
import { encodeConsensusReceipt } from '../shared/ethereum/consensus-receipt.js';
import { effectiveGasPrice } from '../shared/ethereum/fees.js';
import type { StoredReceipt } from '../shared/ethereum/chain-records.js';
import { pinKnown } from './block-validation.js';
import { pooledTransaction } from './pooled-transaction.js';
import { encodeBlock, transactionItems } from './block-encoding.js';
import { firstLine } from './import-rules.js';
import { senderAccounts, sendersOf } from './account-snapshot.js';
import { runBlockTransaction } from './block-execution.js';

/**
 * How long execution runs before it lets other messages through. Ahead of the timer, transactions are
 * still arriving: the pool's account lookups must not stall admission. At the timer the block comes
 * first: reads wait up to this long, and a client polling for its receipts costs the chain less (the
 * last 1,000 of 2,000 ERC-20 transfers: 1,388–1,555 included per second with 10 ms, 1,477–1,521 with 50).
 */
export const YIELD_AHEAD_MS = 10;
export const YIELD_AT_TIMER_MS = 50;

/**
 * Bytes of an encoded block besides its transactions, kept free under EIP-7934's size limit: the
 * header (about 700 bytes with every post-Prague field), list prefixes and an empty withdrawals list.
 */
const BLOCK_SIZE_RESERVE = 4096;

export interface BuiltBlock {
  block: Block;
  /** `block.serialize()`, made from the transactions' bytes. */
  rlp: Uint8Array;
  /** The transactions' block-body items (block-encoding.ts), to encode the block again once sealed. */
  txItems: Uint8Array[];
  /** The header fields the block was made from, so sealing can remake it with new extraData. */
  headerData: HeaderData;
  hash: Uint8Array;
  receipts: StoredReceipt[];
  /** Candidates that could not be included, and why. */
  rejected: RejectedTx[];
  /** How many of its transactions were executed before the build that finished it (`Chain.prebuild`). */
  executedAhead: number;
  /** Each sender's account after the block (for the pool), unless the block has too many senders. */
  senderAccounts?: [string, AccountSnapshot][];
}

/** What the block to come is, apart from its transactions and extraData. */
export interface AssemblyTarget {
  parentHash: Uint8Array;
  parent: BlockHeader;
  timestamp: bigint;
  coinbase: Uint8Array;
  gasLimit: bigint;
}

export class BlockAssembly {
  private readonly included: TypedTransaction[] = [];
  private readonly includedBytes: Uint8Array[] = [];
  /** Execution results of the included transactions: the EIP-6110 deposits are read from their logs. */
  private readonly results: RunTxResult[] = [];
  private readonly receipts: StoredReceipt[] = [];
  private readonly consensusReceipts: Uint8Array[] = [];
  private readonly rejected: RejectedTx[] = [];
  /** Hashes (hex) of every candidate already included or left out: a later round skips them. */
  private readonly tried = new Set<string>();
  /**
   * A sender with a candidate left out of this block cannot run its later nonces in it: they are
   * skipped without being tried (tried, they would only fail on their nonce).
   */
  private readonly blockedSenders = new Set<string>();
  private readonly bloom: Bloom;
  private gasUsed = 0n;
  private blobGasUsed = 0n;
  private bodyBytes = 0;
  private closed = false;

  private constructor(
    private readonly vm: VM,
    private readonly spec: ChainSpec,
    private readonly options: ChainOptions,
    readonly target: AssemblyTarget,
    private readonly headerData: HeaderData,
    private readonly envBlock: Block,
  ) {
    this.bloom = new Bloom(undefined, vm.common);
  }

  /**
   * Opens a block on `target.parent`, whose state the building VM must hold: a journal checkpoint,
   * then the system calls that run before the first transaction.
   */
  static async open(vm: VM, spec: ChainSpec, options: ChainOptions, target: AssemblyTarget): Promise<BlockAssembly> {
    const { parent, parentHash, timestamp, coinbase } = target;
    const common = vm.common;
    common.setHardforkBy({ blockNumber: parent.number + 1n, timestamp });
    const headerData: HeaderData = {
      parentHash,
      number: parent.number + 1n,
      timestamp,
      coinbase,
      gasLimit: target.gasLimit,
      // A stand-in until sealing gives the block its own: execution never reads it, but a QBFT
      // header must carry a well-formed one (the parent's is).
      extraData: parent.extraData,
      difficulty: 1n,
      nonce: new Uint8Array(8),
      mixHash: parent.mixHash,
    };
    if (common.isActivatedEIP(1559)) {
      headerData.baseFeePerGas = parent.baseFeePerGas === undefined ? 1_000_000_000n : parent.calcNextBaseFee();
    }
    if (common.isActivatedEIP(4844)) {
      headerData.blobGasUsed = 0n;
      headerData.excessBlobGas = parent.excessBlobGas === undefined ? 0n : parent.calcNextExcessBlobGas(common);
    }
    if (common.isActivatedEIP(4788)) headerData.parentBeaconBlockRoot = new Uint8Array(32);
    if (common.isActivatedEIP(4895)) headerData.withdrawalsRoot = KECCAK256_RLP;
    // The block whose environment (number, time, coinbase, base fee) the transactions execute in;
    // with a QBFT mining beneficiary, fees (and COINBASE) go to it rather than the header coinbase.
    const executionCoinbase = spec.blockRewards?.executionCoinbase(parent.number + 1n, timestamp, coinbase) ?? coinbase;
    const envBlock = spec.createBlock({ ...headerData, coinbase: executionCoinbase }, [], common.isActivatedEIP(4895) ? [] : undefined);

    await vm.evm.journal.checkpoint();
    const assembly = new BlockAssembly(vm, spec, options, target, headerData, envBlock);
    try {
      await runPreTransactionSystemCalls(vm, {
        number: parent.number + 1n,
        timestamp,
        parentHash,
        parentBeaconBlockRoot: new Uint8Array(32),
      });
    } catch (err) {
      await assembly.abandon();
      throw err;
    }
    return assembly;
  }

  /** Whether this assembly is the block `target` asks for (same parent, time and coinbase). */
  isFor(parentHash: Uint8Array, timestamp: bigint, coinbase: Uint8Array): boolean {
    const { target } = this;
    return !this.closed && equalsBytes(target.parentHash, parentHash) && target.timestamp === timestamp && equalsBytes(target.coinbase, coinbase);
  }

  get transactionCount(): number {
    return this.included.length;
  }

  /**
   * Executes `candidates` in order, after what earlier rounds included, until `deadline` (epoch ms)
   * or `maxTransactions` included, letting other messages through every `yieldEveryMs`; candidates
   * tried in an earlier round are skipped. The journal
   * checkpoint stays open: a failure here leaves the assembly to be abandoned.
   */
  async add(candidates: readonly PoolTxForBlock[], deadline: number, maxTransactions = Infinity, yieldEveryMs = YIELD_AHEAD_MS): Promise<void> {
    if (this.closed) throw new Error('the block assembly is closed');
    const { vm, envBlock } = this;
    const common = vm.common;
    const blockGasLimit = this.target.gasLimit;
    const txCommon = txCommonFor(this.spec.chainId, common.hardfork());
    const blobGasPerBlob = common.isActivatedEIP(4844) ? common.param('blobGasPerBlob') : 0n;
    const maxBlobGasPerBlock = common.isActivatedEIP(4844) ? common.getBlobGasSchedule().maxBlobGasPerBlock : 0n;
    // EIP-7934: the encoded block stays under the limit; the header, withdrawals and list prefixes get a reserve.
    const maxBodyBytes = common.isActivatedEIP(7934) ? Number(common.param('maxRlpBlockSize')) - BLOCK_SIZE_RESERVE : Infinity;
    const baseFee = this.headerData.baseFeePerGas as bigint | undefined;
    let lastYield = Date.now();
    for (const candidate of candidates) {
      if (this.included.length >= maxTransactions) break;
      const now = Date.now();
      if (now > deadline) break;
      if (now - lastYield >= yieldEveryMs) {
        // The loop's awaits resolve as microtasks, which starve the mailbox: let queued reads and the
        // pool's account lookups through now and then, so that admission does not stall for a build.
        await new Promise((resolve) => setImmediate(resolve));
        lastYield = Date.now();
      }
      const hashKey = bytesToHex(candidate.hash);
      if (this.tried.has(hashKey)) continue;
      this.tried.add(hashKey);
      const senderKey = () => bytesToHex(candidate.senderPublicKey);
      if (this.blockedSenders.size > 0 && this.blockedSenders.has(senderKey())) continue;
      let tx: TypedTransaction;
      try {
        // Frozen by pinKnown, once it has the hash and sender the pool found.
        tx = pooledTransaction(candidate.raw, txCommon);
      } catch (err) {
        // Valid when admitted but not under this block's fork (e.g. over Osaka's EIP-7825 gas cap).
        this.rejected.push({ hash: candidate.hash, reason: 'invalid', detail: firstLine(err) });
        this.blockedSenders.add(senderKey());
        continue;
      }
      // The pool recovered and checked this signature, and hashed the bytes, already: trusting both
      // skips a second recovery and a re-serialisation and keccak per transaction.
      pinKnown(tx, candidate);
      const txBlobGas = isBlob4844Tx(tx) ? BigInt(tx.blobVersionedHashes.length) * blobGasPerBlob : 0n;
      const txBytes = candidate.raw.length;
      if (
        this.gasUsed + tx.gasLimit > blockGasLimit ||
        (txBlobGas > 0n && this.blobGasUsed + txBlobGas > maxBlobGasPerBlock) ||
        this.bodyBytes + txBytes > maxBodyBytes
      ) {
        this.blockedSenders.add(senderKey());
        continue;
      }
      let result;
      try {
        result = await runBlockTransaction(vm, { tx, block: envBlock, blockGasUsed: this.gasUsed, skipHardForkValidation: true });
      } catch (err) {
        // The pool must not forget a transaction silently (a sender's transactions past its balance
        // used to vanish here): it hears why each one was left out and decides — a used nonce is
        // final, a short balance may not be.
        this.rejected.push(await rejectionOf(vm, envBlock, tx, txBlobGas, candidate.hash, err));
        this.blockedSenders.add(senderKey());
        continue;
      }
      this.gasUsed += result.totalGasSpent;
      this.blobGasUsed += txBlobGas;
      this.bodyBytes += txBytes;
      this.results.push(result);
      const receipt = toStoredReceipt(tx, result, this.gasUsed, baseFee, this.options);
      if (txBlobGas > 0n) receipt.blobGasPrice = envBlock.header.getBlobGasPrice();
      this.receipts.push(receipt);
      this.consensusReceipts.push(encodeConsensusReceipt(receipt));
      this.bloom.or(result.bloom);
      this.included.push(tx);
      this.includedBytes.push(candidate.raw);
    }
  }

  /**
   * Finishes the block with `extraData`: the rewards and requests that follow the transactions, the
   * checkpoint committed, the state root computed. The building state then holds the block's writes.
   */
  async seal(extraData: Uint8Array, executedAhead: number): Promise<BuiltBlock> {
    if (this.closed) throw new Error('the block assembly is closed');
    const { vm, target } = this;
    const common = vm.common;
    await this.spec.blockRewards?.finalizeBlockState(vm.stateManager, { number: target.parent.number + 1n, timestamp: target.timestamp, coinbase: target.coinbase });
    const requestsHash = common.isActivatedEIP(7685) ? (await collectRequests(vm, this.results, target.gasLimit)).requestsHash : undefined;
    this.closed = true;
    await vm.evm.journal.commit();
    const stateRoot = await vm.stateManager.getStateRoot();
    // Read here, where the block's state holds them: at the new head they would be read through its trie.
    const carried = await senderAccounts(vm.stateManager, sendersOf(this.included));

    const builtHeader: HeaderData = {
      ...this.headerData,
      extraData,
      stateRoot,
      transactionsTrie: orderedTrieRoot(this.includedBytes),
      receiptTrie: orderedTrieRoot(this.consensusReceipts),
      logsBloom: this.bloom.bitvector,
      gasUsed: this.gasUsed,
      ...(common.isActivatedEIP(4844) ? { blobGasUsed: this.blobGasUsed } : {}),
      ...(requestsHash !== undefined ? { requestsHash } : {}),
    };
    const block = this.spec.createBlock(builtHeader, this.included, common.isActivatedEIP(4895) ? [] : undefined);
    const txItems = transactionItems(this.includedBytes);
    const built: BuiltBlock = { block, rlp: encodeBlock(block, txItems), txItems, headerData: builtHeader, hash: block.hash(), receipts: this.receipts, rejected: this.rejected, executedAhead };
    if (carried !== undefined) built.senderAccounts = carried;
    return built;
  }

  /** Reverts what the assembly executed; the caller puts the building state back at the head. */
  async abandon(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.vm.evm.journal.revert();
  }
}

/**
 * Why `runTx` refused a block candidate, judged from the block and the account it met (ethereumjs'
 * error texts are not an API): its nonce was used already or is ahead of the account's, it offers less
 * than the block's base fee or blob base fee, the balance does not cover gas limit × max price + value
 * (+ blob gas × max blob fee), or something else made it invalid.
 */
async function rejectionOf(vm: VM, block: Block, tx: TypedTransaction, blobGas: bigint, hash: Uint8Array, err: unknown): Promise<RejectedTx> {
  const account = await vm.stateManager.getAccount(tx.getSenderAddress());
  const nonce = account?.nonce ?? 0n;
  if (tx.nonce < nonce) return { hash, reason: 'nonce-too-low' };
  if (tx.nonce > nonce) return { hash, reason: 'nonce-too-high' };
  const maxPrice = 'maxFeePerGas' in tx ? tx.maxFeePerGas : tx.gasPrice;
  const { baseFeePerGas } = block.header;
  if (baseFeePerGas !== undefined && maxPrice < baseFeePerGas) return { hash, reason: 'underpriced' };
  if (isBlob4844Tx(tx) && tx.maxFeePerBlobGas < block.header.getBlobGasPrice()) return { hash, reason: 'underpriced' };
  const blobFee = isBlob4844Tx(tx) ? blobGas * tx.maxFeePerBlobGas : 0n;
  if ((account?.balance ?? 0n) < tx.gasLimit * maxPrice + tx.value + blobFee) return { hash, reason: 'insufficient-funds' };
  return { hash, reason: 'invalid', detail: firstLine(err) };
}

/** The receipt this node stores for `tx`, executed with `result`, `cumulativeGasUsed` gas into its block. */
export function toStoredReceipt(
  tx: TypedTransaction,
  result: RunTxResult,
  cumulativeGasUsed: bigint,
  baseFee: bigint | undefined,
  options: ChainOptions,
): StoredReceipt {
  const receipt: StoredReceipt = {
    status: result.execResult.exceptionError ? 0 : 1,
    cumulativeGasUsed,
    gasUsed: result.totalGasSpent,
    logsBloom: result.bloom.bitvector,
    logs: (result.execResult.logs ?? []) as StoredReceipt['logs'],
    txType: tx.type,
    effectiveGasPrice: effectiveGasPrice(tx, baseFee),
    from: tx.getSenderAddress().bytes,
  };
  if (tx.to) receipt.to = tx.to.bytes;
  if (result.createdAddress) receipt.contractAddress = result.createdAddress.bytes;
  if (result.blobGasUsed !== undefined) receipt.blobGasUsed = result.blobGasUsed;
  // Besu keeps the REVERT data (possibly empty), not the reason of other failures (out of gas, ...).
  if (options.revertReasonEnabled && result.execResult.exceptionError?.error === EVMError.errorMessages.REVERT) {
    receipt.revertReason = result.execResult.returnValue;
  }
  return receipt;
}
