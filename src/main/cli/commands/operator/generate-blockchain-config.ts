// `basalt operator generate-blockchain-config --config-file=<FILE> --to=<DIRECTORY>` (qbft-and-p2p.md §9.2):
// Besu's options and their parameter errors (exit 2); the work, and its failures (exit 1), in
// ../../blockchain-config.ts.

import { Flags } from '@oclif/core';
import { BasaltSubcommand, requireOptions, VERSION_FLAG } from '../../subcommand.js';

const FLAGS = {
  'config-file': Flags.string({ summary: 'Configuration file (JSON) with the genesis and the nodes to generate or import.', helpValue: '<FILE>' }),
  to: Flags.string({ summary: 'Directory to write output files to (must not exist, or be empty).', helpValue: '<DIRECTORY>' }),
  'genesis-file-name': Flags.string({ summary: 'Name of the genesis file.', helpValue: '<FILE>', default: 'genesis.json' }),
  'private-key-file-name': Flags.string({ summary: 'Name of the private key file in each node folder.', helpValue: '<FILE>', default: 'key.priv' }),
  'public-key-file-name': Flags.string({ summary: 'Name of the public key file in each node folder.', helpValue: '<FILE>', default: 'key.pub' }),
  ...VERSION_FLAG,
};

export default class OperatorGenerateBlockchainConfigCommand extends BasaltSubcommand {
  static override summary = 'Generate node keypairs and genesis file with RLP encoded extra data.';
  static override description =
    'From a JSON file with a "genesis" object and "blockchain": {"nodes": {"generate": true, "count": N}} (or {"keys": [...]}), ' +
    'writes the genesis file with the QBFT extraData of the nodes, and one folder per node, named by its address, with its keys.';
  static override usage =
    'operator generate-blockchain-config --config-file=<FILE> --to=<DIRECTORY> [--genesis-file-name=<FILE>] [--private-key-file-name=<FILE>] [--public-key-file-name=<FILE>]';
  static override examples = [
    '<%= config.bin %> operator generate-blockchain-config --config-file=qbftConfigFile.json --to=networkFiles --private-key-file-name=key',
  ];
  static override flags = FLAGS;

  async run(): Promise<number> {
    const flags = await this.parseOwnFlags(FLAGS);
    if (this.versionShown(flags)) return 0;
    requireOptions(flags, { 'config-file': '<FILE>', to: '<DIRECTORY>' });
    const configFile = flags['config-file']!;
    const to = flags.to!;
    const names = { genesis: flags['genesis-file-name'], privateKey: flags['private-key-file-name'], publicKey: flags['public-key-file-name'] };
    return this.reporting(async () => {
      // Loaded here so that listing the commands and parameter errors never load the curve code.
      const { generateBlockchainConfig } = await import('../../blockchain-config.js');
      generateBlockchainConfig({ configFile, to, names }, this.context.readFile, (line) => this.context.stdout(`${line}\n`));
      return 0;
    });
  }
}

