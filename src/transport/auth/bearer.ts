/**
 * The token of an `Authorization` header (spec rpc-auth-cli.md §8.6): the text after the exact,
 * case-sensitive prefix `Bearer ` (one space), as Besu takes it. `bearer x`, `Bearer\tx` or a missing
 * header carry no token; `Bearer  x` carries the token ` x`, which no key verifies.
 */
const PREFIX = 'Bearer ';

export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization !== undefined && authorization.startsWith(PREFIX) ? authorization.slice(PREFIX.length) : undefined;
}
