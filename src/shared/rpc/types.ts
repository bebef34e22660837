/** A value that JSON.stringify renders faithfully: what a JSON-RPC result is made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object, as the result formatters build one member by member. */
export type JsonObject = { [key: string]: Json };

/**
 * A value that crosses a thread boundary by structured clone: JSON plus bigint and bytes.
 * Parsed JSON-RPC parameters are Wire values, so a transport can parse and an actor can use them
 * without either side re-validating.
 */
export type Wire =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | Wire[]
  | { [key: string]: Wire };

/** The error member of a JSON-RPC response; `data` is omitted when absent (Besu writes no null). */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: string;
}
