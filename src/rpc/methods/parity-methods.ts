/**
 * Registry entries: The rest of Besu's ETH/NET/WEB3/TXPOOL/ADMIN/MINER/DEBUG methods (Besu parity).
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';

export const parityMethods = {} as const satisfies Record<string, MethodSpec>;
