/**
 * One GraphQL request from query text to HTTP answer, as Besu's GraphQLHttpService answers it
 * (rpc-auth-cli.md §10.1): parse, validate, coerce the variables, measure the query against the
 * limits, run it; any error makes the answer 400, and the body is pretty-printed JSON with
 * `errors` before `data` (graphql-java's `toSpecification`).
 */
import {
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  parse,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Json } from '../../shared/rpc/types.js';
import { prettyJson } from '../jsonrpc.js';
import { errorJson, executionErrorJson, type ErrorJson } from './errors.js';
import { measureOperation } from './limits.js';
import { QueryData, type GraphqlBackend } from './query-data.js';
import { RESOLVERS } from './resolvers.js';
import { buildGraphqlSchema } from './schema.js';
import { validateQuery } from './validation.js';

export interface GraphqlRequest {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
}

export interface GraphqlReply {
  status: number;
  body: string;
  /** The requests the query sent to the actors, by kind (`chain.blocks`, …); empty when it read nothing. */
  actorRequests: ReadonlyMap<string, number>;
}

export interface GraphqlLimits {
  /** Besu's 200; a query measuring more is refused before it runs. */
  maxComplexity: number;
  /** 0: no limit (Besu has none). */
  maxDepth: number;
}

export interface GraphqlService {
  /** Runs one request; `deadline` (ms since the epoch) stops reads of a query still running then. */
  run(request: GraphqlRequest, deadline: number): Promise<GraphqlReply>;
}

const NO_REQUESTS: ReadonlyMap<string, number> = new Map();

function answer(body: { errors?: ErrorJson[]; data?: Json }, actorRequests = NO_REQUESTS): GraphqlReply {
  const ordered: { [key: string]: Json } = {};
  if (body.errors !== undefined && body.errors.length > 0) ordered.errors = body.errors;
  if (body.data !== undefined) ordered.data = body.data;
  return { status: ordered.errors === undefined ? 200 : 400, body: prettyJson(ordered), actorRequests };
}

/** The backend with every request to an actor counted by kind: what batching saves shows in the log. */
function counting(backend: GraphqlBackend, counts: Map<string, number>): GraphqlBackend {
  const count = (kind: string) => counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return {
    chainId: backend.chainId,
    headNumber: () => backend.headNumber(),
    syncStatus: () => backend.syncStatus(),
    chain: { request: (type, body) => (count(`chain.${type}`), backend.chain.request(type, body)) },
    txpool: { request: (type, body) => (count(`txpool.${type}`), backend.txpool.request(type, body)) },
    logindex: { request: (type, body) => (count(`logindex.${type}`), backend.logindex.request(type, body)) },
  };
}

const failed = (...errors: ErrorJson[]) => answer({ errors });

/** graphql-java's syntax error: the token where parsing stopped, and where it is. */
function syntaxError(error: GraphQLError, query: string): ErrorJson {
  const location = error.locations?.[0] ?? { line: 1, column: 1 };
  const offset = error.positions?.[0] ?? query.length;
  const token = offset >= query.length ? '<EOF>' : (/^(?:[_A-Za-z][_0-9A-Za-z]*|-?\d+(?:\.\d+)?|"[^"]*"?|\.\.\.|\S)/.exec(query.slice(offset))?.[0] ?? '<EOF>');
  return errorJson(`Invalid syntax with offending token '${token}' at line ${location.line} column ${location.column}`, 'InvalidSyntax', {
    locations: [location],
  });
}

/** The operation a request names, or graphql-java's words for why there is none to run. */
function selectOperation(document: DocumentNode, operationName: string | null | undefined): { operation: OperationDefinitionNode } | { error: ErrorJson } {
  const operation = getOperationAST(document, operationName);
  if (operation !== null && operation !== undefined) return { operation };
  const message =
    operationName === null || operationName === undefined
      ? 'Must provide operation name if query contains multiple operations.'
      : `Unknown operation named '${operationName}'.`;
  return { error: errorJson(message, 'ValidationError') };
}

/** A variable graphql-js refused, in graphql-java's words (`Variable 'x' has an invalid value: ...`). */
function variableError(error: GraphQLError, operation: OperationDefinitionNode): ErrorJson {
  const name = /^Variable "\$([^"]+)"/.exec(error.message)?.[1] ?? '';
  const definition = operation.variableDefinitions?.find((variable) => variable.variable.name.value === name);
  const reason = error.originalError?.message ?? error.message.replace(/^Variable "\$[^"]+" /, '');
  const type = definition === undefined ? '' : definition.type.loc?.source.body.slice(definition.type.loc.start, definition.type.loc.end);
  const text = /of required type ".+" was not provided|of non-null type ".+" must not be null/.test(error.message)
    ? `Variable '${name}' has coerced Null value for NonNull type '${type}'`
    : `Variable '${name}' has an invalid value: ${reason}`;
  return errorJson(text, 'ValidationError', { locations: error.locations });
}

/** Queries kept parsed and validated: clients send the same few query texts with new variables. */
const PREPARED_QUERIES = 256;
/** Longer query texts are not kept. */
const PREPARED_QUERY_MAX_LENGTH = 16 * 1024;

type Prepared = { document: DocumentNode } | { errors: ErrorJson[] };

function prepare(schema: GraphQLSchema, query: string): Prepared {
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (err) {
    if (err instanceof GraphQLError) return { errors: [syntaxError(err, query)] };
    throw err;
  }
  const invalid = validateQuery(schema, document);
  return invalid.length > 0 ? { errors: invalid } : { document };
}

export function createGraphqlService(backend: GraphqlBackend, limits: GraphqlLimits): GraphqlService {
  const schema: GraphQLSchema = buildGraphqlSchema(RESOLVERS);
  // Parsing and validating depend on the text alone; the most recently used texts are kept.
  const prepared = new Map<string, Prepared>();
  const prepareCached = (query: string): Prepared => {
    const known = prepared.get(query);
    if (known !== undefined) {
      prepared.delete(query);
      prepared.set(query, known);
      return known;
    }
    const fresh = prepare(schema, query);
    if (query.length <= PREPARED_QUERY_MAX_LENGTH) {
      prepared.set(query, fresh);
      if (prepared.size > PREPARED_QUERIES) prepared.delete(prepared.keys().next().value as string);
    }
    return fresh;
  };
  return {
    async run(request, deadline) {
      const ready = prepareCached(request.query);
      if ('errors' in ready) return failed(...ready.errors);
      const { document } = ready;

      const selected = selectOperation(document, request.operationName);
      if ('error' in selected) return failed(selected.error);
      const { operation } = selected;
      if (operation.operation === 'subscription') return failed(errorJson('Schema is not configured for subscriptions.', 'OperationNotSupported'));
      const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 1 });
      if (variables.errors !== undefined) return failed(...variables.errors.map((error) => variableError(error, operation)));

      const measured = measureOperation(schema, document, operation, variables.coerced);
      if (measured.complexity > limits.maxComplexity) {
        return failed(errorJson(`maximum query complexity exceeded ${measured.complexity} > ${limits.maxComplexity}`, 'ExecutionAborted'));
      }
      if (limits.maxDepth > 0 && measured.depth > limits.maxDepth) {
        return failed(errorJson(`maximum query depth exceeded ${measured.depth} > ${limits.maxDepth}`, 'ExecutionAborted'));
      }

      const actorRequests = new Map<string, number>();
      const result = await execute({
        schema,
        document,
        operationName: request.operationName,
        variableValues: request.variables,
        contextValue: new QueryData(counting(backend, actorRequests), deadline),
      });
      return answer({ errors: (result.errors ?? []).map(executionErrorJson), data: (result.data ?? null) as Json }, actorRequests);
    },
  };
}
