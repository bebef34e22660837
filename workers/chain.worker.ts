/**
 * Chain actor: the one owner of RocksDB. Serves block building and import to consensus, account
 * snapshots to the pool, and chain-owned JSON-RPC methods to transports; announces every new head.
 */
import { workerData } from 'node:worker_threads';
import { exposeControl } from '../src/shared/actors/control.js';
import { Mailbox } from '../src/shared/actors/mailbox.js';
import type { ChainEvents, ChainProtocol, TxPoolProtocol } from '../src/shared/actors/channels.js';
import type { ChainActorData } from '../src/shared/actors/worker-data.js';
import { Chain } from '../src/chain/chain.js';
import type { BuiltBlock, HeadInfo, NewHeadEvent } from '../src/chain/chain.js';
import { chainSpecFromGenesis } from '../src/chain/network-spec.js';
import { bodiesFor, headersFor, importSyncedBlocks } from '../src/chain/block-serving.js';
import { parseGenesisJson } from '../src/shared/ethereum/genesis.js';
import { importChecksFor } from '../src/chain/import-rules.js';
import type { ImportChecks } from '../src/chain/import-rules.js';
import { ChainRpc } from '../src/chain/rpc-handlers.js';
import { callOnState, headerSummaries, headerSummaryByHash } from '../src/chain/qbft-queries.js';
import { HeadWriter } from '../src/shared/shared-memory/head-view.js';
import { Logger, setLogLevel } from '../src/shared/util/log.js';
import { Address, bytesToHex, equalsBytes } from '@ethereumjs/util';

const data = workerData as ChainActorData;
setLogLevel(data.logLevel);
const log = new Logger('Chain');

type ChainMailbox = Mailbox<TxPoolProtocol, ChainProtocol, ChainEvents>;

let chain: Chain | undefined;
let held: BuiltBlock | undefined;
const headView = new HeadWriter(data.headView);
const subscribers: ChainMailbox[] = [];

exposeControl<HeadInfo>({
  async start() {
    const spec = await chainSpecFromGenesis(data.genesisJson, data.networkId);
    chain = await Chain.open(data.dataPath, spec, data.chain);
    const pool: ChainMailbox = new Mailbox(data.ports.txpool);
    const rpc = new ChainRpc(chain, {
      rpcGasCap: data.rpcGasCap,
      minGasPrice: data.minGasPrice,
      rpcMaxLogsRange: data.rpcMaxLogsRange,
      minPriorityFee: data.minPriorityFee,
      pendingNonce: (address) => pool.request('nextNonce', { address }),
    });
    const handlers = makeHandlers(chain, rpc);
    const consensus: ChainMailbox = new Mailbox(data.ports.consensus);
    subscribers.push(pool, consensus);
    for (const port of [data.ports.txpool, data.ports.consensus, ...data.ports.http]) {
      const mailbox = port === data.ports.txpool ? pool : port === data.ports.consensus ? consensus : new Mailbox(port);
      mailbox.serve(handlers);
    }
    publish(chain.getHead());
    return chain.getHead();
  },
  async stop() {
    // The write lock inside Chain lets a block in progress finish before the database closes.
    if (chain) await chain.close();
    log.info('Database closed');
  },
});

function isDelegation(code: Uint8Array): boolean {
  return code.length === 23 && code[0] === 0xef && code[1] === 0x01 && code[2] === 0x00;
}

function publish(head: HeadInfo): void {
  headView.publish(head.number, head.hash);
}

function announce(event: NewHeadEvent): void {
  publish(event.head);
  for (const s of subscribers) s.emit('newHead', event);
  log.info(
    `Imported #${event.head.number} / ${event.includedTxHashes.length} tx / ${bytesToHex(event.head.hash)}`,
  );
}

/** The checks of blocks from peers, made on first use: `blocks import`'s. */
let syncChecks: Promise<ImportChecks> | undefined;

function makeHandlers(chain: Chain, rpc: ChainRpc): Parameters<ChainMailbox['serve']>[0] {
  return {
    rpc: (call) => rpc.handle(call.method, call.params),
    head: () => chain.getHead(),
    async accounts({ addresses }) {
      const head = chain.getHead();
      const accounts = await chain.withStateAt(head.stateRoot, async (vm) =>
        Promise.all(
          addresses.map(async (a) => {
            const address = new Address(a);
            const account = await vm.stateManager.getAccount(address);
            // An EIP-7702 delegation (0xef0100 ‖ address) may still send transactions.
            const hasCode = account?.isContract() === true && !isDelegation(await vm.stateManager.getCode(address));
            return { nonce: account?.nonce ?? 0n, balance: account?.balance ?? 0n, hasCode };
          }),
        ),
      );
      return { head, accounts };
    },
    async build(req) {
      held = await chain.buildBlock(req);
      return {
        number: held.block.header.number,
        hash: held.hash,
        txCount: held.block.transactions.length,
        gasUsed: held.block.header.gasUsed,
        rejected: held.rejected,
      };
    },
    async importBuilt({ hash, sealedExtraData }) {
      if (!held || !equalsBytes(held.hash, hash)) throw new Error('no built block with that hash is held');
      const built = held;
      held = undefined;
      const event = await chain.importBuilt(built, sealedExtraData);
      announce(event);
      return { number: event.head.number, hash: event.head.hash };
    },
    async discardBuilt() {
      held = undefined;
      await chain.discardBuilt();
      return null;
    },
    heldBlock: () => (held ? held.block.serialize() : null),
    consensusHeaders: ({ from, to }) => headerSummaries(chain, from, to),
    consensusHeaderByHash: ({ hash }) => headerSummaryByHash(chain, hash),
    consensusCall: ({ blockNumber, to, data: callData }) => callOnState(chain, blockNumber, to, callData),
    async consensusImportBlock({ rlp }) {
      const event = await chain.importBlock(chain.spec.decodeBlock(rlp));
      announce(event);
      return { number: event.head.number, hash: event.head.hash };
    },
    // Only QBFT consensus asks: its blocks follow the QBFT rules (consensus checked the header already).
    consensusValidateBlock: ({ rlp }) => chain.validateBlock(rlp, { consensus: 'qbft' }),
    syncHeaders: (query) => headersFor(chain, query),
    syncBodies: ({ hashes }) => bodiesFor(chain, hashes),
    async syncImport({ blocks }) {
      syncChecks ??= importChecksFor(chain, parseGenesisJson(data.genesisJson), false);
      return importSyncedBlocks(chain, blocks, await syncChecks, announce);
    },
  };
}
