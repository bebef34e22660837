/**
 * What QBFT decides about a height from the chain alone: the chain thread computes it (validators,
 * settings, tally) and consensus runs the height on it, so it lives where both threads may load it.
 */
import type { QbftBlockSettings } from './schedule.js';
import type { VoteTally } from './validators.js';

/** What the machine needs to know about the parent of the height it works on. */
export interface ParentInfo {
  number: bigint;
  hash: Uint8Array;
  timestamp: bigint;
  coinbase: Uint8Array;
  gasLimit: bigint;
}

/** Everything about height h that is decided by the chain, computed by the driver at each new head. */
export interface HeightContext {
  height: bigint;
  parent: ParentInfo;
  /** validators(h), sorted ascending. */
  validators: Uint8Array[];
  /** Settings for block h (period, mode, reward...). */
  settings: QbftBlockSettings;
  /** Block-header mode: the tally after the parent, from which this node picks its vote. */
  tally?: VoteTally;
  /** London activation block when after genesis: the gas-limit rule doubles the parent's limit there. */
  londonBlock?: bigint;
}
