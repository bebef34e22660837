/**
 * A GraphQL request as it arrives over HTTP (rpc-auth-cli.md §10.1): `GET /graphql?query=…&
 * operationName=…&variables=<json>`, `POST` with a JSON body `{query, operationName, variables}`, or
 * `POST` of any other content type whose whole body is the query text (`application/graphql`).
 */
import type { GraphqlRequest } from './execute.js';

/** Vert.x's answer to a body or `variables` it cannot decode: 400 `{"result":"Failed to decode:…"}`. */
export class RequestDecodeError extends Error {
  constructor(reason: string) {
    super(`Failed to decode:${reason}`);
  }
}

function decodeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RequestDecodeError(err instanceof Error ? err.message : String(err));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RequestDecodeError(`${name} must be a string`);
  return value;
}

function variablesOf(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new RequestDecodeError('variables must be an object');
  return value;
}

/** `GET`: the query string's `query` (empty when absent), `operationName` and JSON `variables`. */
export function requestFromQueryString(queryString: string): GraphqlRequest {
  const params = new URLSearchParams(queryString);
  const variables = params.get('variables');
  return {
    query: params.get('query') ?? '',
    operationName: params.get('operationName'),
    variables: variables === null ? undefined : variablesOf(decodeJson(variables)),
  };
}

/** `POST`: a JSON body when the content type says JSON, else the body is the query. */
export function requestFromBody(contentType: string | undefined, body: string): GraphqlRequest {
  if (contentType === undefined || !contentType.toLowerCase().startsWith('application/json')) return { query: body.trim() };
  const decoded = decodeJson(body.trim());
  if (!isObject(decoded)) throw new RequestDecodeError('the body is not a JSON object');
  return {
    query: optionalString(decoded.query, 'query') ?? '',
    operationName: optionalString(decoded.operationName, 'operationName'),
    variables: variablesOf(decoded.variables),
  };
}
