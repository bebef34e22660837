/**
 * JSON-RPC over a message stream — a WebSocket message or an IPC value — with the rules that differ
 * from HTTP's (rpc-auth-cli.md §6.2, §7): no batch size limit, and per transport what an empty
 * message, an unparsable one and an empty batch answer. Requests, ids and batches are otherwise
 * executed exactly as over HTTP (jsonrpc.ts).
 *
 * A notification (a request without an id) gets no answer at all. Besu writes the odd frame
 * `{"type":"NONE","jsonrpc":"2.0"}` for it, a serialisation artifact no client reads.
 */
import { RpcErrors } from '../shared/rpc/errors.js';
import type { RpcErrorObject } from '../shared/rpc/types.js';
import { batchText, errorResponseText, executeBatch, executeSingle, parseJsonRpcText, type RpcCaller } from './jsonrpc.js';
import type { JsonText } from '../shared/rpc/json-text.js';

export interface StreamRules {
  /** What an unparsable message (or a scalar) answers: WS -32603 Internal error, IPC -32700 Parse error. */
  readonly parseFailure: RpcErrorObject;
  /** What `[]` answers: `[]` over WS, Invalid Request over IPC. */
  readonly emptyBatch: 'empty-array' | 'invalid-request';
}

export const WS_RULES: StreamRules = { parseFailure: RpcErrors.INTERNAL_ERROR, emptyBatch: 'empty-array' };
export const IPC_RULES: StreamRules = { parseFailure: RpcErrors.PARSE_ERROR, emptyBatch: 'invalid-request' };

const EMPTY_MESSAGE_ANSWER = errorResponseText(RpcErrors.INVALID_REQUEST);

/** The answer to input that is not JSON at all. */
export function parseFailureAnswer(rules: StreamRules): string {
  return errorResponseText(rules.parseFailure);
}

/**
 * Answers one message: the text to send back (a large answer's UTF-8 bytes, json-text.ts), or
 * undefined when nothing is sent (a notification).
 */
export async function handleStreamMessage(text: string, call: RpcCaller, rules: StreamRules): Promise<JsonText | undefined> {
  if (text.length === 0) return EMPTY_MESSAGE_ANSWER;
  const parsed = parseJsonRpcText(text);
  if (parsed === undefined) return parseFailureAnswer(rules);
  if (parsed.kind === 'object') return executeSingle(parsed.value, text, call);
  if (parsed.value.length === 0) return rules.emptyBatch === 'empty-array' ? '[]' : EMPTY_MESSAGE_ANSWER;
  // Notifications are left out of a batch's answer; a batch of notifications only answers `[]`.
  return batchText(await executeBatch(parsed.value, text, call));
}
