/**
 * Registry entries: QBFT group (qbft_*), owned by the consensus actor.
 * Spread into the ONE registry in ../registry.ts; see MethodSpec there for what an entry holds.
 */
import type { MethodSpec } from '../registry.js';

export const qbftMethods = {} as const satisfies Record<string, MethodSpec>;
