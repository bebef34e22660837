/**
 * The crash campaign's rounds, shared by `bench/crash-campaign.ts` (100 rounds) and the e2e test
 * (3 rounds): sustained transfer load on a dev node, SIGKILL at a random moment, restart on the same
 * data path, then hold what the node told clients before the kill against what it holds after:
 *
 * - every receipt `eth_getTransactionReceipt` returned before the kill is returned again, identical;
 * - the head is not behind any head the node announced, and the chain from the last checked block to
 *   the head links up, every transaction in it has its receipt, and the state at the head (balances
 *   and nonces of every account the load touches) equals a ledger kept from those blocks' receipts —
 *   so the head's state root opens and agrees with its blocks;
 * - the node produces again: a new transaction is mined after the restart.
 */
import { createHash } from 'node:crypto';
import { DEV_ACCOUNTS } from '../../test/helpers/dev-accounts.js';
import { startNode, type NodeProcess } from '../../test/helpers/node-process.js';
import { jsonPostRequest, KeepAliveConnection, rpcBody, RpcClient, type BatchAnswer } from './http-client.js';
import { accountFromKey, signingCommon, signTx, type Account } from './signing.js';

export interface CampaignOptions {
  /** The data path every node of the campaign runs on; the caller creates and removes it. */
  dataPath: string;
  /** Derives every round's kill moment and transfer values; printed so a campaign can be rerun. */
  seed: number;
  /** Funded accounts sending besides the three dev accounts. */
  extraSenders: number;
  /** The kill comes at a uniformly random moment in [min, max] ms after the load starts. */
  killWindowMs: [number, number];
  /** Transactions a sender may have submitted without the campaign having seen them mined. */
  maxUnminedPerSender: number;
  /** Pre-signed transactions per sender and round (the load stops early if they run out). */
  txsPerSenderPerRound: number;
}

export interface RoundReport {
  round: number;
  /** The seed of this round's random choices (derived from the campaign seed and the round). */
  roundSeed: number;
  killAfterMs: number;
  /** Time from the killed node's last "Imported" log line to the kill; undefined without one. */
  msSinceLastImport: number | undefined;
  /** Highest head the campaign saw before the kill, the last one the node logged, the one it restarted at. */
  headSeen: number;
  lastLoggedImport: number;
  headAfterRestart: number;
  submitted: number;
  /** Receipts the node returned during this round's load. */
  receiptsSeen: number;
  /**
   * Receipts checked after the restart: every one returned since the previous restart (this round's
   * load, the previous round's production check, the campaign's funding transfers).
   */
  receiptsChecked: number;
  /** Receipts returned before a kill that the restarted node no longer returns identically. */
  lostReceipts: string[];
  inconsistencies: string[];
  restartMs: number;
  blocksChecked: number;
  txsChecked: number;
  /** The last lines of the killed and the restarted node, when the round failed. */
  logTails?: { killed: string; restarted: string };
}

const CHAIN_ID = 1337;
const GWEI = 10n ** 9n;
const TRANSFER_GAS = 21_000n;
const SINK = '0x00000000000000000000000000000000000c0ffe';
const FUNDING = 10n * 10n ** 18n;
const POLL_MS = 50;
const RECEIPTS_PER_SENDER_PER_POLL = 40;
const BATCH = 100;
const PRODUCTION_TIMEOUT_MS = 30_000;
const LOG_TAIL_LINES = 25;

interface ReceiptJson {
  blockNumber: string;
  blockHash: string;
  transactionIndex: string;
  status: string;
  gasUsed: string;
  effectiveGasPrice: string;
}

interface BlockJson {
  number: string;
  hash: string;
  parentHash: string;
  transactions: Array<{ hash: string; from: string; to: string | null; nonce: string; value: string }>;
}

/** Balances and nonces of the accounts the load touches, followed block by block from receipts. */
class Ledger {
  readonly balances = new Map<string, bigint>();
  readonly nonces = new Map<string, bigint>();

  constructor(
    /** The last block applied; the next check starts after it. */
    public checkpoint: { number: number; hash: string },
  ) {}
}

/** One sender's load in a round: its pre-signed transactions and what came of them. */
interface SenderLoad {
  account: Account;
  signed: Array<{ raw: string; hash: string }>;
  /** Hashes the pool accepted, in nonce order. */
  accepted: string[];
  /** accepted[0..minedPrefix) all have receipts. */
  minedPrefix: number;
}

export class CrashCampaign {
  /** Every receipt the node returned, as returned (JSON text), by transaction hash. */
  private readonly receipts = new Map<string, string>();
  /** Receipts returned since the last restart: the next restart must return each of them again. */
  private sinceRestart: string[] = [];
  private readonly common = signingCommon(CHAIN_ID);
  private readonly senders: Account[];
  private readonly tracked: string[];
  private rpc: RpcClient;

  private constructor(
    private readonly options: CampaignOptions,
    private node: NodeProcess,
    private readonly ledger: Ledger,
  ) {
    this.senders = [...DEV_ACCOUNTS.map((a) => accountFromKey(a.privateKey)), ...extraSenderAccounts(options.seed, options.extraSenders)];
    this.tracked = [...this.senders.map((s) => s.address), SINK];
    this.rpc = new RpcClient('127.0.0.1', node.port);
  }

  /** Starts a node on the (empty) data path, funds the extra senders and opens the ledger. */
  static async start(options: CampaignOptions): Promise<CrashCampaign> {
    const node = await startNode({ dataPath: options.dataPath });
    try {
      const rpc = new RpcClient('127.0.0.1', node.port);
      const head = await rpc.call<{ number: string; hash: string }>('eth_getBlockByNumber', ['latest', false]);
      rpc.close();
      const campaign = new CrashCampaign(options, node, new Ledger({ number: Number(head.number), hash: head.hash }));
      await campaign.openLedger(head.number);
      await campaign.fundExtraSenders();
      return campaign;
    } catch (err) {
      await node.kill();
      throw err;
    }
  }

  /** How many receipts the node has returned over the whole campaign. */
  get receiptsRecorded(): number {
    return this.receipts.size;
  }

  async runRound(round: number): Promise<RoundReport> {
    const roundSeed = deriveSeed(this.options.seed, round);
    const random = mulberry32(roundSeed);
    const [min, max] = this.options.killWindowMs;
    const killAfterMs = Math.round(min + random() * (max - min));
    const report: RoundReport = {
      round,
      roundSeed,
      killAfterMs,
      msSinceLastImport: undefined,
      headSeen: -1,
      lastLoggedImport: -1,
      headAfterRestart: -1,
      submitted: 0,
      receiptsSeen: 0,
      receiptsChecked: 0,
      lostReceipts: [],
      inconsistencies: [],
      restartMs: 0,
      blocksChecked: 0,
      txsChecked: 0,
    };

    const loads = await this.presign(random);
    const killed = this.node;
    const receiptsBefore = this.receipts.size;
    const { killedAt } = await this.loadUntilKilled(loads, killAfterMs, report);
    report.submitted = loads.reduce((sum, load) => sum + load.accepted.length, 0);
    report.receiptsSeen = this.receipts.size - receiptsBefore;
    const lastImport = lastLoggedImport(killed.output());
    report.lastLoggedImport = lastImport?.number ?? -1;
    if (lastImport) report.msSinceLastImport = killedAt - lastImport.at;

    const restartStarted = performance.now();
    try {
      this.node = await startNode({ dataPath: this.options.dataPath, readyTimeoutMs: 60_000 });
    } catch (err) {
      report.inconsistencies.push(`the node did not restart: ${firstLine(err)}`);
      report.logTails = { killed: tail(killed.output()), restarted: err instanceof Error ? tail(err.message) : '' };
      throw new CampaignAborted(report);
    }
    report.restartMs = performance.now() - restartStarted;
    this.rpc.close();
    this.rpc = new RpcClient('127.0.0.1', this.node.port);

    try {
      report.headAfterRestart = Number(await this.rpc.call<string>('eth_blockNumber'));
      if (report.headAfterRestart < report.headSeen) {
        report.inconsistencies.push(`restarted at head ${report.headAfterRestart}, behind head ${report.headSeen} seen before the kill`);
      }
      report.receiptsChecked = this.sinceRestart.length;
      report.lostReceipts.push(...(await this.lostAmong(this.sinceRestart)));
      this.sinceRestart = [];
      await this.checkLedgerUpTo(report.headAfterRestart, report);
      await this.checkProduction(report);
    } catch (err) {
      report.inconsistencies.push(`checks failed: ${firstLine(err)}`);
    }
    if (report.inconsistencies.length > 0 || report.lostReceipts.length > 0) {
      report.logTails = { killed: tail(killed.output()), restarted: tail(this.node.output()) };
    }
    return report;
  }

  /** Checks every receipt returned over the whole campaign against the running node. */
  async sweep(): Promise<{ checked: number; lost: string[] }> {
    const hashes = [...this.receipts.keys()];
    return { checked: hashes.length, lost: await this.lostAmong(hashes) };
  }

  /** Stops the running node (SIGTERM). The caller removes the data path. */
  async stop(): Promise<void> {
    this.rpc.close();
    await this.node.stop();
  }

  /** The running node's process, for a caller that must kill it on abort. */
  get pid(): number | undefined {
    return this.node.process.pid;
  }

  private async openLedger(blockNumber: string): Promise<void> {
    const answers = await this.rpc.batch(this.tracked.flatMap((address) => stateCalls(address, blockNumber)));
    this.tracked.forEach((address, i) => {
      this.ledger.balances.set(address, BigInt(resultOf<string>(answers[2 * i]!)));
      this.ledger.nonces.set(address, BigInt(resultOf<string>(answers[2 * i + 1]!)));
    });
  }

  /** One transfer from the first dev account to each extra sender, waited for. */
  private async fundExtraSenders(): Promise<void> {
    const extra = this.senders.slice(DEV_ACCOUNTS.length);
    if (extra.length === 0) return;
    const funder = this.senders[0]!;
    const nonce = BigInt(await this.rpc.call<string>('eth_getTransactionCount', [funder.address, 'latest']));
    const hashes: string[] = [];
    for (const [i, account] of extra.entries()) {
      const tx = signTx(this.common, funder, { ...transferFields(nonce + BigInt(i), FUNDING), to: account.address });
      hashes.push(await this.rpc.call<string>('eth_sendRawTransaction', [tx.raw]));
    }
    for (const hash of hashes) await this.waitForReceipt(hash, PRODUCTION_TIMEOUT_MS);
  }

  private async presign(random: () => number): Promise<SenderLoad[]> {
    const nonces = await this.rpc.batch(this.senders.map((s) => ['eth_getTransactionCount', [s.address, 'latest']]));
    return this.senders.map((account, i) => {
      const first = BigInt(resultOf<string>(nonces[i]!));
      const signed = Array.from({ length: this.options.txsPerSenderPerRound }, (_, k) =>
        signTx(this.common, account, transferFields(first + BigInt(k), 1n + BigInt(Math.floor(random() * 1000)))),
      );
      return { account, signed, accepted: [], minedPrefix: 0 };
    });
  }

  /**
   * Runs the load and the receipt poller until the kill, `killAfterMs` after the load starts. Answers
   * that reach us after the kill signal were still sent by the node before it died: they count.
   */
  private async loadUntilKilled(loads: SenderLoad[], killAfterMs: number, report: RoundReport): Promise<{ killedAt: number }> {
    const node = this.node;
    let killed = false;
    let killedAt = 0;
    const killing = new Promise<void>((resolve) =>
      setTimeout(() => {
        killed = true;
        killedAt = Date.now();
        void node.kill().then(resolve);
      }, killAfterMs),
    );

    const send = async (load: SenderLoad): Promise<void> => {
      let connection: KeepAliveConnection;
      try {
        connection = await KeepAliveConnection.open('127.0.0.1', node.port);
      } catch {
        return;
      }
      try {
        for (const tx of load.signed) {
          while (!killed && load.accepted.length - load.minedPrefix >= this.options.maxUnminedPerSender) await sleep(POLL_MS);
          if (killed) return;
          const answer = await connection.request(jsonPostRequest('127.0.0.1', node.port, rpcBody('eth_sendRawTransaction', [tx.raw])));
          const parsed = JSON.parse(answer.body.toString('utf8')) as BatchAnswer;
          if (parsed.error) {
            if (!killed) report.inconsistencies.push(`eth_sendRawTransaction refused a transaction of ${load.account.address}: ${parsed.error.message}`);
            return;
          }
          load.accepted.push(tx.hash);
        }
      } catch {
        // The node is gone: the kill came.
      } finally {
        connection.close();
      }
    };

    const poll = async (): Promise<void> => {
      const rpc = new RpcClient('127.0.0.1', node.port);
      try {
        while (!killed) {
          const asked = loads.flatMap((load) => load.accepted.slice(load.minedPrefix, load.minedPrefix + RECEIPTS_PER_SENDER_PER_POLL));
          const answers = await rpc.batch([['eth_blockNumber', []], ...asked.map((hash): [string, unknown[]] => ['eth_getTransactionReceipt', [hash]])]);
          const head = answers[0]!.result;
          if (typeof head === 'string') report.headSeen = Math.max(report.headSeen, Number(head));
          asked.forEach((hash, i) => {
            const receipt = answers[i + 1]!.result;
            if (receipt) this.record(hash, receipt as ReceiptJson);
          });
          for (const load of loads) {
            while (load.minedPrefix < load.accepted.length && this.receipts.has(load.accepted[load.minedPrefix]!)) load.minedPrefix++;
          }
          await sleep(POLL_MS);
        }
      } catch {
        // The node is gone.
      } finally {
        rpc.close();
      }
    };

    await Promise.all([killing, poll(), ...loads.map(send)]);
    return { killedAt };
  }

  private record(hash: string, receipt: ReceiptJson): void {
    if (this.receipts.has(hash)) return;
    this.receipts.set(hash, JSON.stringify(receipt));
    this.sinceRestart.push(hash);
  }

  /** Hashes among `hashes` whose receipt the node no longer returns, or returns changed. */
  private async lostAmong(hashes: string[]): Promise<string[]> {
    const lost: string[] = [];
    for (let i = 0; i < hashes.length; i += BATCH) {
      const chunk = hashes.slice(i, i + BATCH);
      const answers = await this.rpc.batch(chunk.map((hash) => ['eth_getTransactionReceipt', [hash]]));
      chunk.forEach((hash, k) => {
        const now = answers[k]!.result;
        if (!now) lost.push(`${hash}: no receipt any more`);
        else if (JSON.stringify(now) !== this.receipts.get(hash)) lost.push(`${hash}: receipt changed from ${this.receipts.get(hash)} to ${JSON.stringify(now)}`);
      });
    }
    return lost;
  }

  /**
   * Applies the blocks after the ledger's checkpoint up to `head` (linked by parent hashes, every
   * transaction with its receipt, nonces in order) and compares the state at the head with it.
   */
  private async checkLedgerUpTo(head: number, report: RoundReport): Promise<void> {
    const { ledger } = this;
    const [anchor] = await this.rpc.batch([['eth_getBlockByNumber', [hex(ledger.checkpoint.number), false]]]);
    const anchorHash = (anchor!.result as BlockJson | null)?.hash;
    if (anchorHash !== ledger.checkpoint.hash) {
      report.inconsistencies.push(`block ${ledger.checkpoint.number} is now ${anchorHash ?? 'missing'}, was ${ledger.checkpoint.hash}`);
      return;
    }
    let parentHash = ledger.checkpoint.hash;
    for (let first = ledger.checkpoint.number + 1; first <= head; first += 10) {
      const numbers = Array.from({ length: Math.min(10, head - first + 1) }, (_, k) => first + k);
      const blocks = await this.rpc.batch(numbers.map((n) => ['eth_getBlockByNumber', [hex(n), true]]));
      for (const [k, answer] of blocks.entries()) {
        const block = answer.result as BlockJson | null;
        if (!block) {
          report.inconsistencies.push(`block ${numbers[k]} is missing below head ${head}`);
          return;
        }
        if (block.parentHash !== parentHash) report.inconsistencies.push(`block ${numbers[k]} does not link to its parent`);
        parentHash = block.hash;
        await this.applyBlock(block, report);
        report.blocksChecked++;
        report.txsChecked += block.transactions.length;
      }
    }
    const headHex = hex(head);
    const state = await this.rpc.batch(this.tracked.flatMap((address) => stateCalls(address, headHex)));
    this.tracked.forEach((address, i) => {
      const balance = state[2 * i]!;
      const nonce = state[2 * i + 1]!;
      if (balance.error || nonce.error) {
        report.inconsistencies.push(`the state at head ${head} cannot be read for ${address}: ${(balance.error ?? nonce.error)!.message}`);
        return;
      }
      if (BigInt(balance.result as string) !== ledger.balances.get(address)) {
        report.inconsistencies.push(`balance of ${address} at head ${head} is ${BigInt(balance.result as string)}, its blocks say ${ledger.balances.get(address)}`);
      }
      if (BigInt(nonce.result as string) !== ledger.nonces.get(address)) {
        report.inconsistencies.push(`nonce of ${address} at head ${head} is ${BigInt(nonce.result as string)}, its blocks say ${ledger.nonces.get(address)}`);
      }
    });
    ledger.checkpoint = { number: head, hash: parentHash };
  }

  private async applyBlock(block: BlockJson, report: RoundReport): Promise<void> {
    const { ledger } = this;
    for (let i = 0; i < block.transactions.length; i += BATCH) {
      const txs = block.transactions.slice(i, i + BATCH);
      const answers = await this.rpc.batch(txs.map((tx) => ['eth_getTransactionReceipt', [tx.hash]]));
      txs.forEach((tx, k) => {
        const receipt = answers[k]!.result as ReceiptJson | null;
        if (!receipt || receipt.blockHash !== block.hash || Number(receipt.transactionIndex) !== i + k) {
          report.inconsistencies.push(`transaction ${tx.hash} of block ${Number(block.number)} has ${receipt ? 'a receipt of another place' : 'no receipt'}`);
          return;
        }
        const from = tx.from.toLowerCase();
        const expectedNonce = ledger.nonces.get(from);
        if (expectedNonce !== undefined) {
          if (BigInt(tx.nonce) !== expectedNonce) report.inconsistencies.push(`transaction ${tx.hash} has nonce ${BigInt(tx.nonce)}, ${from} was at ${expectedNonce}`);
          ledger.nonces.set(from, expectedNonce + 1n);
          ledger.balances.set(from, ledger.balances.get(from)! - BigInt(tx.value) - BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice));
        }
        const to = tx.to?.toLowerCase();
        if (to !== undefined && ledger.balances.has(to) && receipt.status === '0x1') ledger.balances.set(to, ledger.balances.get(to)! + BigInt(tx.value));
      });
    }
  }

  /** A transaction sent after the restart is mined: the node produces blocks with transactions again. */
  private async checkProduction(report: RoundReport): Promise<void> {
    const sender = this.senders[0]!;
    const tx = signTx(this.common, sender, transferFields(this.ledger.nonces.get(sender.address)!, 1n));
    await this.rpc.call('eth_sendRawTransaction', [tx.raw]);
    const receipt = await this.waitForReceipt(tx.hash, PRODUCTION_TIMEOUT_MS);
    if (!receipt) report.inconsistencies.push(`no block with a new transaction within ${PRODUCTION_TIMEOUT_MS / 1000} s of the restart`);
    else if (Number(receipt.blockNumber) <= report.headAfterRestart) report.inconsistencies.push(`the new transaction landed in old block ${Number(receipt.blockNumber)}`);
  }

  private async waitForReceipt(hash: string, timeoutMs: number): Promise<ReceiptJson | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const receipt = await this.rpc.call<ReceiptJson | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) {
        this.record(hash, receipt);
        return receipt;
      }
      await sleep(POLL_MS * 2);
    }
    return undefined;
  }
}

/** A round after which the campaign cannot go on (the node does not start again). */
export class CampaignAborted extends Error {
  constructor(readonly report: RoundReport) {
    super(`round ${report.round}: ${report.inconsistencies.join('; ')}`);
  }
}

/** One line per round; the details of a failed round follow it. */
export function describeRound(report: RoundReport, campaignSeed: number): string {
  const phase = report.msSinceLastImport === undefined ? '' : `, ${report.msSinceLastImport} ms after block ${report.lastLoggedImport}`;
  const line =
    `round ${report.round}: kill at ${report.killAfterMs} ms${phase}; head seen ${report.headSeen}, restarted at ${report.headAfterRestart} ` +
    `in ${(report.restartMs / 1000).toFixed(1)} s; ${report.submitted} submitted, ${report.receiptsSeen} receipts seen, ${report.receiptsChecked} checked; ` +
    `${report.blocksChecked} blocks / ${report.txsChecked} txs checked; inconsistencies ${report.inconsistencies.length}, lost receipts ${report.lostReceipts.length}`;
  if (!report.logTails) return line;
  return [
    line,
    `  FAILED — campaign seed ${campaignSeed}, round seed ${report.roundSeed}`,
    ...report.inconsistencies.map((s) => `  inconsistency: ${s}`),
    ...report.lostReceipts.slice(0, 20).map((s) => `  lost: ${s}`),
    '  --- killed node, last lines ---',
    report.logTails.killed,
    '  --- restarted node, last lines ---',
    report.logTails.restarted,
  ].join('\n');
}

function transferFields(nonce: bigint, value: bigint) {
  return { nonce, to: SINK, value, gasLimit: TRANSFER_GAS, maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: 1n };
}

function stateCalls(address: string, block: string): Array<[string, unknown[]]> {
  return [
    ['eth_getBalance', [address, block]],
    ['eth_getTransactionCount', [address, block]],
  ];
}

function resultOf<T>(answer: BatchAnswer): T {
  if (answer.error) throw new Error(answer.error.message);
  return answer.result as T;
}

/** Sender keys derived from the campaign seed, so a rerun with the same seed sends from the same accounts. */
function extraSenderAccounts(seed: number, count: number): Account[] {
  return Array.from({ length: count }, (_, i) => accountFromKey(`0x${createHash('sha256').update(`basalt crash campaign ${seed} sender ${i}`).digest('hex')}`));
}

function deriveSeed(seed: number, round: number): number {
  return (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + Math.imul(round, 0xc2b2ae35)) >>> 0;
}

/** A small seeded generator: the kill moments and values of a campaign follow from its seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The last "Imported #N" line of a node's output, with its time. */
function lastLoggedImport(output: string): { number: number; at: number } | undefined {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /^(\S+) \|.*\| Imported #(\d+) /.exec(lines[i]!);
    if (match) return { number: Number(match[2]), at: Date.parse(match[1]!) };
  }
  return undefined;
}

function tail(output: string): string {
  return output.trimEnd().split('\n').slice(-LOG_TAIL_LINES).join('\n');
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
