/**
 * A lean HTTP/1.1 keep-alive client for load generation: one request in flight per connection, the
 * request bytes prepared once by the caller. node:http's client costs several times more CPU per
 * request, and on a 2-core machine the generator's CPU is taken from the node under test.
 */
import { connect, type Socket } from 'node:net';

export interface HttpAnswer {
  status: number;
  body: Buffer;
  /** The Content-Type header, when the answer has one. */
  contentType?: string;
}

/** The bytes of a `POST` with a JSON body, to `/` unless another path is given, with any extra headers (`Authorization: Bearer ...`). */
export function jsonPostRequest(host: string, port: number, body: string, path = '/', headers: Record<string, string> = {}): Buffer {
  const payload = Buffer.from(body, 'utf8');
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const head =
    `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\n${extra}` +
    `Content-Length: ${payload.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

/** The JSON-RPC request body for `method(params)`. */
export function rpcBody(method: string, params: unknown[] = [], id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');
const CRLF = Buffer.from('\r\n', 'latin1');

export interface ParsedResponse extends HttpAnswer {
  /** Bytes of `buffer` this response occupied. */
  consumed: number;
}

/**
 * Parses one HTTP/1.1 response from the start of `buffer`; undefined while incomplete. Supports
 * Content-Length and chunked bodies (trailers are skipped); a response with neither has no body,
 * which is right for the 204/304/1xx answers a JSON-RPC server may give.
 */
export function parseHttpResponse(buffer: Buffer): ParsedResponse | undefined {
  const headerEnd = buffer.indexOf(HEADER_END);
  if (headerEnd < 0) return undefined;
  const head = buffer.toString('latin1', 0, headerEnd);
  const statusMatch = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  if (!statusMatch) throw new Error(`not an HTTP response: ${JSON.stringify(head.slice(0, 40))}`);
  const status = Number(statusMatch[1]);
  const contentType = /\r\ncontent-type:[ \t]*([^\r]*)/i.exec(head)?.[1];
  const bodyStart = headerEnd + HEADER_END.length;
  const lengthMatch = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  if (lengthMatch) {
    const end = bodyStart + Number(lengthMatch[1]);
    if (buffer.length < end) return undefined;
    return { status, contentType, body: buffer.subarray(bodyStart, end), consumed: end };
  }
  if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
    const chunks: Buffer[] = [];
    let position = bodyStart;
    for (;;) {
      const lineEnd = buffer.indexOf(CRLF, position);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.toString('latin1', position, lineEnd).split(';')[0]!, 16);
      if (!Number.isFinite(size)) throw new Error('malformed chunk size');
      if (size === 0) {
        // Trailer section: header lines up to an empty line.
        let trailer = lineEnd + CRLF.length;
        for (;;) {
          const end = buffer.indexOf(CRLF, trailer);
          if (end < 0) return undefined;
          if (end === trailer) return { status, contentType, body: Buffer.concat(chunks), consumed: end + CRLF.length };
          trailer = end + CRLF.length;
        }
      }
      const dataStart = lineEnd + CRLF.length;
      if (buffer.length < dataStart + size + CRLF.length) return undefined;
      chunks.push(buffer.subarray(dataStart, dataStart + size));
      position = dataStart + size + CRLF.length;
    }
  }
  return { status, contentType, body: Buffer.alloc(0), consumed: bodyStart };
}

/** One keep-alive TCP connection carrying one request at a time. */
export class KeepAliveConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private pending: { resolve(answer: HttpAnswer): void; reject(err: Error): void } | undefined;
  private closedError: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  static open(host: string, port: number, timeoutMs = 10_000): Promise<KeepAliveConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect to ${host}:${port} timed out`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeListener('error', reject);
        resolve(new KeepAliveConnection(socket));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** Sends prepared request bytes and resolves with the answer. */
  request(bytes: Buffer): Promise<HttpAnswer> {
    if (this.closedError) return Promise.reject(this.closedError);
    if (this.pending) return Promise.reject(new Error('a request is already in flight on this connection'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(bytes);
    });
  }

  /** False once either side closed the connection or it failed. */
  get isOpen(): boolean {
    return this.closedError === undefined;
  }

  close(): void {
    this.closedError ??= new Error('connection closed by the client');
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    let parsed: ParsedResponse | undefined;
    try {
      parsed = parseHttpResponse(this.buffered);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
      this.socket.destroy();
      return;
    }
    if (!parsed) return;
    // Copy the body out: the remaining buffer may be reused by the next concat.
    const answer: HttpAnswer = { status: parsed.status, body: Buffer.from(parsed.body) };
    if (parsed.contentType !== undefined) answer.contentType = parsed.contentType;
    this.buffered = this.buffered.subarray(parsed.consumed);
    const pending = this.pending;
    this.pending = undefined;
    if (pending) pending.resolve(answer);
    else this.fail(new Error('unsolicited response'));
  }

  private fail(err: Error): void {
    this.closedError ??= err;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(err);
  }
}

/** A unit of work for `runClosedLoop`: request bytes plus what to do with the answer. */
export interface LoadJob {
  bytes: Buffer;
  /** Called with the answer and its latency; a throw counts as a failed job. */
  onAnswer?(answer: HttpAnswer, latencyMs: number): void;
}

export interface ClosedLoopOptions {
  host: string;
  port: number;
  connections: number;
  /** Stop handing out jobs after this long (jobs in flight still finish). Unlimited when omitted. */
  durationMs?: number;
  /** After the duration (or once the jobs ran out), wait at most this long for answers in flight. */
  drainTimeoutMs?: number;
  /** Hard ceiling on the whole run, whatever the job source says. */
  maxRunMs?: number;
}

export interface ClosedLoopResult {
  /** Jobs answered (whatever the HTTP status or JSON-RPC outcome). */
  answered: number;
  /** Jobs that got no answer: connection errors, timeouts. */
  transportErrors: number;
  transportErrorMessages: string[];
  /** From the first request to the last answer. */
  wallMs: number;
}

/**
 * Closed-loop load: `connections` keep-alive connections, each sending its next job as soon as the
 * previous answer arrives, until `nextJob` returns undefined or the duration ends.
 */
export async function runClosedLoop(opts: ClosedLoopOptions, nextJob: () => LoadJob | undefined): Promise<ClosedLoopResult> {
  const connections = await Promise.all(Array.from({ length: opts.connections }, () => KeepAliveConnection.open(opts.host, opts.port)));
  const result: ClosedLoopResult = { answered: 0, transportErrors: 0, transportErrorMessages: [], wallMs: 0 };
  const started = performance.now();
  const stopAt = opts.durationMs === undefined ? Number.POSITIVE_INFINITY : started + opts.durationMs;
  const hardStopAt = started + (opts.maxRunMs ?? 600_000);
  let lastAnswerAt = started;

  const driveOne = async (connection: KeepAliveConnection): Promise<void> => {
    for (;;) {
      const now = performance.now();
      if (now >= stopAt || now >= hardStopAt) return;
      const job = nextJob();
      if (!job) return;
      const sentAt = performance.now();
      let answer: HttpAnswer;
      try {
        answer = await connection.request(job.bytes);
      } catch (err) {
        result.transportErrors++;
        if (result.transportErrorMessages.length < 5) result.transportErrorMessages.push(err instanceof Error ? err.message : String(err));
        return; // the connection is unusable after a transport error
      }
      lastAnswerAt = performance.now();
      result.answered++;
      job.onAnswer?.(answer, lastAnswerAt - sentAt);
    }
  };

  // Answers still outstanding when the drain window closes are abandoned by closing their sockets.
  let drainTimer: NodeJS.Timeout | undefined;
  const closeAll = (): void => connections.forEach((c) => c.close());
  const hardTimer = setTimeout(closeAll, Math.max(0, hardStopAt - performance.now()));
  const durationTimer =
    opts.durationMs === undefined
      ? undefined
      : setTimeout(() => {
          drainTimer = setTimeout(closeAll, opts.drainTimeoutMs ?? 10_000);
        }, opts.durationMs);
  try {
    await Promise.all(connections.map(driveOne));
  } finally {
    clearTimeout(hardTimer);
    clearTimeout(durationTimer);
    clearTimeout(drainTimer);
    closeAll();
  }
  result.wallMs = lastAnswerAt - started;
  return result;
}

/**
 * JSON-RPC calls for setup and observation steps (not for measuring), serialised over one keep-alive
 * connection that is reopened when the server closed it (uWS drops idle connections after ~10 s).
 */
export class RpcClient {
  private connection: KeepAliveConnection | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /**
   * Throws on a JSON-RPC error. A call whose connection fails is retried once on a new connection,
   * so use this only for calls that are safe to repeat.
   */
  call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const attempt = (): Promise<HttpAnswer> => this.send(rpcBody(method, params, this.nextId++));
    const run = async (): Promise<T> => {
      const answer = await attempt().catch(attempt);
      const parsed = JSON.parse(answer.body.toString('utf8')) as { result?: T; error?: { code: number; message: string } };
      if (parsed.error) throw new Error(`${method}: ${parsed.error.message} (${parsed.error.code})`);
      if (answer.status !== 200) throw new Error(`${method}: HTTP ${answer.status}`);
      return parsed.result as T;
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * One JSON-RPC batch request; answers come back in the order of `calls`, each a result or an error
   * (a batch is not failed by one of its calls failing). Retried like `call`: only for reads.
   */
  batch(calls: Array<[method: string, params: unknown[]]>): Promise<BatchAnswer[]> {
    if (calls.length === 0) return Promise.resolve([]);
    const run = async (): Promise<BatchAnswer[]> => {
      const firstId = this.nextId;
      this.nextId += calls.length;
      const body = JSON.stringify(calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: firstId + i, method, params })));
      const answer = await this.send(body).catch(() => this.send(body));
      if (answer.status !== 200) throw new Error(`batch of ${calls.length}: HTTP ${answer.status}`);
      const parsed = JSON.parse(answer.body.toString('utf8')) as Array<{ id: number } & BatchAnswer>;
      if (!Array.isArray(parsed)) throw new Error(`batch of ${calls.length}: not an array: ${answer.body.toString('utf8').slice(0, 200)}`);
      const byId = new Map(parsed.map((entry) => [entry.id, entry]));
      return calls.map(([method], i) => byId.get(firstId + i) ?? { error: { code: 0, message: `${method}: no answer in the batch` } });
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  close(): void {
    this.connection?.close();
    this.connection = undefined;
  }

  private async send(body: string): Promise<HttpAnswer> {
    if (!this.connection?.isOpen) this.connection = await KeepAliveConnection.open(this.host, this.port);
    try {
      return await this.connection.request(jsonPostRequest(this.host, this.port, body));
    } catch (err) {
      this.close();
      throw err;
    }
  }
}

export interface BatchAnswer {
  result?: unknown;
  error?: { code: number; message: string };
}
