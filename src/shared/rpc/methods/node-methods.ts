/**
 * Registry entries: Node facts a transport answers itself, without a hop: chain id and head number
 * (shared memory), version, network, peer count, log level, rpc_modules.
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';
import { RpcError, RpcErrors } from '../errors.js';
import { LOG_LEVELS } from '../../util/log.js';
import type { LogLevel } from '../../util/log.js';
import { parseSha3Input } from '../params.js';
import { noParams, type LogLevelParams, type Sha3Params } from './param-shapes.js';

export const nodeMethods = {
  eth_blockNumber: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_chainId: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_syncing: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_sendTransaction: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_accounts: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_hashrate: { group: 'ETH', owner: 'transport', parseParams: noParams },
  eth_protocolVersion: { group: 'ETH', owner: 'transport', parseParams: noParams },
  net_version: { group: 'NET', owner: 'transport', parseParams: noParams },
  net_listening: { group: 'NET', owner: 'transport', parseParams: noParams },
  net_peerCount: { group: 'NET', owner: 'transport', parseParams: noParams },
  net_services: { group: 'NET', owner: 'transport', parseParams: noParams },
  web3_clientVersion: { group: 'WEB3', owner: 'transport', parseParams: noParams },
  web3_sha3: {
    group: 'WEB3',
    owner: 'transport',
    exactParamCount: 1,
    parseParams: (raw: readonly unknown[]): Sha3Params => ({ data: parseSha3Input(raw[0]) }),
  },
  rpc_modules: { group: 'RPC', owner: 'transport', parseParams: noParams },
  /** Besu's levels, exact case; logger-name filters are accepted (Basalt has one logger tree). */
  admin_changeLogLevel: {
    group: 'ADMIN',
    owner: 'transport',
    parseParams: (raw: readonly unknown[]): LogLevelParams => {
      const level = raw[0];
      if (typeof level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new RpcError(RpcErrors.INVALID_LOG_LEVEL_PARAMS);
      }
      const filters = raw[1];
      if (filters !== undefined && filters !== null && (!Array.isArray(filters) || filters.some((f) => typeof f !== 'string'))) {
        throw new RpcError(RpcErrors.INVALID_LOG_FILTER_PARAMS);
      }
      return { level: level as LogLevel };
    },
  },
} as const satisfies Record<string, MethodSpec>;
