/**
 * Sending fuzz bodies to a node's JSON-RPC port and judging each answer: it must be HTTP with a
 * JSON-RPC body (a response object, an array of them, or nothing for a notification), or one of
 * Besu's documented non-JSON answers (413 `Request Entity Too Large`). Shared by
 * test/e2e/fuzz-http.test.ts and bench/fuzz.ts.
 */
import { jsonPostRequest, KeepAliveConnection, type HttpAnswer } from '../../../bench/lib/http-client.js';

export type Verdict =
  | { kind: 'ok' }
  /** An answer that is neither JSON-RPC nor a documented non-JSON answer. */
  | { kind: 'non-json-rpc'; detail: string }
  /** 408: the node took longer than its --Xhttp-timeout-seconds (a hang on this input). */
  | { kind: 'timeout' }
  /** The connection failed or closed without an answer. */
  | { kind: 'no-answer'; detail: string };

const TOO_LARGE_BODY = 'Request Entity Too Large';
const PARSE_OR_INVALID = new Set([-32700, -32600]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why `value` is not a JSON-RPC 2.0 response object, or undefined when it is one. */
function responseProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object';
  if (value.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  if (!('id' in value)) return 'no id';
  const id = value.id;
  if (id !== null && typeof id !== 'string' && typeof id !== 'number') return 'id is neither string, number nor null';
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return 'not exactly one of result and error';
  if (hasError) {
    const error = value.error;
    if (!isRecord(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') return 'malformed error object';
  }
  return undefined;
}

/** The verdict on one HTTP answer. */
export function judgeAnswer(answer: HttpAnswer): Verdict {
  const text = answer.body.toString('utf8');
  if (answer.status === 413) return text === TOO_LARGE_BODY ? { kind: 'ok' } : { kind: 'non-json-rpc', detail: `413 with ${JSON.stringify(text.slice(0, 80))}` };
  if (answer.status === 408) return { kind: 'timeout' };
  if (answer.status !== 200 && answer.status !== 400) return { kind: 'non-json-rpc', detail: `HTTP ${answer.status}: ${text.slice(0, 120)}` };
  if (text === '') return answer.status === 200 ? { kind: 'ok' } : { kind: 'non-json-rpc', detail: 'empty 400' };
  if (!answer.contentType?.startsWith('application/json')) return { kind: 'non-json-rpc', detail: `content-type ${String(answer.contentType)}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'non-json-rpc', detail: `body is not JSON: ${text.slice(0, 120)}` };
  }
  const responses = Array.isArray(value) ? value : [value];
  for (const response of responses) {
    const problem = responseProblem(response);
    if (problem !== undefined) return { kind: 'non-json-rpc', detail: `${problem}: ${text.slice(0, 160)}` };
  }
  if (answer.status === 400) {
    const error = (value as { error?: { code?: number } }).error;
    if (Array.isArray(value) || !PARSE_OR_INVALID.has(error?.code ?? 0)) return { kind: 'non-json-rpc', detail: `400 that is no Parse error / Invalid Request: ${text.slice(0, 160)}` };
  }
  return { kind: 'ok' };
}

/**
 * A keep-alive connection to the node that reopens itself when the node closed it (after a 413, or
 * uWS' idle timeout), so that one closed connection is not counted against the next input.
 */
export class FuzzHttpClient {
  private connection: KeepAliveConnection | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
    /** Past the node's own 30 s timeout: a node that does not answer at all is stuck. */
    private readonly timeoutMs = 45_000,
  ) {}

  /** Sends one body and judges the answer. */
  async send(body: string): Promise<Verdict> {
    const bytes = jsonPostRequest(this.host, this.port, body);
    for (let attempt = 0; ; attempt++) {
      try {
        if (!this.connection?.isOpen) this.connection = await KeepAliveConnection.open(this.host, this.port);
        const connection = this.connection;
        const timer = setTimeout(() => connection.close(), this.timeoutMs);
        try {
          return judgeAnswer(await connection.request(bytes));
        } finally {
          clearTimeout(timer);
        }
      } catch (err) {
        // A connection the node closed between two requests: once more on a new one.
        this.close();
        if (attempt >= 1) return { kind: 'no-answer', detail: err instanceof Error ? err.message : String(err) };
      }
    }
  }

  close(): void {
    this.connection?.close();
    this.connection = undefined;
  }
}

/** Tallies of a fuzz run. */
export class FuzzTally {
  tried = 0;
  ok = 0;
  nonJsonRpc = 0;
  timeouts = 0;
  noAnswer = 0;
  /** The first few offending inputs with what was wrong. */
  readonly examples: { verdict: Verdict; body: string }[] = [];

  record(body: string, verdict: Verdict): void {
    this.tried++;
    if (verdict.kind === 'ok') this.ok++;
    else if (verdict.kind === 'non-json-rpc') this.nonJsonRpc++;
    else if (verdict.kind === 'timeout') this.timeouts++;
    else this.noAnswer++;
    if (verdict.kind !== 'ok' && this.examples.length < 5) this.examples.push({ verdict, body: body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body });
  }
}
