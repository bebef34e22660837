/**
 * `blocks import`: blocks from a file, validated and executed one after another through the same
 * path as every other block from outside (Chain.importBlock = runBlock + one atomic write), so a
 * block that fails stops the import and leaves the database at the last good block.
 *
 * Sender recovery, the one CPU-heavy stateless step, can run ahead of execution in other threads
 * (see sender-recovery-task.ts); everything else happens here, in order.
 */
import type { Block } from '@ethereumjs/block';
import { bytesToHex, equalsBytes } from '@ethereumjs/util';
import type { HeadInfo, NewHeadEvent } from '../shared/actors/messages.js';
import type { Chain } from './chain.js';
import type { BlockSlice } from './block-file.js';
import { BlockFileError } from './block-file.js';
import { InvalidBlockError, OMMER_WINDOW, firstLine, validateBody, validateHeader, type ChainImportRules, type ImportRuleOptions } from './import-rules.js';
import type { RecoveredSenders } from '../../workers/tasks/sender-recovery.task.js';
import type { SealedBlockCheck } from './block-validation-qbft.js';

/** Why an import stopped: the block (by number when it decoded, else by file position) and the rule. */
export class ImportFailure extends Error {
  constructor(
    /** Position of the block in the file, from 0. */
    readonly fileIndex: number,
    readonly blockNumber: bigint | undefined,
    readonly blockHash: string | undefined,
    readonly reason: string,
  ) {
    super(
      blockNumber === undefined
        ? `Block at position ${fileIndex} of the file could not be imported: ${reason}`
        : `Block #${blockNumber} (${blockHash}) could not be imported: ${reason}`,
    );
  }
}

export interface ImportProgress {
  /** Blocks handled so far (imported or skipped) and how many the file holds. */
  done: number;
  total: number;
  imported: number;
  skipped: number;
  transactions: number;
  gasUsed: bigint;
  elapsedMs: number;
  head: HeadInfo;
}

export interface ImportSummary extends ImportProgress {}

export interface ImportOptions {
  /** The chain's header rules: consensus kind, fixed difficulty, seal check (see import-rules.ts). */
  rules: ChainImportRules;
  /** Consensus rules of a sealed block against its parent, before anything else (QBFT: header rules and commit seals). */
  checkSealedBlock?: SealedBlockCheck;
  /** How many blocks the file holds, for progress (0 when unknown). */
  total: number;
  /** Recovers senders of a batch of encoded blocks, off this thread; absent = recovered during execution. */
  recoverSenders?: (blocks: Uint8Array[]) => Promise<RecoveredSenders>;
  /** Blocks per recovery batch and how many batches run ahead of execution. */
  batchSize?: number;
  lookahead?: number;
  onProgress?: (progress: ImportProgress) => void;
  /** Each block stored as the new head (the chain actor announces it to its subscribers). */
  onImported?: (event: NewHeadEvent) => void;
  /** Each block stored off the canonical chain: its branch does not outweigh the head (yet). */
  onForkBlock?: (hash: Uint8Array) => void;
  /** Milliseconds between progress reports (the last one is always reported). */
  progressIntervalMs?: number;
  now?: () => number;
}


/**
 * Imports the blocks of `slices` in order, each on its parent: the head, or a stored block of another
 * branch (the chain's fork choice decides whether it becomes the head). Block 0 equal to the genesis
 * and blocks already stored are skipped. Throws ImportFailure at the first block that does not decode,
 * has an unknown parent, breaks a header/body rule or fails execution.
 */
export async function importBlocks(chain: Chain, slices: Iterable<BlockSlice>, options: ImportOptions): Promise<ImportSummary> {
  const now = options.now ?? Date.now;
  const started = now();
  const progress: ImportProgress = {
    done: 0,
    total: options.total,
    imported: 0,
    skipped: 0,
    transactions: 0,
    gasUsed: 0n,
    elapsedMs: 0,
    head: chain.getHead(),
  };
  const interval = options.progressIntervalMs ?? 1000;
  let lastReport = started;
  const report = (force: boolean) => {
    const at = now();
    if (!force && at - lastReport < interval) return;
    lastReport = at;
    progress.elapsedMs = at - started;
    progress.head = chain.getHead();
    options.onProgress?.({ ...progress });
  };

  const genesisHash = await chain.store.getCanonicalHash(0n);
  /** The last imported block and its ancestors within ommer depth, newest first. */
  let ancestors = await chain.recentAncestors(chain.getHead().hash);

  try {
    for await (const prepared of withRecoveredSenders(slices, options)) {
      await importOne(prepared);
    }
  } catch (err) {
    if (err instanceof BlockFileError) {
      throw new ImportFailure(err.blockIndex, undefined, undefined, `${err.reason} (byte offset ${err.offset})`);
    }
    throw err;
  }
  report(true);
  return { ...progress, elapsedMs: now() - started, head: chain.getHead() };

  async function importOne({ slice, senders }: PreparedSlice): Promise<void> {
    let block: Block;
    try {
      block = chain.spec.decodeBlock(slice.bytes);
    } catch (err) {
      throw new ImportFailure(slice.index, undefined, undefined, `undecodable block: ${firstLine(err)}`);
    }
    const number = block.header.number;
    const hash = block.hash();
    const failure = (reason: string) => new ImportFailure(slice.index, number, bytesToHex(hash), reason);

    if (number === 0n) {
      if (genesisHash !== undefined && equalsBytes(hash, genesisHash)) {
        progress.skipped++;
        progress.done++;
        return;
      }
      throw failure(`block 0 is not this chain's genesis ${genesisHash === undefined ? '' : bytesToHex(genesisHash)}`.trim());
    }
    const canonical = await chain.store.getCanonicalHash(number);
    if (canonical !== undefined && equalsBytes(canonical, hash)) {
      progress.skipped++;
      progress.done++;
      return;
    }
    const head = chain.getHead();
    const parentHash = block.header.parentHash;
    const extendsHead = equalsBytes(parentHash, head.hash);
    if (!extendsHead && (await chain.store.hasBlock(hash))) {
      // Stored before, on a branch off the canonical chain.
      progress.skipped++;
      progress.done++;
      return;
    }
    const parent = extendsHead ? chain.getHeadBlock() : await chain.store.getBlock(parentHash);
    const parentTotalDifficulty = extendsHead ? head.totalDifficulty : await chain.store.getTotalDifficulty(parentHash);
    if (parent === undefined || parentTotalDifficulty === undefined) throw failure(`unknown parent block ${bytesToHex(parentHash)}`);
    if (ancestors[0] === undefined || !equalsBytes(ancestors[0], parentHash)) ancestors = await chain.recentAncestors(parentHash);

    if (senders !== null) {
      if (senders.length !== block.transactions.length) throw failure('transaction list changed between decodings');
      block.transactions.forEach((tx, i) => {
        (tx.cache as { senderPubKey?: Uint8Array }).senderPubKey = senders[i];
      });
    }
    const rules: ImportRuleOptions = { ...options.rules, recentAncestors: ancestors, parentTotalDifficulty };
    if (options.checkSealedBlock) {
      let broken: string | undefined;
      try {
        broken = await options.checkSealedBlock(block, parent);
      } catch (err) {
        broken = firstLine(err);
      }
      if (broken !== undefined) throw failure(broken);
    }
    try {
      validateHeader(block.header, parent.header, rules);
      await validateBody(block, rules, slice.bytes.length);
    } catch (err) {
      throw failure(err instanceof InvalidBlockError ? err.reason : firstLine(err));
    }
    let event: NewHeadEvent | undefined;
    try {
      event = await chain.importBlock(block);
    } catch (err) {
      throw failure(firstLine(err));
    }
    if (event) options.onImported?.(event);
    else options.onForkBlock?.(hash);
    ancestors = [hash, ...ancestors.slice(0, OMMER_WINDOW - 1)];
    progress.imported++;
    progress.done++;
    progress.transactions += block.transactions.length;
    progress.gasUsed += block.header.gasUsed;
    report(false);
  }
}

interface PreparedSlice {
  slice: BlockSlice;
  /** Sender public keys per transaction, or null to recover them during execution. */
  senders: Uint8Array[] | null;
}

/**
 * The slices in order, each with its senders recovered by `recoverSenders` in batches that run
 * `lookahead` batches ahead of the consumer. A file error met while reading ahead surfaces only
 * once every block before it has been handed out, so those blocks still get imported.
 */
async function* withRecoveredSenders(slices: Iterable<BlockSlice>, options: ImportOptions): AsyncGenerator<PreparedSlice> {
  const recover = options.recoverSenders;
  if (recover === undefined) {
    for (const slice of slices) yield { slice, senders: null };
    return;
  }
  const batchSize = options.batchSize ?? 64;
  const lookahead = options.lookahead ?? 4;
  const iterator = slices[Symbol.iterator]();
  let fileError: unknown;
  const nextBatch = (): BlockSlice[] => {
    const batch: BlockSlice[] = [];
    if (fileError !== undefined) return batch;
    try {
      for (let r = iterator.next(); !r.done; r = iterator.next()) {
        batch.push(r.value);
        if (batch.length === batchSize) break;
      }
    } catch (err) {
      if (!(err instanceof BlockFileError)) throw err;
      fileError = err;
    }
    return batch;
  };
  const queue: { batch: BlockSlice[]; senders: Promise<RecoveredSenders> }[] = [];
  const fill = () => {
    while (queue.length < lookahead) {
      const batch = nextBatch();
      if (batch.length === 0) return;
      const senders = recover(batch.map((s) => s.bytes));
      // A failed recovery only means the chain thread recovers senders itself.
      senders.catch(() => undefined);
      queue.push({ batch, senders });
    }
  };
  fill();
  while (queue.length > 0) {
    const { batch, senders } = queue.shift()!;
    fill();
    const recovered = await senders.catch((): RecoveredSenders => batch.map(() => null));
    for (let i = 0; i < batch.length; i++) yield { slice: batch[i]!, senders: recovered[i] ?? null };
  }
  if (fileError !== undefined) throw fileError;
}
