// Command-line parameter errors. Besu (picocli) prints the message, an optional suggestion line, a blank
// line and a pointer to the full help, then exits with code 2 — scripts and operators match on that text,
// so the wording of every message thrown as a CliUsageError follows Besu's.

export const BIN_NAME = 'basalt';

/** Exit code for a parameter error (picocli's `exitCodeOnInvalidInput`). */
export const USAGE_ERROR_EXIT_CODE = 2;

export class CliUsageError extends Error {
  /** A full extra line printed after the message, e.g. `Possible solutions: --rpc-http-port, ...`. */
  readonly suggestion: string | undefined;

  constructor(message: string, suggestion?: string) {
    super(message);
    this.name = 'CliUsageError';
    this.suggestion = suggestion;
  }
}

/** The exact text written to stderr for a parameter error (ends with a newline). */
export function formatUsageError(error: CliUsageError): string {
  const lines = [error.message];
  if (error.suggestion !== undefined) lines.push(error.suggestion);
  lines.push('', 'To display full help:', `${BIN_NAME} [COMMAND] --help`);
  return lines.join('\n') + '\n';
}

/** picocli's `Invalid value for option '<name>': <reason>` prefix. */
export function invalidValue(optionName: string, reason: string): CliUsageError {
  return new CliUsageError(`Invalid value for option '${optionName}': ${reason}`);
}
