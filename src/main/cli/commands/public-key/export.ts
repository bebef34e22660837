// `basalt [--data-path=<DIR>] public-key export [--node-private-key-file=<FILE>] [--to=<FILE>]`: the node's
// public key (its devp2p node id), `0x` + 128 hex digits, as Besu prints it.

import { NodeKeyExportCommand } from '../../key-export.js';

export default class PublicKeyExportCommand extends NodeKeyExportCommand {
  static override summary = 'Export the node public key (the node id of its enode).';
  static override description =
    'The key is --node-private-key-file, or <data-path>/key (created when absent, as when the node starts). Prints 0x followed by 128 hex digits.';
  static override examples = ['<%= config.bin %> --data-path=/var/lib/basalt public-key export --to=/var/lib/basalt/key.pub'];

  protected readonly output = 'public key';
}
