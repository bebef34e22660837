import { readFileSync } from 'node:fs';

/** The package version, read once from package.json next to the compiled tree. */
export const BASALT_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * web3_clientVersion in Besu's shape, `besu/v<version>/<os>-<arch>/<vm>`, with Basalt's name and
 * Node.js as the VM; `--identity` is inserted after the name as Besu does.
 */
export function clientVersion(identity?: string): string {
  const platform = `${process.platform}-${process.arch === 'x64' ? 'x86_64' : process.arch}`;
  const vm = `nodejs-${process.versions.node.split('.')[0]}`;
  return identity ? `basalt/${identity}/v${BASALT_VERSION}/${platform}/${vm}` : `basalt/v${BASALT_VERSION}/${platform}/${vm}`;
}
