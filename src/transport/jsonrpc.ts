/**
 * JSON-RPC 2.0 request handling with Besu's HTTP rules (spec rpc-auth-cli.md §1.2–1.6).
 *
 * Pure: a body string goes in, an HTTP status and body string come out; executing a method is
 * delegated to `ctx.call`. `createMethodCaller` builds that `call` from the registry: lookup,
 * enablement, param-count and param parsing, then a hop to the owning actor.
 */
import { RpcErrors, toRpcErrorObject } from '../shared/rpc/errors.js';
import { lookupMethod, type JsonRpcTransport, type MethodName, type Owner } from '../shared/rpc/registry.js';
import type { Json, RpcErrorObject, Wire } from '../shared/rpc/types.js';
import { concatJsonText, jsonArrayParts, jsonTextToString, type JsonText } from '../shared/rpc/json-text.js';
import type { MethodAccess } from './auth/permissions.js';
import type { CallTimer } from './rpc-timings.js';

/** A result, or a result as JSON text (an actor's answer, written out as it came), or an error. */
export type RpcOutcome = { result: Json } | { resultJson: JsonText } | { error: RpcErrorObject };

/**
 * Executes one method call whose name and raw (already normalised) params came from a request. With
 * authentication on, `access` says which methods the request may call.
 */
export type RpcCaller = (method: string, rawParams: unknown[], access?: MethodAccess) => Promise<RpcOutcome>;

export interface JsonRpcContext {
  /** `--rpc-http-max-batch-size`; any value ≤ 0 means unlimited. */
  maxBatchSize: number;
  /** `--json-pretty-print-enabled`: Jackson-style layout for single responses (never batches). */
  prettyPrint?: boolean;
  call: RpcCaller;
}

export interface HttpReply {
  status: number;
  /** Empty for a single notification; bytes when an actor answered in bytes (json-text.ts). */
  body: JsonText;
}

// ---------------------------------------------------------------------------------------------
// Request ids
// ---------------------------------------------------------------------------------------------

/**
 * The JSON text echoed as a response `id`. Besu keeps the id as the Java value Jackson decoded:
 * a string, an integer of any size (printed exactly), a double (printed like `Double.toString`) or
 * null. JSON.parse would round big integers and forget `1.0` vs `1`, so numeric ids are rebuilt
 * from their source text.
 */
type IdText = string;

const NULL_ID: IdText = 'null';

function isIntegerLiteral(source: string): boolean {
  return !/[.eE]/.test(source);
}

/**
 * Java `Double.toString` (JDK 19+: shortest decimal that round-trips, at least two significant
 * digits considered when one would do), e.g. `1.5`, `100.0`, `1.0E20`, `1.0E-5`, `4.9E-324`.
 */
export function javaDoubleToString(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  const magnitude = Math.abs(value);
  let [mantissa, exponentText] = magnitude.toExponential().split('e') as [string, string];
  if (mantissa.length === 1) {
    // One significant digit: Java picks the closest two-digit decimal instead.
    [mantissa, exponentText] = magnitude.toExponential(1).split('e') as [string, string];
  }
  const exponent = Number(exponentText);
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    const integerDigits = exponent + 1;
    if (integerDigits <= 0) return `${sign}0.${'0'.repeat(-integerDigits)}${digits}`;
    if (integerDigits >= digits.length) return `${sign}${digits}${'0'.repeat(integerDigits - digits.length)}.0`;
    return `${sign}${digits.slice(0, integerDigits)}.${digits.slice(integerDigits)}`;
  }
  return `${sign}${digits[0]}.${digits.slice(1) || '0'}E${exponent}`;
}

/** The id as echoed in a normal response (§1.3 first rows). */
function echoId(id: string | number | null, source: string | undefined): IdText {
  if (id === null) return NULL_ID;
  if (typeof id === 'string') return JSON.stringify(id);
  const text = source ?? String(id);
  if (isIntegerLiteral(text)) return BigInt(text).toString();
  const double = Number(text);
  // Jackson writes non-finite doubles as strings ("Infinity").
  return Number.isFinite(double) ? javaDoubleToString(double) : JSON.stringify(javaDoubleToString(double));
}

/**
 * The id of a request-level Invalid Request: Vert.x `getInteger("id")`, i.e. a JSON number narrowed
 * to a 32-bit int (integers wrap, doubles truncate and saturate), anything else null.
 */
function invalidRequestId(id: unknown, source: string | undefined): IdText {
  if (typeof id !== 'number') return NULL_ID;
  const text = source ?? String(id);
  if (isIntegerLiteral(text)) return String(BigInt.asIntN(32, BigInt(text)));
  const double = Number(text);
  if (Number.isNaN(double)) return '0';
  if (double >= 2147483647) return '2147483647';
  if (double <= -2147483648) return '-2147483648';
  return String(Math.trunc(double) + 0);
}

// ---------------------------------------------------------------------------------------------
// Source scanning: where the numeric ids are in the body text
// ---------------------------------------------------------------------------------------------

/**
 * Minimal scanner over a body that JSON.parse already accepted, used only to recover the source
 * text of numeric `id` members. It never recurses (deeply nested params cannot exhaust the stack)
 * and skips strings with indexOf, so a large hex payload costs little.
 */
class IdScanner {
  private pos = 0;

  constructor(private readonly text: string) {}

  /** Source text of the id of the top-level object (undefined if it has none). */
  idOfObject(): string | undefined {
    this.skipWhitespace();
    return this.scanObject();
  }

  /** Source text of each top-level array element's id (undefined for non-objects / no id). */
  idsOfArray(): (string | undefined)[] {
    const ids: (string | undefined)[] = [];
    this.skipWhitespace();
    this.pos++; // [
    this.skipWhitespace();
    if (this.text[this.pos] === ']') return ids;
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] === '{') ids.push(this.scanObject());
      else {
        this.skipValue();
        ids.push(undefined);
      }
      this.skipWhitespace();
      if (this.text[this.pos++] !== ',') return ids;
    }
  }

  /** At `{`: walks the members, returning the source of the last `"id"` member's value. */
  private scanObject(): string | undefined {
    let idSource: string | undefined;
    this.pos++; // {
    this.skipWhitespace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return undefined;
    }
    for (;;) {
      this.skipWhitespace();
      const keyStart = this.pos;
      this.skipString();
      const keySource = this.text.slice(keyStart, this.pos);
      const isId = keySource === '"id"' || (keySource.includes('\\') && JSON.parse(keySource) === 'id');
      this.skipWhitespace();
      this.pos++; // :
      this.skipWhitespace();
      const valueStart = this.pos;
      this.skipValue();
      if (isId) idSource = this.text.slice(valueStart, this.pos);
      this.skipWhitespace();
      if (this.text[this.pos++] !== ',') return idSource;
    }
  }

  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) pos++;
      else break;
    }
    this.pos = pos;
  }

  /** At `"`: moves past the closing quote. */
  private skipString(): void {
    this.pos = closingQuote(this.text, this.pos) + 1;
  }

  private skipValue(): void {
    const text = this.text;
    const first = text[this.pos];
    if (first === '"') return this.skipString();
    if (first !== '{' && first !== '[') {
      // number or literal: runs until a delimiter
      let pos = this.pos;
      while (pos < text.length && !',}] \n\r\t'.includes(text[pos]!)) pos++;
      this.pos = pos;
      return;
    }
    let depth = 0;
    do {
      const c = text[this.pos];
      if (c === '"') {
        this.skipString();
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
      this.pos++;
    } while (depth > 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Serialisation
// ---------------------------------------------------------------------------------------------

/** The error member with Besu's member order; `data` omitted when absent. */
function orderedError(error: RpcErrorObject): { [key: string]: Json } {
  return error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
}

/** Compact response text, members in Besu's order: jsonrpc, id, result | error. */
function responseText(id: IdText, outcome: RpcOutcome): JsonText {
  const head = `{"jsonrpc":"2.0","id":${id},`;
  if ('error' in outcome) return `${head}"error":${JSON.stringify(orderedError(outcome.error))}}`;
  const result = 'resultJson' in outcome ? outcome.resultJson : JSON.stringify(outcome.result ?? null);
  // An actor's large answer stays bytes (json-text.ts); everything else is one template string.
  return typeof result === 'string' ? `${head}"result":${result}}` : concatJsonText([`${head}"result":`, result, '}']);
}

/** A batch's answer: its entries' texts in a JSON array. */
export function batchText(texts: readonly JsonText[]): JsonText {
  return concatJsonText(jsonArrayParts(texts));
}

/**
 * Jackson `DefaultPrettyPrinter` layout: objects one member per line indented by two spaces per
 * object level, `"key" : value`, arrays inline `[ a, b ]`, empty containers `{ }` / `[ ]`.
 */
export function prettyJson(value: Json, depth = 0): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? '[ ]' : `[ ${value.map((item) => prettyJson(item, depth)).join(', ')} ]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return '{ }';
    const indent = '  '.repeat(depth + 1);
    const members = keys.map((key) => `\n${indent}${JSON.stringify(key)} : ${prettyJson(value[key]!, depth + 1)}`);
    return `{${members.join(',')}\n${'  '.repeat(depth)}}`;
  }
  return JSON.stringify(value);
}

function prettyResponseText(id: IdText, outcome: RpcOutcome): string {
  const member =
    'error' in outcome
      ? `"error" : ${prettyJson(orderedError(outcome.error), 1)}`
      : `"result" : ${prettyJson('resultJson' in outcome ? (JSON.parse(jsonTextToString(outcome.resultJson)) as Json) : (outcome.result ?? null), 1)}`;
  return `{\n  "jsonrpc" : "2.0",\n  "id" : ${id},\n  ${member}\n}`;
}

/** HTTP status of a single response, derived from the error type (§1.6). */
function statusOf(outcome: RpcOutcome): number {
  if (!('error' in outcome)) return 200;
  switch (outcome.error.code) {
    case RpcErrors.PARSE_ERROR.code:
    case RpcErrors.INVALID_REQUEST.code:
      return 400;
    case RpcErrors.UNAUTHORIZED.code:
      return 401;
    default:
      return 200;
  }
}

// ---------------------------------------------------------------------------------------------
// Request execution
// ---------------------------------------------------------------------------------------------

type Response = { id: IdText; outcome: RpcOutcome };

const INVALID_REQUEST: RpcOutcome = { error: RpcErrors.INVALID_REQUEST };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Maps one request object to a response, or undefined for a notification (§1.2 item 4, §1.4).
 * Besu does not execute notifications at all: its executor returns "no response" before dispatch.
 */
async function executeRequest(
  request: Record<string, unknown>,
  idSource: string | undefined,
  call: RpcCaller,
): Promise<Response | undefined> {
  const { id, method, params, jsonrpc } = request;
  const hasId = Object.hasOwn(request, 'id');
  const validId = id === null || id === undefined || typeof id === 'string' || typeof id === 'number';
  const validMethod = typeof method === 'string' || typeof method === 'number' || typeof method === 'boolean';
  const validParams = params === undefined || params === null || Array.isArray(params);
  // Jackson maps `jsonrpc` to a String: scalars coerce, containers fail the whole request.
  const validVersion = typeof jsonrpc !== 'object' || jsonrpc === null;
  if (!validId || !validMethod || !validParams || !validVersion) {
    return { id: invalidRequestId(id, idSource), outcome: INVALID_REQUEST };
  }
  if (!hasId) return undefined;
  const rawParams = params === undefined || params === null || (params.length === 1 && params[0] === null) ? [] : params;
  let outcome: RpcOutcome;
  try {
    outcome = await call(String(method), rawParams);
  } catch (err) {
    outcome = { error: toRpcErrorObject(err) };
  }
  return { id: echoId(id as string | number | null, idSource), outcome };
}

type ParsedBody = { kind: 'object'; value: Record<string, unknown> } | { kind: 'array'; value: unknown[] };

/**
 * Jackson's read limits (StreamReadConstraints, 2.15+ defaults), which Besu's request parsing
 * inherits: a body nested deeper, or holding a longer number, is a Parse error there.
 */
export const MAX_JSON_NESTING_DEPTH = 1000;
export const MAX_JSON_NUMBER_LENGTH = 1000;

/**
 * Whether a body breaks Jackson's nesting or number-length limit. Checked before JSON.parse: a deep
 * value would otherwise reach code that recurses (a structured clone throws past a few thousand
 * levels), and a long number reaches BigInt when echoed as an id, which is quadratic in its length.
 * One pass that skips strings with indexOf; invalid JSON may pass, JSON.parse rejects it next.
 */
export function exceedsJsonLimits(text: string): boolean {
  let depth = 0;
  let numberLength = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      numberLength = 0;
      const end = closingQuote(text, i);
      if (end < 0) return false;
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_NESTING_DEPTH) return true;
      numberLength = 0;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
      numberLength = 0;
    } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x45 || c === 0x65) {
      // digits, sign, point, exponent: outside strings only numbers are made of these runs
      if (++numberLength > MAX_JSON_NUMBER_LENGTH) return true;
    } else {
      numberLength = 0;
    }
  }
  return false;
}

/** Index of the quote closing the string opened at `open`, or -1 when it is not closed. */
function closingQuote(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * Object or array; scalars, empty and malformed bodies are all Parse errors (§1.2 items 1–2), and so
 * are bodies past Jackson's limits.
 */
function parseBody(body: string): ParsedBody | undefined {
  if (exceedsJsonLimits(body)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (Array.isArray(value)) return { kind: 'array', value };
  if (isPlainObject(value)) return { kind: 'object', value };
  return undefined;
}

/**
 * Handles one HTTP JSON-RPC body: a single request or a batch, with Besu's parse, id, notification,
 * batch and status rules. Batch entries run sequentially and answer in request order.
 */
export async function handleJsonRpcBody(body: string, ctx: JsonRpcContext): Promise<HttpReply> {
  const parsed = parseBody(body);
  if (parsed === undefined) {
    return { status: 400, body: responseText(NULL_ID, { error: RpcErrors.PARSE_ERROR }) };
  }

  if (parsed.kind === 'object') {
    const request = parsed.value;
    const idSource = typeof request.id === 'number' ? new IdScanner(body).idOfObject() : undefined;
    const response = await executeRequest(request, idSource, ctx.call);
    if (response === undefined) return { status: 200, body: '' };
    const text = ctx.prettyPrint ? prettyResponseText(response.id, response.outcome) : responseText(response.id, response.outcome);
    return { status: statusOf(response.outcome), body: text };
  }

  const batch = parsed.value;
  if (batch.length === 0) return { status: 400, body: responseText(NULL_ID, INVALID_REQUEST) };
  if (ctx.maxBatchSize > 0 && batch.length > ctx.maxBatchSize) {
    return { status: 200, body: responseText(NULL_ID, { error: RpcErrors.EXCEEDS_RPC_MAX_BATCH_SIZE }) };
  }
  return { status: 200, body: batchText(await executeBatch(batch, body, ctx.call)) };
}

/**
 * The response texts of a batch's entries, in request order: entries run one after the other, a
 * non-object entry answers Invalid Request, a notification answers nothing. `body` is the text the
 * batch was parsed from (numeric ids are echoed from it).
 */
export async function executeBatch(batch: readonly unknown[], body: string, call: RpcCaller): Promise<JsonText[]> {
  const needsIdSources = batch.some((entry) => isPlainObject(entry) && typeof entry.id === 'number');
  const idSources = needsIdSources ? new IdScanner(body).idsOfArray() : [];
  const texts: JsonText[] = [];
  for (let i = 0; i < batch.length; i++) {
    const entry = batch[i];
    if (!isPlainObject(entry)) {
      texts.push(responseText(NULL_ID, INVALID_REQUEST));
      continue;
    }
    const response = await executeRequest(entry, idSources[i], call);
    if (response !== undefined) texts.push(responseText(response.id, response.outcome));
  }
  return texts;
}

/** The compact response text of one request object, or undefined for a notification. */
export async function executeSingle(request: Record<string, unknown>, body: string, call: RpcCaller): Promise<JsonText | undefined> {
  const idSource = typeof request.id === 'number' ? new IdScanner(body).idOfObject() : undefined;
  const response = await executeRequest(request, idSource, call);
  return response === undefined ? undefined : responseText(response.id, response.outcome);
}

/** A response with id null carrying `error` (transport-level failures). */
export function errorResponseText(error: RpcErrorObject): string {
  return jsonTextToString(responseText(NULL_ID, { error }));
}

/** The answer to a message whose handling failed (a bug, not bad input). */
export const INTERNAL_ERROR_RESPONSE = errorResponseText(RpcErrors.INTERNAL_ERROR);
/** The answer to an HTTP body still running at `--Xhttp-timeout-seconds`. */
export const TIMEOUT_RESPONSE = errorResponseText(RpcErrors.TIMEOUT_EXPIRED);

/** The message-stream transports (jsonrpc-stream.ts) parse with the HTTP body rules. */
export { parseBody as parseJsonRpcText };

// ---------------------------------------------------------------------------------------------
// Method dispatch glue
// ---------------------------------------------------------------------------------------------

/** Sends parsed params to the owner of a method and returns its answer. */
export type Dispatch = (owner: Owner, method: MethodName, params: Wire) => Promise<RpcOutcome>;

export interface MethodCallerOptions {
  /** API groups enabled on this transport (`--rpc-http-api`), e.g. `['ETH', 'NET', 'WEB3']`. */
  enabledApis: readonly string[];
  /** Which transport calls (default HTTP): methods served only over others are "Method not found" on it. */
  transport?: JsonRpcTransport;
  send: Dispatch;
  /** With `--metrics-enabled`: times each call of a method this transport serves (`besu_rpc_request_time`). */
  timer?: CallTimer;
}

/**
 * Builds the `call` of a transport: names Basalt does not serve → -32601; served but not enabled →
 * -32604; not permitted to the request → -40100; wrong count for exact-count methods → "Invalid number
 * of params"; param parse failures → the method's -32602 variant; a thrown RpcError → its object;
 * anything else → -32603.
 */
export function createMethodCaller(options: MethodCallerOptions): RpcCaller {
  const enabled = new Set<string>(options.enabledApis);
  if (enabled.size > 0) enabled.add('RPC');
  const { send, timer } = options;
  const transport = options.transport ?? 'http';

  return async (name, rawParams, access) => {
    const method = lookupMethod(name);
    // Besu answers "not enabled" for any of its method names whose group is off; a method Basalt does
    // not serve at all is "not found" instead, since no option would make it answer.
    if (method === undefined) return { error: RpcErrors.METHOD_NOT_FOUND };
    if (method.transports !== undefined) {
      if (!method.transports.includes(transport)) return { error: RpcErrors.METHOD_NOT_FOUND };
    } else if (!enabled.has(method.group)) {
      return { error: RpcErrors.METHOD_NOT_ENABLED };
    }
    // Permission after availability, before the params are read (§8.6 steps 2–3).
    if (access !== undefined && !access.permits(method.name)) return { error: RpcErrors.UNAUTHORIZED };
    if (method.exactParamCount !== undefined && rawParams.length !== method.exactParamCount) {
      return { error: RpcErrors.INVALID_PARAM_COUNT };
    }
    // As Besu's timer, from here on: the calls of methods served and enabled, whatever they answer.
    const started = timer?.start();
    try {
      const params = method.parseParams(rawParams);
      const answer = await send(method.owner, method.name, params);
      if (method.fallbackOwner !== undefined && isNullResult(answer)) {
        return await send(method.fallbackOwner, method.name, params);
      }
      return answer;
    } catch (err) {
      return { error: toRpcErrorObject(err) };
    } finally {
      if (started !== undefined) timer?.record(method.name, started);
    }
  };
}

/** A result of null, as an object or as JSON text. */
export function isNullResult(outcome: RpcOutcome): boolean {
  return ('result' in outcome && outcome.result === null) || ('resultJson' in outcome && outcome.resultJson === 'null');
}
