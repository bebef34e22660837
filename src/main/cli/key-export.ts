// `public-key export` and `public-key export-address` (qbft-and-p2p.md §9.4): the node key is found as the
// node finds it (node-key-file.ts: --node-private-key-file, the dev validator, or <data-path>/key, created
// when absent, as Besu does), and one thing derived from it is printed or written to --to.

import { Flags } from '@oclif/core';
import { CliUsageError, invalidValue } from './errors.js';
import { BasaltSubcommand, VERSION_FLAG } from './subcommand.js';

const KEY_EXPORT_FLAGS = {
  to: Flags.string({ summary: 'File to write the output to instead of standard output.', helpValue: '<FILE>' }),
  'ec-curve': Flags.string({ summary: 'Elliptic curve of the key (secp256k1, the only one Basalt supports).', helpValue: '<NAME>' }),
  ...VERSION_FLAG,
};

export abstract class NodeKeyExportCommand extends BasaltSubcommand {
  static override flags = KEY_EXPORT_FLAGS;
  static override usage = '[--to=<FILE>] [--node-private-key-file=<FILE>] [NODE OPTIONS]';

  /** What the command prints of the key. */
  protected abstract readonly output: 'public key' | 'address';

  async run(): Promise<number> {
    const { flags, options } = await this.parseWithNodeOptions(KEY_EXPORT_FLAGS);
    if (this.versionShown(flags)) return 0;
    const curve = flags['ec-curve'];
    if (curve !== undefined && curve.toLowerCase() !== 'secp256k1') throw invalidValue('--ec-curve', `'${curve}' is not supported; Basalt supports secp256k1 only`);
    return this.reporting(async () => {
      // Loaded here so that parameter errors never load the key code and its curve.
      const { formatAddress, formatPublicKey, nodeKeyOf } = await import('../supervisor/node-key-file.js');
      const { StartupError } = await import('../supervisor/network.js');
      let nodeKey: Uint8Array;
      try {
        nodeKey = nodeKeyOf(options);
      } catch (error) {
        // Besu reports a missing or unreadable key file as a parameter error.
        if (error instanceof StartupError) throw new CliUsageError(error.message);
        throw error;
      }
      this.writeResult(this.output === 'address' ? formatAddress(nodeKey) : formatPublicKey(nodeKey), flags.to);
      return 0;
    });
  }
}
