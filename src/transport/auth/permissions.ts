/**
 * Which methods a request may call (spec rpc-auth-cli.md §8.6 step 3): a method in the no-auth list, or
 * one the token's `permissions` grant through `*:*`, `<group>:*` (the text before the method's first
 * `_`) or the method's name with every `_` written `:` (`eth_getBalance` → `eth:getBalance`). Exact text
 * comparison, no other wildcard: `eth:get*` grants nothing, `ETH:*` grants nothing.
 */

/** What one request may call; checked for each method it names, after the method was found and enabled. */
export interface MethodAccess {
  permits(method: string): boolean;
}

/** The three permissions that grant `method`, most general first. */
export function permissionsGranting(method: string): readonly [string, string, string] {
  const underscore = method.indexOf('_');
  const group = underscore < 0 ? method : method.slice(0, underscore);
  return ['*:*', `${group}:*`, method.replaceAll('_', ':')];
}

/** Each method's granting permissions, computed once per method name seen. */
const grantingCache = new Map<string, readonly [string, string, string]>();
const GRANTING_CACHE_LIMIT = 4096;

function granting(method: string): readonly [string, string, string] {
  let permissions = grantingCache.get(method);
  if (permissions === undefined) {
    permissions = permissionsGranting(method);
    // Only registered method names get here, but a bound costs nothing.
    if (grantingCache.size < GRANTING_CACHE_LIMIT) grantingCache.set(method, permissions);
  }
  return permissions;
}

/** Whether a token's permissions grant `method`. */
export function grants(permissions: ReadonlySet<string>, method: string): boolean {
  const [any, group, exact] = granting(method);
  return permissions.has(any) || permissions.has(group) || permissions.has(exact);
}

/** The access of a request: the no-auth methods, plus what `permissions` grant (none without a valid token). */
export function createAccess(permissions: readonly string[], noAuthMethods: ReadonlySet<string>): MethodAccess {
  const granted = new Set(permissions);
  if (granted.size === 0) return { permits: (method) => noAuthMethods.has(method) };
  return { permits: (method) => noAuthMethods.has(method) || grants(granted, method) };
}
