/**
 * Steady load for memory soaks (bench/soak.ts and test/e2e/soak-short.test.ts): transfers at a paced
 * rate from a fixed set of funded senders, readers asking `eth_getBalance` and `eth_getBlockByNumber`
 * beside them, and a follower counting what the blocks include. Open loop: the rate does not bend to
 * the node's answers, so a node that slows down shows a backlog instead of a lower load.
 */
import { toBeHex } from 'ethers';
import { DEV_ACCOUNTS } from '../../test/helpers/dev-accounts.js';
import { jsonPostRequest, KeepAliveConnection, rpcBody, RpcClient } from './http-client.js';
import type { HttpAnswer } from './http-client.js';
import { accountFromKey, randomAccount, signingCommon, signTx } from './signing.js';
import type { Account } from './signing.js';
import { MessageTally } from './stats.js';
import type { Common } from '@ethereumjs/common';

const HOST = '127.0.0.1';
const GWEI = 10n ** 9n;
const TRANSFER_GAS = 21_000n;
/** Pacing granularity: credits are handed out this often. */
const TICK_MS = 50;
/** Credits not taken within this many seconds of load are dropped (and counted as missed). */
const MAX_BACKLOG_SECONDS = 2;

export interface SoakLoadOptions {
  port: number;
  /** Transfers per second, spread evenly over the senders. */
  rate: number;
  senders: number;
  /** Read requests per second (0: none). */
  readRate: number;
  /** Connections carrying the transfers; each holds one request at a time. */
  connections: number;
  /** How long the load will run, to fund the senders for it. */
  seconds: number;
}

/** Running totals since the load started; take differences between two snapshots for a window. */
export interface SoakCounters {
  /** Transfers sent and answered with a transaction hash. */
  accepted: number;
  /** JSON-RPC errors and non-200 answers to transfers (`rejections()` has their messages). */
  rejected: number;
  /** Transfer credits the senders could not use in time (the node answered too slowly). */
  missed: number;
  /** Requests that got no answer even on a second connection. */
  transportErrors: number;
  reads: number;
  /** Failed reads (`readFailures()` has their messages). */
  readErrors: number;
  /** Transactions in the blocks since the load started. */
  included: number;
  head: number;
}

/** What the paced loops share: a connection that is reopened when the server closed it. */
class Lane {
  private connection: KeepAliveConnection | undefined;

  constructor(private readonly port: number) {}

  /** Sends `bytes`, once more on a new connection when the first one fails; throws when both fail. */
  async send(bytes: Buffer): Promise<HttpAnswer> {
    const attempt = async (): Promise<HttpAnswer> => {
      if (!this.connection?.isOpen) this.connection = await KeepAliveConnection.open(HOST, this.port);
      try {
        return await this.connection.request(bytes);
      } catch (err) {
        this.close();
        throw err;
      }
    };
    return attempt().catch(attempt);
  }

  close(): void {
    this.connection?.close();
    this.connection = undefined;
  }
}

/** Credits handed out at `rate` per second, taken by loops that wait for them. */
class Pacer {
  private credits = 0;
  private handedOut = 0;
  private waiting: Array<() => void> = [];
  private readonly startedAt = performance.now();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  /** Credits dropped because nobody took them within MAX_BACKLOG_SECONDS. */
  missed = 0;

  constructor(private readonly rate: number) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** Resolves with true when a credit is available, false once stopped. */
  take(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (this.credits > 0) {
      this.credits--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => this.waiting.push(() => resolve(!this.stopped)));
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const wake of this.waiting.splice(0)) wake();
  }

  private tick(): void {
    const due = Math.floor((this.rate * (performance.now() - this.startedAt)) / 1000);
    this.credits += due - this.handedOut;
    this.handedOut = due;
    const cap = Math.max(1, this.rate * MAX_BACKLOG_SECONDS);
    if (this.credits > cap) {
      this.missed += this.credits - cap;
      this.credits = cap;
    }
    while (this.credits > 0 && this.waiting.length > 0) {
      this.credits--;
      this.waiting.shift()!();
    }
  }
}

export class SoakLoad {
  private readonly counters: SoakCounters = { accepted: 0, rejected: 0, missed: 0, transportErrors: 0, reads: 0, readErrors: 0, included: 0, head: 0 };
  private readonly rejectedBy = new MessageTally();
  private readonly readFailedBy = new MessageTally();
  private readonly lanes: Lane[] = [];
  private readonly pacers: Pacer[] = [];
  private readonly loops: Array<Promise<void>> = [];
  private readonly nonces: bigint[];
  private nextSender = 0;
  private requestId = 1;
  private following = true;

  private constructor(
    private readonly opts: SoakLoadOptions,
    private readonly common: Common,
    private readonly senders: Account[],
    private readonly fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
    private readonly rpc: RpcClient,
    private readonly startHead: number,
  ) {
    this.nonces = senders.map(() => 0n);
    this.counters.head = startHead;
  }

  /**
   * Creates `senders` accounts and funds them from the dev accounts for `seconds` of load (waiting
   * until the funding is mined). Nothing is sent yet.
   */
  static async prepare(opts: SoakLoadOptions): Promise<SoakLoad> {
    const rpc = new RpcClient(HOST, opts.port);
    const common = signingCommon(Number(await rpc.call<string>('eth_chainId')));
    const head = await rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
    const maxPriorityFeePerGas = 1n * GWEI;
    // Blocks stay far below the dev chain's gas target, so the base fee only falls: this always suffices.
    const fees = { maxFeePerGas: 2n * BigInt(head.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas, maxPriorityFeePerGas };
    const senders = Array.from({ length: opts.senders }, () => randomAccount());
    const perSender = BigInt(Math.ceil((opts.rate * opts.seconds) / opts.senders) + 1);
    const budget = perSender * TRANSFER_GAS * fees.maxFeePerGas + 10n ** 18n;

    // The first dev account holds 200 ETH, the other two 90,000: fund from those.
    const funders = DEV_ACCOUNTS.slice(1).map((a) => accountFromKey(a.privateKey));
    const nonces = await Promise.all(funders.map(async (f) => BigInt(await rpc.call<string>('eth_getTransactionCount', [f.address, 'pending']))));
    const lane = new Lane(opts.port);
    try {
      for (const [index, sender] of senders.entries()) {
        const f = index % funders.length;
        const tx = signTx(common, funders[f]!, { nonce: nonces[f]!++, to: sender.address, value: budget, gasLimit: TRANSFER_GAS, ...fees });
        const answer = await lane.send(jsonPostRequest(HOST, opts.port, rpcBody('eth_sendRawTransaction', [tx.raw])));
        const error = errorOf(answer);
        if (error !== undefined) throw new Error(`funding sender ${sender.address} failed: ${error}`);
      }
    } finally {
      lane.close();
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      const mined = await Promise.all(funders.map(async (f) => BigInt(await rpc.call<string>('eth_getTransactionCount', [f.address, 'latest']))));
      if (mined.every((n, f) => n >= nonces[f]!)) break;
      if (Date.now() > deadline) throw new Error('the funding transactions were not mined within 60 s');
      await sleep(250);
    }
    const startHead = Number(await rpc.call<string>('eth_blockNumber'));
    return new SoakLoad(opts, common, senders, fees, rpc, startHead);
  }

  /** Starts sending, reading and following blocks. */
  start(): void {
    const transfers = new Pacer(this.opts.rate);
    this.pacers.push(transfers);
    for (let i = 0; i < this.opts.connections; i++) this.loops.push(this.transferLoop(transfers, this.lane()));
    if (this.opts.readRate > 0) {
      const reads = new Pacer(this.opts.readRate);
      this.pacers.push(reads);
      // Reads are quick: two connections carry any sensible read rate.
      for (let i = 0; i < 2; i++) this.loops.push(this.readLoop(reads, this.lane()));
    }
    this.loops.push(this.follow());
  }

  /** A copy of the running totals. */
  snapshot(): SoakCounters {
    return { ...this.counters, missed: this.pacers[0]?.missed ?? 0 };
  }

  /** Why transfers were rejected, most frequent first. */
  rejections(): Array<[string, number]> {
    return this.rejectedBy.entries();
  }

  /** Why reads failed, most frequent first. */
  readFailures(): Array<[string, number]> {
    return this.readFailedBy.entries();
  }

  /** Stops every loop, waits for requests in flight and closes the connections. */
  async stop(): Promise<void> {
    this.following = false;
    for (const pacer of this.pacers) pacer.stop();
    await Promise.all(this.loops);
    for (const lane of this.lanes) lane.close();
    this.rpc.close();
  }

  private lane(): Lane {
    const lane = new Lane(this.opts.port);
    this.lanes.push(lane);
    return lane;
  }

  /**
   * Senders take turns, so with more senders than connections a sender's next nonce leaves only
   * after its previous one was answered.
   */
  private async transferLoop(pacer: Pacer, lane: Lane): Promise<void> {
    while (await pacer.take()) {
      const s = this.nextSender;
      this.nextSender = (s + 1) % this.senders.length;
      const tx = signTx(this.common, this.senders[s]!, {
        nonce: this.nonces[s]!++,
        to: this.senders[(s + 1) % this.senders.length]!.address,
        value: 1n,
        gasLimit: TRANSFER_GAS,
        ...this.fees,
      });
      try {
        const answer = await lane.send(jsonPostRequest(HOST, this.opts.port, rpcBody('eth_sendRawTransaction', [tx.raw], this.requestId++)));
        const error = errorOf(answer);
        if (error === undefined) {
          this.counters.accepted++;
        } else {
          this.counters.rejected++;
          this.rejectedBy.add(error);
        }
      } catch {
        this.counters.transportErrors++;
      }
    }
  }

  private async readLoop(pacer: Pacer, lane: Lane): Promise<void> {
    let turn = 0;
    while (await pacer.take()) {
      const head = this.counters.head;
      const request =
        turn++ % 2 === 0
          ? rpcBody('eth_getBalance', [this.senders[turn % this.senders.length]!.address, 'latest'], this.requestId++)
          : // Half the blocks at the head, half anywhere in the chain so far: recent and cold reads both.
            rpcBody('eth_getBlockByNumber', [turn % 4 === 1 ? 'latest' : toBeHex(Math.floor(Math.random() * (head + 1))), false], this.requestId++);
      try {
        const error = errorOf(await lane.send(jsonPostRequest(HOST, this.opts.port, request)));
        if (error === undefined) this.counters.reads++;
        else this.readFailed(error);
      } catch (err) {
        this.readFailed(err instanceof Error ? err.message : String(err));
      }
    }
  }

  /** Counts the transactions of every new block, twice a second. */
  private async follow(): Promise<void> {
    const rpc = new RpcClient(HOST, this.opts.port);
    let next = this.startHead + 1;
    try {
      while (this.following) {
        const head = Number(await rpc.call<string>('eth_blockNumber'));
        for (; next <= head; next++) {
          const block = await rpc.call<{ transactions: string[] }>('eth_getBlockByNumber', [toBeHex(next), false]);
          this.counters.included += block.transactions.length;
        }
        this.counters.head = head;
        await sleep(500);
      }
    } catch (err) {
      // The node went away: the caller sees it from its own checks.
      if (this.following) this.readFailed(`block follower: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      rpc.close();
    }
  }

  private readFailed(message: string): void {
    this.counters.readErrors++;
    this.readFailedBy.add(message);
  }
}

/** The JSON-RPC error message (or HTTP status) of an answer, undefined for a result. */
function errorOf(answer: HttpAnswer): string | undefined {
  if (answer.status !== 200) return `HTTP ${answer.status}`;
  try {
    const parsed = JSON.parse(answer.body.toString('utf8')) as { error?: { message?: string } };
    return parsed.error === undefined ? undefined : (parsed.error.message ?? JSON.stringify(parsed.error));
  } catch {
    return `unparseable answer: ${answer.body.toString('utf8').slice(0, 80)}`;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
