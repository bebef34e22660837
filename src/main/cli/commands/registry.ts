// Subcommands by id (`blocks import`, `password hash`, ...): adding one is adding its class here.
// Words before the subcommand belong to the node command (Besu: `besu --data-path=x blocks import ...`).

import type { BasaltCommandClass } from './base.js';
import { BlocksImportCommand } from './blocks-import.js';

export const SUBCOMMANDS: ReadonlyMap<string, BasaltCommandClass> = new Map<string, BasaltCommandClass>([
  [BlocksImportCommand.id, BlocksImportCommand],
]);
