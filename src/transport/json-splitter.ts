/**
 * Splits a stream of concatenated JSON values (what an IPC client writes: objects and arrays, with or
 * without whitespace or newlines between them) into one text per value, however the stream was cut
 * into reads: a value split across reads is kept until its end arrives. Besu parses each read on its
 * own (rpc-auth-cli.md §7), which fails a value that spans two reads; here it does not.
 *
 * Only the boundaries are found here (brackets outside strings); whether the text between them is
 * valid JSON is JSON.parse's question. Top-level scalars are skipped as Besu skips them; anything else
 * between values is a parse error, and the scan resumes after it.
 */

export type SplitItem =
  | { kind: 'value'; text: string }
  /** Something between values that is not JSON: answered with a parse error. */
  | { kind: 'garbage' }
  /** A value outgrew the limit: the connection should be closed (nothing buffered is kept). */
  | { kind: 'too-large' };

const SCALAR = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)$/;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Characters that end a top-level scalar token. */
function endsToken(c: number): boolean {
  return isWhitespace(c) || c === 0x7b || c === 0x5b || c === 0x22 || c === 0x7d || c === 0x5d || c === 0x2c || c === 0x3a;
}

type State = 'between' | 'value' | 'string-in-value' | 'top-string' | 'top-token';

export class JsonValueSplitter {
  /** Unconsumed input; `pos` is how far it has been scanned. */
  private buffer = '';
  private pos = 0;
  /** Where the value or top-level token being scanned starts in `buffer`. */
  private start = 0;
  private state: State = 'between';
  private depth = 0;
  private escaped = false;

  /** `maxValueLength`: the longest value (in characters) kept while waiting for its end. */
  constructor(private readonly maxValueLength: number) {}

  /** Feeds the next read; answers the values (and errors) it completes, in stream order. */
  push(chunk: string): SplitItem[] {
    this.buffer += chunk;
    const items: SplitItem[] = [];
    const text = this.buffer;
    let pos = this.pos;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      switch (this.state) {
        case 'between':
          if (isWhitespace(c)) {
            pos++;
          } else if (c === 0x7b || c === 0x5b) {
            this.state = 'value';
            this.start = pos++;
            this.depth = 1;
          } else if (c === 0x22) {
            this.state = 'top-string';
            this.escaped = false;
            pos++;
          } else if (endsToken(c)) {
            // One error for a run of stray characters.
            if (items.at(-1)?.kind !== 'garbage') items.push({ kind: 'garbage' });
            pos++;
          } else {
            this.state = 'top-token';
            this.start = pos++;
          }
          break;
        case 'value':
          if (c === 0x22) {
            this.state = 'string-in-value';
            this.escaped = false;
          } else if (c === 0x7b || c === 0x5b) {
            this.depth++;
          } else if (c === 0x7d || c === 0x5d) {
            if (--this.depth === 0) {
              items.push({ kind: 'value', text: text.slice(this.start, pos + 1) });
              this.state = 'between';
            }
          }
          pos++;
          break;
        case 'string-in-value':
        case 'top-string':
          if (this.escaped) this.escaped = false;
          else if (c === 0x5c) this.escaped = true;
          else if (c === 0x22) this.state = this.state === 'top-string' ? 'between' : 'value';
          pos++;
          break;
        case 'top-token':
          if (endsToken(c)) {
            if (!SCALAR.test(text.slice(this.start, pos))) items.push({ kind: 'garbage' });
            this.state = 'between';
          } else {
            pos++;
          }
          break;
      }
    }
    // Keep only what an unfinished value or token still needs.
    const keepFrom = this.state === 'between' || this.state === 'top-string' ? pos : this.start;
    this.buffer = text.slice(keepFrom);
    this.pos = pos - keepFrom;
    this.start = 0;
    if (this.buffer.length > this.maxValueLength) {
      this.buffer = '';
      this.pos = 0;
      this.state = 'between';
      items.push({ kind: 'too-large' });
    }
    return items;
  }
}
