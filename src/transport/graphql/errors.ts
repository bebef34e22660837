/**
 * GraphQL errors in the shapes Besu's graphql-java gives them (rpc-auth-cli.md §10.1): a message,
 * the locations and path when there are any, and `extensions` with the classification, plus Besu's
 * `errorCode`/`errorMessage` for the errors it codes itself.
 */
import type { GraphQLError, SourceLocation } from 'graphql';
import { RpcErrors } from '../../shared/rpc/errors.js';
import type { Json, RpcErrorObject } from '../../shared/rpc/types.js';

export type Classification =
  | 'InvalidSyntax'
  | 'ValidationError'
  | 'DataFetchingException'
  | 'ExecutionAborted'
  | 'NullValueInNonNullableField'
  | 'OperationNotSupported';

export type ErrorJson = { [key: string]: Json };

export function errorJson(
  message: string,
  classification: Classification,
  where: { locations?: readonly SourceLocation[]; path?: readonly (string | number)[]; extensions?: { [key: string]: Json } } = {},
): ErrorJson {
  const error: ErrorJson = { message };
  if (where.locations !== undefined && where.locations.length > 0) error.locations = where.locations.map(({ line, column }) => ({ line, column }));
  if (where.path !== undefined) error.path = [...where.path];
  error.extensions = { ...where.extensions, classification };
  return error;
}

/** Besu's `GraphQLError` codes: what a resolver throws to answer with a code and a fixed text. */
export const GraphqlErrors = {
  INVALID_PARAMS: { code: -32602, message: 'Invalid params' },
  INTERNAL_ERROR: { code: -32603, message: 'Internal error' },
  NONCE_TOO_LOW: { code: -32001, message: 'Nonce too low' },
  INVALID_TRANSACTION_SIGNATURE: { code: -32002, message: 'Invalid signature' },
  INTRINSIC_GAS_EXCEEDS_LIMIT: { code: -32003, message: 'Intrinsic gas exceeds gas limit' },
  TRANSACTION_UPFRONT_COST_EXCEEDS_BALANCE: { code: -32004, message: 'Upfront cost exceeds account balance' },
  EXCEEDS_BLOCK_GAS_LIMIT: { code: -32005, message: 'Transaction gas limit exceeds block gas limit' },
  TX_SENDER_NOT_AUTHORIZED: { code: -32007, message: 'Sender account not authorized to send transactions' },
  CHAIN_HEAD_WORLD_STATE_NOT_AVAILABLE: { code: -32008, message: 'Initial sync is still in progress' },
  GAS_PRICE_TOO_LOW: { code: -32009, message: 'Gas price below configured minimum gas price' },
  WRONG_CHAIN_ID: { code: -32000, message: 'Wrong Chain ID in transaction signature' },
  REPLAY_PROTECTED_SIGNATURES_NOT_SUPPORTED: { code: -32000, message: 'Signatures with replay protection are not supported' },
  TX_FEECAP_EXCEEDED: { code: -32000, message: 'Transaction fee cap exceeded' },
} as const satisfies Record<string, RpcErrorObject>;

/** An error a resolver throws to answer with one of Besu's coded GraphQL errors. */
export class GraphqlCodedError extends Error {
  readonly code: number;

  constructor(def: RpcErrorObject) {
    super(def.message);
    this.code = def.code;
  }
}

/**
 * The pool's verdicts (JSON-RPC errors) as Besu's GraphQL `sendRawTransaction` reports them: its own
 * texts for chain ids, the same code and text for the reasons it maps, and -32603 `Internal error`
 * for every reason it does not (`GraphQLError.of`).
 */
const FROM_POOL_ERROR: readonly (readonly [RpcErrorObject, RpcErrorObject])[] = [
  [RpcErrors.INVALID_PARAMS, GraphqlErrors.INVALID_PARAMS],
  [RpcErrors.NONCE_TOO_LOW, GraphqlErrors.NONCE_TOO_LOW],
  [RpcErrors.INVALID_SIGNATURE, GraphqlErrors.INVALID_TRANSACTION_SIGNATURE],
  [RpcErrors.INTRINSIC_GAS_EXCEEDS_LIMIT, GraphqlErrors.INTRINSIC_GAS_EXCEEDS_LIMIT],
  [RpcErrors.UPFRONT_COST_EXCEEDS_BALANCE, GraphqlErrors.TRANSACTION_UPFRONT_COST_EXCEEDS_BALANCE],
  [RpcErrors.EXCEEDS_BLOCK_GAS_LIMIT, GraphqlErrors.EXCEEDS_BLOCK_GAS_LIMIT],
  [RpcErrors.TX_SENDER_NOT_AUTHORIZED, GraphqlErrors.TX_SENDER_NOT_AUTHORIZED],
  [RpcErrors.INITIAL_SYNC_IN_PROGRESS, GraphqlErrors.CHAIN_HEAD_WORLD_STATE_NOT_AVAILABLE],
  [RpcErrors.GAS_PRICE_TOO_LOW, GraphqlErrors.GAS_PRICE_TOO_LOW],
  [RpcErrors.WRONG_CHAIN_ID, GraphqlErrors.WRONG_CHAIN_ID],
  [RpcErrors.CHAIN_ID_NOT_SUPPORTED, GraphqlErrors.REPLAY_PROTECTED_SIGNATURES_NOT_SUPPORTED],
  [RpcErrors.TX_FEECAP_EXCEEDED, GraphqlErrors.TX_FEECAP_EXCEEDED],
];

export function fromPoolError(error: RpcErrorObject): GraphqlCodedError {
  // Any invalid-params variant (undecodable RLP, a type not allowed yet) is Besu's INVALID_PARAMS.
  if (error.code === RpcErrors.INVALID_PARAMS.code) return new GraphqlCodedError(GraphqlErrors.INVALID_PARAMS);
  const sameReason = (known: RpcErrorObject) =>
    known.code === error.code && (error.message === known.message || error.message.startsWith(`${known.message} (`));
  const mapped = FROM_POOL_ERROR.find(([known]) => sameReason(known));
  return new GraphqlCodedError(mapped === undefined ? GraphqlErrors.INTERNAL_ERROR : mapped[1]);
}

/** graphql-java's ResultPath text: `/block/transactions[0]/hash`. */
export function pathText(path: readonly (string | number)[]): string {
  return path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : `/${segment}`)).join('');
}

/** An execution error of graphql-js in graphql-java's shape. */
export function executionErrorJson(error: GraphQLError): ErrorJson {
  const path = error.path ?? [];
  const cause = error.originalError;
  if (cause === undefined || cause === null) {
    const nonNull = /^Cannot return null for non-nullable field (\w+)\.(\w+)\.$/.exec(error.message);
    if (nonNull) {
      return errorJson(
        `The field at path '${pathText(path)}' was declared as a non null type, but the code involved in retrieving data has wrongly returned a null value.  ` +
          'The graphql specification requires that the parent field be set to null, or if that is non nullable that it bubble up null to its parent and so on. ' +
          `The non-nullable type is '${nonNull[2]}' within parent type '${nonNull[1]}'`,
        'NullValueInNonNullableField',
        { path },
      );
    }
    return errorJson(error.message, 'DataFetchingException', { locations: error.locations, path });
  }
  const extensions = cause instanceof GraphqlCodedError ? { errorCode: cause.code, errorMessage: cause.message } : undefined;
  return errorJson(`Exception while fetching data (${pathText(path)}) : ${cause.message}`, 'DataFetchingException', {
    locations: error.locations,
    path,
    ...(extensions === undefined ? {} : { extensions }),
  });
}
