// `basalt rlp encode [--type=QBFT_EXTRA_DATA] [--from=<FILE>] [--to=<FILE>]` (qbft-and-p2p.md §9.3): a JSON
// array of validator addresses, from the file or standard input, as the genesis extraData of that type.
// As with Besu the default type is IBFT_EXTRA_DATA, so a QBFT network names its type. Every failure is a
// parameter error (exit 2) with Besu's message, as Besu reports them.

import { Flags } from '@oclif/core';
import { CliUsageError, invalidValue } from '../../errors.js';
import { EXTRA_DATA_TYPES, genesisExtraDataOf, parseAddress, toHex, type ExtraDataType } from '../../genesis-extra-data.js';
import { BasaltSubcommand, VERSION_FLAG } from '../../subcommand.js';

const FLAGS = {
  from: Flags.string({ summary: 'File containing JSON object to encode (default: standard input).', helpValue: '<FILE>' }),
  to: Flags.string({ summary: 'File to write encoded RLP string to (default: standard output).', helpValue: '<FILE>' }),
  type: Flags.string({
    summary: `Type of the RLP data to encode, possible values are ${EXTRA_DATA_TYPES.join(', ')}.`,
    helpValue: '<type>',
    default: EXTRA_DATA_TYPES[0],
  }),
  ...VERSION_FLAG,
};

const MAPPING_FAILED = 'Unable to map the JSON data with selected type. Please check JSON input format.';

export default class RlpEncodeCommand extends BasaltSubcommand {
  static override summary = 'Encode a typed JSON value to a RLP hex string.';
  static override description =
    'For QBFT_EXTRA_DATA the JSON value is an array of validator addresses (0x optional), in the order they get in the genesis extraData.';
  static override usage = 'rlp encode [--type=<type>] [--from=<FILE>] [--to=<FILE>]';
  static override examples = ['<%= config.bin %> rlp encode --from=validators.json --type=QBFT_EXTRA_DATA'];
  static override flags = FLAGS;

  async run(): Promise<number> {
    const flags = await this.parseOwnFlags(FLAGS);
    if (this.versionShown(flags)) return 0;
    const type = extraDataType(flags.type);
    const input = flags.from === undefined ? (await this.context.readStdin()).replace(/\s/g, '') : readInput(this.context.readFile, flags.from);
    if (input === '') throw new CliUsageError('An error occurred while trying to read the JSON data.');
    const encoded = genesisExtraDataOf(type, validatorsOf(input));
    this.writeResult(toHex(encoded), flags.to, (reason) => new CliUsageError(`An error occurred while trying to write the RLP string. ${reason}`));
    return 0;
  }
}

function extraDataType(given: string): ExtraDataType {
  const type = EXTRA_DATA_TYPES.find((name) => name === given.toUpperCase());
  if (type === undefined) throw invalidValue('--type', `expected one of [${EXTRA_DATA_TYPES.join(', ')}] (case-insensitive) but was '${given}'`);
  return type;
}

function readInput(readFile: (path: string) => string, path: string): string {
  try {
    return readFile(path);
  } catch {
    throw new CliUsageError('Unable to read JSON file.');
  }
}

/** The addresses of a JSON array of address strings, in order. */
function validatorsOf(json: string): Uint8Array[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new CliUsageError(`Unable to load the JSON data. Please check JSON input format. ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(value)) throw new CliUsageError(`${MAPPING_FAILED} Expected a JSON array of validator addresses.`);
  return value.map((entry: unknown, index) => {
    const address = typeof entry === 'string' ? parseAddress(entry) : undefined;
    if (address === undefined) {
      throw new CliUsageError(`${MAPPING_FAILED} Entry ${index} (${JSON.stringify(entry)}) is not an address of 40 hex digits.`);
    }
    return address;
  });
}
