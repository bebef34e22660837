// `basalt [--data-path=<DIR>] public-key export-address [--node-private-key-file=<FILE>] [--to=<FILE>]`: the
// address of the node key, `0x` + 40 hex digits, as Besu prints it: the node's validator address.

import { NodeKeyExportCommand } from '../../key-export.js';

export default class PublicKeyExportAddressCommand extends NodeKeyExportCommand {
  static override summary = 'Export the node address (its QBFT validator address).';
  static override description =
    'The key is --node-private-key-file, or <data-path>/key (created when absent, as when the node starts). Prints 0x followed by 40 hex digits.';
  static override examples = ['<%= config.bin %> --data-path=/var/lib/basalt public-key export-address'];

  protected readonly output = 'address';
}
