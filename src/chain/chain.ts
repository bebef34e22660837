import type { Block, HeaderData } from '@ethereumjs/block';
import type { StateManagerInterface } from '@ethereumjs/common';
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import { createMPT } from '@ethereumjs/mpt';
import { type Address, bytesToHex, equalsBytes } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import type { AccountSnapshot, BuildRequest, HeadInfo, NewHeadEvent, PrebuildRequest } from '../shared/actors/messages.js';
import type { ChainOptions } from '../shared/actors/worker-data.js';
import type { ChainSpec } from '../shared/execution/chain-spec.js';
import { ChainStore } from './chain-store.js';
import { KvStore } from '../shared/storage/kv-store.js';
import { KzgVerifierPool } from '../shared/execution/kzg-verifier.js';
import type { KvOp } from '../shared/storage/kv-store.js';
import { ScratchState, adoptSenders, bodyDigest, canReuse, recoverSenders, sameBody } from './block-validation.js';
import type { BlockValidation, ExecutedBlock, KnownSenderKeys } from './block-validation.js';
import { InvalidBlockError, OMMER_WINDOW, firstLine, validateBody, validateHeader } from './import-rules.js';
import type { ChainImportRules, ImportRuleOptions } from './import-rules.js';
import { BoundedStateCaches, StateDb, YieldingStateDb } from './state-db.js';
import { tuneInterpreter } from '../shared/execution/evm-tuning.js';
import { createExecutionVm } from '../shared/execution/execution-vm.js';
import { StateViews, type StateStore } from '../shared/execution/state-views.js';
import { BatchCommitStateManager, decodedAccountCaches } from './batch-commit-state.js';
import { keccak256 } from '../shared/ethereum/keccak.js';
import { schemaVersionMismatch } from './storage-schema.js';
import { encodeBlock } from './block-encoding.js';
import { accountSnapshot, senderAccounts, sendersOf } from './account-snapshot.js';
import { BlockAssembly, YIELD_AT_TIMER_MS, toStoredReceipt } from './block-assembly.js';
import type { BuiltBlock } from './block-assembly.js';
import { executeBlock } from './block-execution.js';
import type { StoredReceipt } from '../shared/ethereum/chain-records.js';

/**
 * Whether a block from elsewhere (sync, `blocks import`) is one of the last minute: a node following the
 * chain's tip. Catching up, its blocks' senders are not worth reading for the pool.
 */
function isRecent(block: Block): boolean {
  return block.header.timestamp * 1000n >= BigInt(Date.now() - 60_000);
}

/**
 * The building state's account, storage and code caches carry over from block to block, so that the
 * next block finds the accounts it touches in memory. They are ethereumjs' ordered maps, which never
 * evict (an LRU could evict a write before it is flushed): every account and slot a block touched
 * stayed in memory for good. They are emptied between blocks once they may hold more than this many
 * entries (README, "Memory").
 */
const BUILD_STATE_CACHE_ENTRIES = 50_000;

export type { BuiltBlock } from './block-assembly.js';

/**
 * The chain: the one owner of RocksDB, world state and execution. It builds blocks with its own
 * `runTx` loop (ethereumjs' BlockBuilder re-roots the block per transaction, which is quadratic),
 * imports blocks from elsewhere with the same kind of loop (block-execution.ts), and serves state and
 * block reads.
 *
 * Builds and imports run one at a time; reads use a separate state manager so that a half-built
 * block is never visible to a reader.
 */
export class Chain {
  private head!: HeadInfo;
  private headBlock!: Block;
  /** Serialises every operation that moves the head or touches the building state. */
  private writeLock: Promise<unknown> = Promise.resolve();
  /** Where proposed blocks are executed without being stored; opened on first use. */
  private scratch: Promise<ScratchState> | undefined;
  /** The last block validateBlock executed, which importBlock may store without executing it again. */
  private executed: ExecutedBlock | undefined;
  /** The block buildBlock made last, held until it is imported as committed or discarded. */
  private built: BuiltBlock | undefined;
  /** The block prebuild began on the head, which buildBlock finishes; abandoned by anything else that uses the building state. */
  private assembly: BlockAssembly | undefined;

  private constructor(
    readonly spec: ChainSpec,
    private readonly kv: KvStore,
    readonly store: ChainStore,
    private readonly stateDb: StateDb,
    private readonly buildVm: VM,
    private readonly buildCaches: BoundedStateCaches,
    /** Reads and simulations (eth_call, eth_estimateGas, proofs) run here, never on the building state. */
    private readonly views: StateViews,
    /** Makes a VM over a state database the way every VM of this chain is made. */
    private readonly newVm: (db: StateDb) => Promise<VM>,
    /** The KZG check of the point-evaluation precompile, in its own thread (see kzg-point-evaluation.ts). */
    private readonly kzgVerifier: KzgVerifierPool,
    private readonly options: ChainOptions,
  ) {}

  static async open(location: string, spec: ChainSpec, options: ChainOptions = {}): Promise<Chain> {
    await tuneInterpreter();
    const kv = await KvStore.open(location);
    const kzgVerifier = new KzgVerifierPool();
    try {
      const store = new ChainStore(kv, spec);
      const stateDb = new StateDb(kv);
      // Each VM its own lookup: BLOCKHASH follows the branch of the block that VM executes.
      const vmOver = (stateManager: StateManagerInterface): Promise<VM> => createExecutionVm(spec, stateManager, new BlockHashLookup(store), kzgVerifier.verify);
      const newVm = async (db: StateDb, caches = decodedAccountCaches()): Promise<VM> => vmOver(await openState(new YieldingStateDb(db), caches));
      const buildCaches = new BoundedStateCaches(decodedAccountCaches(), BUILD_STATE_CACHE_ENTRIES);
      const buildVm = await newVm(stateDb, buildCaches.caches);
      // Reads go to the StateDb directly, not through the yielding view: they are short, and must not wait for a build's time slices.
      const views = await StateViews.open(spec, stateDb, vmOver, openState);
      const chain = new Chain(spec, kv, store, stateDb, buildVm, buildCaches, views, newVm, kzgVerifier, options);
      await chain.initialise(location);
      return chain;
    } catch (err) {
      await kv.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * A state database value (trie node or code) by its hex key, for a state reader thread. Keys are the
   * values' hashes: any value found is the one every root that reaches the key means.
   */
  async stateValue(key: string): Promise<Uint8Array | undefined> {
    return this.stateDb.get(key);
  }

  getHead(): HeadInfo {
    return this.head;
  }

  getHeadBlock(): Block {
    return this.headBlock;
  }

  /**
   * Releases the database. Every block is written whole, so there is nothing to flush, except the
   * write-ahead log when blocks were written without syncing: rewriting the head pointer with sync
   * makes every earlier record durable too.
   */
  async close(): Promise<void> {
    await this.exclusiveOnBuildState(async () => {
      // A validation in progress reads the database: let it finish first.
      await this.scratch?.then((scratch) => scratch.idle(), () => undefined);
      if (!this.syncEachBlock) await this.kv.write([this.store.headOp(this.head.hash)], { sync: true });
      await this.kv.close();
      await this.kzgVerifier.close();
    });
  }

  /**
   * Executes candidate transactions on the head state ahead of the block timer, into the block that
   * `buildBlock` with the same time and coinbase will finish (a proposer's transactions then run as
   * they arrive, not all at the timer); with `maxBuildMs`, after the timer, for a build catching up
   * with what arrived meanwhile. Does nothing when the head is not `parentHash` or a built
   * block is held; a block for another time or coinbase is abandoned. Answers how many transactions
   * the block holds so far.
   */
  prebuild(req: PrebuildRequest): Promise<number> {
    return this.exclusive(async () => {
      if (this.built || !equalsBytes(req.parentHash, this.head.hash)) return 0;
      const assembly = await this.assemblyFor(req.timestamp, req.coinbase);
      const deadline = req.maxBuildMs === undefined ? Infinity : Date.now() + req.maxBuildMs;
      await this.onAssembly(() => assembly.add(req.transactions, deadline, req.maxTransactions));
      return assembly.transactionCount;
    });
  }

  /**
   * Executes candidate transactions on the head state and assembles a block, continuing the one
   * `prebuild` began when it is for the same time and coinbase. The block is held, not stored (a
   * block held from an earlier build is dropped first): `importCommitted` stores it once sealed,
   * `discardBuilt` drops it.
   */
  buildBlock(req: BuildRequest): Promise<BuiltBlock> {
    return this.exclusive(async () => {
      if (this.built) await this.dropBuilt();
      const deadline = Date.now() + req.maxBuildMs;
      const assembly = await this.assemblyFor(req.timestamp, req.coinbase);
      const executedAhead = assembly.transactionCount;
      this.built = await this.onAssembly(async () => {
        await assembly.add(req.transactions, deadline, req.maxTransactions, YIELD_AT_TIMER_MS);
        return assembly.seal(req.extraData, executedAhead);
      });
      this.assembly = undefined;
      return this.built;
    });
  }

  /** The open block assembly for a block at `timestamp` by `coinbase` on the head; a new one if it is for another block. */
  private async assemblyFor(timestamp: bigint, coinbase: Uint8Array): Promise<BlockAssembly> {
    if (this.assembly?.isFor(this.head.hash, timestamp, coinbase)) return this.assembly;
    await this.abandonAssembly();
    const parent = this.headBlock.header;
    const vm = this.buildVm;
    branchLookupOf(vm).tip = this.head.hash;
    vm.common.setHardforkBy({ blockNumber: parent.number + 1n, timestamp });
    // EIP-1559's first block: the limit is measured from twice the parent's (elasticity 2), so the
    // block that keeps the same gas target doubles it (header rules refuse the undoubled one).
    const londonForkBlock = vm.common.isActivatedEIP(1559) && parent.baseFeePerGas === undefined;
    const parentGasLimit = londonForkBlock ? parent.gasLimit * 2n : parent.gasLimit;
    const gasLimit = nextGasLimit(parentGasLimit, this.options.targetGasLimit);
    try {
      this.assembly = await BlockAssembly.open(vm, this.spec, this.options, { parentHash: this.head.hash, parent, timestamp, coinbase, gasLimit });
    } catch (err) {
      await this.resetBuildState();
      throw err;
    }
    return this.assembly;
  }

  /** Runs work on the open assembly; if it fails, the assembly is abandoned and the building state reset. */
  private async onAssembly<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      await this.abandonAssembly();
      throw err;
    }
  }

  /**
   * Reverts the open assembly, if any, and puts the building state back at the head: done before
   * anything else uses the building state (imports, discarding a built block, closing).
   */
  private async abandonAssembly(): Promise<void> {
    const assembly = this.assembly;
    if (!assembly) return;
    this.assembly = undefined;
    await assembly.abandon();
    await this.resetBuildState();
  }

  /**
   * Stores a block the validators committed as the new head. When it is the block held from our own
   * build (the QBFT hash leaves seals out), only its sealed extraData is new and the execution is
   * reused; otherwise it is executed in full. Undefined when the block is stored already: full sync
   * brought it from a peer that committed it first, which is no failure of this node's round.
   */
  importCommitted(rlp: Uint8Array): Promise<NewHeadEvent | undefined> {
    return this.exclusiveOnBuildState(async () => {
      // Our own block, or the proposal this node validated, comes back with its seals: its header is
      // all that needs decoding.
      const header = this.spec.decodeHeaderOfBlock(rlp);
      const hash = header.hash();
      // A block on the head is not stored yet; otherwise the database says.
      const stored = !equalsBytes(header.parentHash, this.head.hash) && (equalsBytes(hash, this.head.hash) || (await this.store.hasBlock(hash)));
      if (this.built) {
        if (!stored && equalsBytes(this.built.hash, hash)) return this.importBuiltUnlocked(this.built, header.extraData);
        await this.dropBuilt();
      }
      if (stored) return undefined;
      const validated = this.executed;
      if (validated && equalsBytes(validated.hash, hash) && equalsBytes(validated.parentHash, this.head.hash) && sameBody(validated.rlp, rlp)) {
        return this.importValidatedUnlocked(validated, header.extraData, rlp);
      }
      return this.importUnlocked(this.spec.decodeBlock(rlp));
    });
  }

  /**
   * Stores the proposal validateBlock executed, sealed (`rlp`, with `sealedExtraData`), as the new head:
   * its transactions as decoded then, its execution as made then. Decoding the committed block again
   * (thousands of transactions) took longer than storing it.
   */
  private async importValidatedUnlocked(validated: ExecutedBlock, sealedExtraData: Uint8Array, rlp: Uint8Array): Promise<NewHeadEvent> {
    this.executed = undefined;
    const { block } = validated;
    const sealed = this.spec.createBlock({ ...(block.header.toJSON() as HeaderData), extraData: sealedExtraData }, [...block.transactions], block.withdrawals);
    this.stateDb.discardStaged();
    const event = await this.storeAsHead(sealed, validated.receipts, validated.stateOps, rlp);
    await this.resetBuildState();
    return event;
  }

  /** Stores the held block, `built`, with the sealed extraData consensus gave it, as the new head. */
  importBuilt(built: BuiltBlock, sealedExtraData: Uint8Array): Promise<NewHeadEvent> {
    return this.exclusiveOnBuildState(() => this.importBuiltUnlocked(built, sealedExtraData));
  }

  private async importBuiltUnlocked(built: BuiltBlock, sealedExtraData: Uint8Array): Promise<NewHeadEvent> {
    if (built !== this.built) throw new Error('that built block is not the one held');
    this.built = undefined;
    if (!equalsBytes(built.block.header.parentHash, this.head.hash)) throw new Error('built block no longer extends the head');
    const header: HeaderData = { ...built.headerData, extraData: sealedExtraData };
    const sealed = this.spec.createBlock(header, [...built.block.transactions], built.block.withdrawals);
    const event = await this.storeAsHead(sealed, built.receipts, undefined, encodeBlock(sealed, built.txItems), built.senderAccounts ?? 'read');
    // Building flushed every write into the stored batch: nothing in the caches is unwritten now.
    this.buildCaches.trim();
    return event;
  }

  discardBuilt(): Promise<void> {
    return this.exclusiveOnBuildState(() => this.dropBuilt());
  }

  private async dropBuilt(): Promise<void> {
    this.built = undefined;
    await this.resetBuildState();
  }

  /**
   * Executes a block from elsewhere (sync, `blocks import`) on its parent's state and stores it. Its
   * parent may be the head or any stored block; Besu's fork choice then decides: a block extending the
   * head becomes the head; a block on another branch becomes the head (a re-org) only when its total
   * difficulty exceeds the head's, otherwise it is kept off the canonical chain (a fork) and answers
   * undefined. A block already stored answers undefined too.
   */
  importBlock(block: Block): Promise<NewHeadEvent | undefined> {
    return this.exclusiveOnBuildState(() => (equalsBytes(block.header.parentHash, this.head.hash) ? this.importUnlocked(block) : this.importOffHead(block)));
  }

  private async importUnlocked(block: Block): Promise<NewHeadEvent> {
    if (!equalsBytes(block.header.parentHash, this.head.hash)) throw new Error('parent block is not the head');
    const executed = this.executed;
    this.executed = undefined;
    if (canReuse(executed, block, block.hash(), this.head.hash)) {
      // Executed moments ago as a proposal (validateBlock): store what that execution produced.
      adoptSenders(block, executed.senderKeys);
      this.stateDb.discardStaged();
      const event = await this.storeAsHead(block, executed.receipts, executed.stateOps, undefined, isRecent(block) ? 'read' : 'none');
      await this.resetBuildState();
      return event;
    }
    try {
      const receipts = await this.execute(this.buildVm, block, this.head.hash, this.head.stateRoot);
      return await this.storeAsHead(block, receipts, undefined, undefined, isRecent(block) ? 'read' : 'none');
    } catch (err) {
      await this.resetBuildState();
      throw err;
    }
  }

  /**
   * A block whose parent is a stored block other than the head (Besu's `DefaultBlockchain`: a fork, or
   * a re-org when it outweighs the head). Executed on its parent's state like any block; the state
   * trie is content-addressed, so the branch's state nodes sit beside the canonical chain's.
   */
  private async importOffHead(block: Block): Promise<NewHeadEvent | undefined> {
    const hash = block.hash();
    if (await this.store.hasBlock(hash)) return undefined;
    const parentHash = block.header.parentHash;
    const parent = await this.store.getBlock(parentHash);
    const parentTd = await this.store.getTotalDifficulty(parentHash);
    if (!parent || parentTd === undefined) throw new Error(`unknown parent block ${bytesToHex(parentHash)}`);
    const totalDifficulty = parentTd + block.header.difficulty;
    try {
      const receipts = await this.execute(this.buildVm, block, parentHash, parent.header.stateRoot);
      const stateOps = this.stateDb.drainStaged();
      if (totalDifficulty > this.head.totalDifficulty) return await this.reorganise(block, hash, receipts, totalDifficulty, stateOps);
      await this.kv.write([...stateOps, ...this.store.storedBlockOps(block, hash, receipts, totalDifficulty)], { sync: this.syncEachBlock });
      this.store.rememberWritten(block, hash, receipts);
      await this.resetBuildState();
      return undefined;
    } catch (err) {
      await this.resetBuildState();
      throw err;
    }
  }

  /**
   * Makes `tip`, just executed on its parent's state, the head although its parent is not (Besu's
   * `handleChainReorg`): the canonical index and the transaction lookups move from the old branch to
   * the new one, down to the common ancestor. The branch's other blocks were stored (executed, with
   * state and receipts) as they came. One batch, head pointer last: a crash leaves either the old head
   * with its whole branch canonical or the new one with its own, never a mix.
   */
  private async reorganise(tip: Block, hash: Uint8Array, receipts: StoredReceipt[], totalDifficulty: bigint, stateOps: KvOp[]): Promise<NewHeadEvent> {
    const added: { block: Block; hash: Uint8Array }[] = [{ block: tip, hash }];
    let ancestorHash = tip.header.parentHash;
    for (;;) {
      const block = await this.store.getBlock(ancestorHash);
      if (!block) throw new Error(`database is inconsistent: block ${bytesToHex(ancestorHash)} of a side branch is missing`);
      if (await this.store.isCanonical(ancestorHash, block.header.number)) break;
      added.unshift({ block, hash: ancestorHash });
      ancestorHash = block.header.parentHash;
    }
    const ancestorNumber = added[0]!.block.header.number - 1n;
    const removed: { block: Block; hash: Uint8Array }[] = [];
    for (let n = this.head.number; n > ancestorNumber; n--) {
      const removedHash = await this.store.getCanonicalHash(n);
      const block = removedHash && (await this.store.getBlock(removedHash));
      if (!removedHash || !block) throw new Error(`database is inconsistent: canonical block #${n} is missing`);
      removed.push({ block, hash: removedHash });
    }

    const addedTxs = new Set(added.flatMap(({ block }) => block.transactions.map((tx) => bytesToHex(tx.hash()))));
    const ops: KvOp[] = [...stateOps, ...this.store.storedBlockOps(tip, hash, receipts, totalDifficulty)];
    for (const { block } of removed) {
      for (const tx of block.transactions) if (!addedTxs.has(bytesToHex(tx.hash()))) ops.push(this.store.txLookupDeleteOp(tx.hash()));
    }
    for (let n = tip.header.number + 1n; n <= this.head.number; n++) ops.push(this.store.canonicalDeleteOp(n));
    for (const { block, hash: addedHash } of added) ops.push(...this.store.canonicalOps(block, addedHash));
    ops.push(this.store.headOp(hash));
    await this.kv.write(ops, { sync: this.syncEachBlock });
    this.store.canonicalIndexMoved();
    this.store.rememberWritten(tip, hash, receipts);
    this.setHead(tip, hash, totalDifficulty);

    // Transactions of the old branch the new one does not carry, oldest first: the pool takes them back.
    const removedTransactions = removed
      .slice()
      .reverse()
      .flatMap(({ block }) => block.transactions.filter((tx) => !addedTxs.has(bytesToHex(tx.hash()))));
    // Nonces at the new head of every sender on either branch: on the old one they may move back.
    const senders = sendersOf([...removed, ...added].flatMap(({ block }) => block.transactions));
    const senderNonces: [string, bigint][] = [];
    for (const [key, address] of senders) senderNonces.push([key, (await this.buildVm.stateManager.getAccount(address))?.nonce ?? 0n]);
    return {
      head: this.head,
      removedBlocks: removed.map((r) => r.hash),
      addedBlocks: added.map((a) => a.hash),
      includedTxHashes: added.flatMap(({ block }) => block.transactions.map((tx) => tx.hash())),
      senderNonces,
      removedTransactions: removedTransactions.map((tx) => tx.serialize()),
    };
  }

  private get syncEachBlock(): boolean {
    return this.options.syncEachBlock ?? true;
  }

  /**
   * Checks and executes a block proposed on a stored block (normally the head) as `blocks import`
   * and importBlock would — the header and body rules, then execution with its state root, receipts
   * root, bloom, gas used and rewards — on a scratch state: nothing is written, the head and the
   * building state stay as they are. A later importBlock of the same block reuses the execution.
   * Senders `knownSenderKeys` gives (the pool's, recovered from transactions of the same hash) are not
   * recovered again: most of a proposal is already in this node's pool, and recovery was the largest
   * single cost of validating it.
   */
  async validateBlock(rlp: Uint8Array, rules: ChainImportRules, knownSenderKeys?: KnownSenderKeys): Promise<BlockValidation> {
    this.scratch ??= ScratchState.open(this.kv, this.newVm);
    const scratch = await this.scratch;
    return scratch.run(async (vm, takeWrites) => {
      let block: Block;
      try {
        block = this.spec.decodeBlock(rlp);
      } catch (err) {
        return { valid: false, reason: `undecodable block: ${firstLine(err)}` };
      }
      const parentHash = block.header.parentHash;
      const parent = equalsBytes(parentHash, this.head.hash) ? this.headBlock : await this.store.getBlock(parentHash);
      if (!parent) return { valid: false, reason: `unknown parent block ${bytesToHex(parentHash)}` };
      try {
        const options: ImportRuleOptions = { ...rules, recentAncestors: await this.ommerAncestors(block, parentHash) };
        // Only a chain with a terminal total difficulty looks at the parent's.
        if (rules.terminalTotalDifficulty !== undefined) options.parentTotalDifficulty = await this.store.getTotalDifficulty(parentHash);
        validateHeader(block.header, parent.header, options);
        const senderKeys = recoverSenders(block, knownSenderKeys && (await knownSenderKeys(block.transactions.map((tx) => tx.hash()))));
        await validateBody(block, options, rlp.length);
        const receipts = await this.execute(vm, block, parentHash, parent.header.stateRoot);
        this.executed = { hash: block.hash(), parentHash, bodyDigest: bodyDigest(block), receipts, stateOps: takeWrites(), senderKeys, block, rlp };
        return { valid: true };
      } catch (err) {
        return { valid: false, reason: err instanceof InvalidBlockError ? err.reason : firstLine(err) };
      }
    });
  }

  /**
   * Executes `block` on `vm` from its parent's state and makes its receipts; a block whose state root,
   * receipts root, bloom or gas used disagree with execution is refused. With QBFT rewards configured,
   * fees and the block reward go to the mining beneficiary.
   */
  private async execute(vm: VM, block: Block, parentHash: Uint8Array, parentStateRoot: Uint8Array): Promise<StoredReceipt[]> {
    branchLookupOf(vm).tip = parentHash;
    const result = await executeBlock(vm, this.spec, block, parentStateRoot);
    const blobGasPrice = block.header.excessBlobGas === undefined ? undefined : block.header.getBlobGasPrice();
    return block.transactions.map((tx, i) => {
      const consensusReceipt = result.receipts[i]!;
      const receipt = toStoredReceipt(tx, result.results[i]!, consensusReceipt.cumulativeBlockGasUsed, block.header.baseFeePerGas, this.options);
      // Before Byzantium a receipt commits to the state root after its transaction, not a status.
      if ('stateRoot' in consensusReceipt) {
        receipt.root = consensusReceipt.stateRoot;
        delete receipt.status;
      }
      if (receipt.blobGasUsed !== undefined && blobGasPrice !== undefined) receipt.blobGasPrice = blobGasPrice;
      return receipt;
    });
  }

  /** Hashes of a block's ancestors within ommer depth, parent first; a block without ommers needs none. */
  private async ommerAncestors(block: Block, parentHash: Uint8Array): Promise<Uint8Array[]> {
    return block.uncleHeaders.length === 0 ? [] : this.recentAncestors(parentHash);
  }

  /** `hash` and its ancestors within ommer depth, newest first (on its own branch). */
  async recentAncestors(hash: Uint8Array): Promise<Uint8Array[]> {
    const hashes = [hash];
    for (let at = hash; hashes.length < OMMER_WINDOW; ) {
      const block = await this.store.getBlock(at);
      if (!block || block.header.number === 0n) break;
      at = block.header.parentHash;
      hashes.push(at);
    }
    return hashes;
  }

  /**
   * Runs `fn` with the read VM's state at `stateRoot` (a `ReadState`: what it reads stays cached until
   * the root moves; writes are simulated and vanish). Reads are serialised because moving the root
   * of the shared read state under a concurrent read would mix two states.
   */
  withStateAt<T>(stateRoot: Uint8Array, fn: (vm: VM) => Promise<T>): Promise<T> {
    return this.views.withStateAt(stateRoot, fn);
  }

  /** What the pool needs of each account to admit its transactions, at `stateRoot`. */
  accountSnapshots(stateRoot: Uint8Array, addresses: readonly Address[]): Promise<AccountSnapshot[]> {
    return this.withStateAt(stateRoot, (vm) => Promise.all(addresses.map((address) => accountSnapshot(vm.stateManager, address))));
  }

  /**
   * `withStateAt` on a trie-backed state manager (ethereumjs' MerkleStateManager): for what needs the
   * trie (proofs) or the state root of simulated writes (eth_simulateV1, pre-Byzantium receipts).
   */
  withTrieStateAt<T>(stateRoot: Uint8Array, fn: (vm: VM) => Promise<T>): Promise<T> {
    return this.views.withTrieStateAt(stateRoot, fn);
  }

  private async initialise(location: string): Promise<void> {
    const headHash = await this.store.getHeadHash();
    // Before anything is read in the layout this build assumes, or written.
    const mismatch = schemaVersionMismatch(location, await this.store.getSchemaVersion(), headHash !== undefined);
    if (mismatch !== undefined) throw new Error(mismatch);
    if (headHash === undefined) {
      await this.writeGenesis();
      return;
    }
    // Compare genesis first: blocks of another chain may not even decode under this chain's rules.
    const expectedGenesis = await this.computeGenesisHash();
    const storedGenesis = await this.store.getGenesisHash();
    if (storedGenesis && !equalsBytes(storedGenesis, expectedGenesis)) {
      throw new Error(
        `the data path holds a chain with genesis ${bytesToHex(storedGenesis)}, not ${bytesToHex(expectedGenesis)}: use another --data-path`,
      );
    }
    const block = await this.store.getBlock(headHash);
    const td = await this.store.getTotalDifficulty(headHash);
    if (!block || td === undefined) throw new Error(`database is inconsistent: head ${bytesToHex(headHash)} has no block`);
    await this.spec.merge?.restore(block.header.number, td, (number) => this.canonicalTotalDifficulty(number));
    this.setHead(block, headHash, td);
    await this.resetBuildState();
  }

  private async canonicalTotalDifficulty(number: bigint): Promise<bigint> {
    const hash = await this.store.getCanonicalHash(number);
    const td = hash && (await this.store.getTotalDifficulty(hash));
    if (td === undefined) throw new Error(`database is inconsistent: canonical block #${number} has no total difficulty`);
    return td;
  }

  private async computeGenesisHash(): Promise<Uint8Array> {
    const scratch = new MerkleStateManager({ common: this.spec.common });
    await this.spec.writeGenesisState(scratch);
    return this.spec.genesisBlock(await scratch.getStateRoot()).hash();
  }

  private async writeGenesis(): Promise<void> {
    const state = this.buildVm.stateManager as MerkleStateManager;
    await this.spec.writeGenesisState(state);
    const stateRoot = await state.getStateRoot();
    const genesis = this.spec.genesisBlock(stateRoot);
    const hash = genesis.hash();
    const td = genesis.header.difficulty;
    const ops = [...this.stateDb.drainStaged(), ...this.store.genesisOps(hash), ...this.store.blockOps(genesis, hash, [], td)];
    await this.kv.write(ops, { sync: this.syncEachBlock });
    this.store.rememberWritten(genesis, hash, []);
    this.setHead(genesis, hash, td);
  }

  private setHead(block: Block, hash: Uint8Array, totalDifficulty: bigint): void {
    const h = block.header;
    // Blocks after the terminal block are proof-of-stake blocks: the spec's Common learns when.
    this.spec.merge?.observeHead(h.number, totalDifficulty);
    this.headBlock = block;
    this.head = {
      number: h.number,
      hash,
      timestamp: h.timestamp,
      gasLimit: h.gasLimit,
      baseFeePerGas: h.baseFeePerGas,
      nextBaseFeePerGas: h.baseFeePerGas === undefined ? undefined : h.calcNextBaseFee(),
      nextHardfork: this.spec.common.getHardforkBy({ blockNumber: h.number + 1n, timestamp: h.timestamp + this.spec.blockPeriodSeconds }),
      stateRoot: h.stateRoot,
      coinbase: h.coinbase.bytes,
      extraData: h.extraData,
      totalDifficulty,
    };
  }

  private async resetBuildState(): Promise<void> {
    this.stateDb.discardStaged();
    await this.buildVm.stateManager.setStateRoot(this.head.stateRoot, true);
  }

  /**
   * `stateOps`: the block's state writes, by default those the building state staged; `rlp`: the
   * block's encoding when known; `carried`: the senders' accounts the event carries for the pool
   * (`senderAccounts`): given (by the build, which holds them), read at the new head, or none (for a
   * head nobody admits transactions against).
   */
  private async storeAsHead(
    block: Block,
    receipts: StoredReceipt[],
    stateOps: KvOp[] = this.stateDb.drainStaged(),
    rlp?: Uint8Array,
    carried: [string, AccountSnapshot][] | 'read' | 'none' = 'read',
  ): Promise<NewHeadEvent> {
    const hash = block.hash();
    const td = this.head.totalDifficulty + block.header.difficulty;
    const encoded = rlp ?? block.serialize();
    const ops = [...stateOps, ...this.store.blockOps(block, hash, receipts, td, encoded)];
    // The block becomes the head — for the head view, pool, consensus, peers and receipt readers — only once this returns.
    await this.kv.write(ops, { sync: this.syncEachBlock });
    this.store.rememberWritten(block, hash, receipts, encoded.length);
    this.setHead(block, hash, td);

    const senderNonces = new Map<string, bigint>();
    for (const tx of block.transactions) senderNonces.set(tx.getSenderAddress().toString(), tx.nonce + 1n);
    const event: NewHeadEvent = {
      head: this.head,
      removedBlocks: [],
      addedBlocks: [hash],
      includedTxHashes: block.transactions.map((tx) => tx.hash()),
      senderNonces: [...senderNonces],
      removedTransactions: [],
    };
    const accounts =
      carried === 'read'
        ? await this.withStateAt(this.head.stateRoot, (vm) => senderAccounts(vm.stateManager, sendersOf(block.transactions)))
        : carried === 'none'
          ? undefined
          : carried;
    if (accounts !== undefined) event.senderAccounts = accounts;
    return event;
  }

  /** `exclusive` for work that uses the building state other than assembling: any open assembly is abandoned first. */
  private exclusiveOnBuildState<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      await this.abandonAssembly();
      return fn();
    });
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.writeLock.then(fn, fn);
    this.writeLock = next.catch(() => undefined);
    return next;
  }
}

/**
 * The chain's state over the trie: a block's writes are committed in one pass per trie
 * (batch-commit-state.ts), its keys hashed with the WebAssembly keccak.
 */
async function openState(stateDb: StateStore, caches?: Caches): Promise<MerkleStateManager> {
  const trie = await createMPT({ db: stateDb, useKeyHashing: true, useKeyHashingFunction: keccak256, valueEncoding: 'view' });
  return new BatchCommitStateManager({ trie, caches });
}


/** Besu's gas-limit bounds (`TargetingGasLimitCalculator`): 1/1024 of the parent per block, never below 5000. */
const GAS_LIMIT_ADJUSTMENT_FACTOR = 1024n;
export const MIN_GAS_LIMIT = 5000n;
const MAX_GAS_LIMIT = 2n ** 63n - 1n;

/**
 * The gas limit of a block built on a parent with `parentGasLimit` (already doubled on the London fork
 * block): the parent's, or with a target one step toward it. A step is `parent / 1024 - 1`, one less
 * than the header rule's strict bound, so every block built this way passes it.
 */
export function nextGasLimit(parentGasLimit: bigint, target: bigint | undefined): bigint {
  if (target === undefined || target === parentGasLimit) return parentGasLimit;
  const step = parentGasLimit / GAS_LIMIT_ADJUSTMENT_FACTOR - 1n;
  const maxStep = step > 0n ? step : 0n;
  if (target > parentGasLimit) {
    const raised = parentGasLimit + maxStep;
    return raised > MAX_GAS_LIMIT ? MAX_GAS_LIMIT : target < raised ? target : raised;
  }
  const lowered = parentGasLimit - maxStep;
  const bounded = target > lowered ? target : lowered;
  return bounded < MIN_GAS_LIMIT ? MIN_GAS_LIMIT : bounded;
}

/**
 * BLOCKHASH needs a block's ancestor by number; the VM asks through this. The ancestors are those of
 * `tip` (the parent of the block being executed), which on a side branch are not the canonical blocks;
 * without a tip (reads, eth_call) they are the canonical ones.
 */
class BlockHashLookup {
  tip: Uint8Array | undefined;

  constructor(private readonly store: ChainStore) {}

  async getBlock(blockId: number): Promise<{ hash(): Uint8Array }> {
    const number = BigInt(blockId);
    const found = this.tip === undefined ? await this.store.getCanonicalHash(number) : (await this.store.branchBlocks(this.tip, number, number))[0]?.hash();
    const hash = found ?? new Uint8Array(32);
    return { hash: () => hash };
  }

  async putBlock(): Promise<void> {}

  shallowCopy(): this {
    return this;
  }
}

function branchLookupOf(vm: VM): BlockHashLookup {
  return vm.blockchain as unknown as BlockHashLookup;
}
