'use strict';
/*
 * `uWebSockets.js` as hyper-express and Basalt import it: the first build, in order of preference,
 * whose native binary loads here.
 *
 * Two builds are installed from the npm registry (the official one is published on GitHub only):
 *   uws-current  @btc-vision/uwebsockets.js 20.57 (Node 20/22/24/25; binaries need glibc >= 2.38)
 *   uws-legacy   @trufflesuite/uws-js-unofficial 20.30 (Node 16/18/20; any glibc)
 * Their own entry points are not used: 20.30's silently swaps in a JavaScript shim that hyper-express
 * cannot use when it has no binary for this Node. Where no build loads, this module throws, listing
 * why each did not; the supervisor probes first (`probe()`) and serves with node:http instead.
 */
const { existsSync } = require('node:fs');
const { dirname, join } = require('node:path');

const CANDIDATES = ['uws-current', 'uws-legacy'];

function packageDir(name) {
  // Not `<name>/package.json`: 20.57's "exports" do not list it.
  let dir = dirname(require.resolve(name));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Each candidate in order: the build it is, and its loaded binary or why it does not load. */
function probe() {
  const forcedShim = process.env.UWS_USE_FALLBACK;
  const attempts = [];
  for (const name of CANDIDATES) {
    let dir;
    let build = name;
    try {
      dir = packageDir(name);
      const manifest = require(join(dir, 'package.json'));
      build = `${manifest.name}@${manifest.version}`;
    } catch (err) {
      attempts.push({ build, reason: `it is not installed (${String(err && err.message).split('\n')[0]})` });
      continue;
    }
    // uWS' own switch to its JavaScript shim, which hyper-express cannot use.
    if (forcedShim !== undefined && ['true', 'True', 'TRUE', '1'].includes(forcedShim)) {
      attempts.push({ build, reason: 'UWS_USE_FALLBACK forces its JavaScript shim' });
      continue;
    }
    const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
    const binary = [join(dir, 'binaries', file), join(dir, file)].find((path) => existsSync(path));
    if (binary === undefined) {
      attempts.push({ build, reason: `it has no binary for Node ${process.version} (${process.platform}-${process.arch}, ABI ${process.versions.modules})` });
      continue;
    }
    try {
      return { loaded: true, build, native: require(binary), attempts };
    } catch (err) {
      // A glibc too old for the binary, typically: "version `GLIBC_2.38' not found".
      attempts.push({ build, reason: `its binary for Node ${process.version} does not load: ${String(err && err.message).split('\n')[0]}` });
    }
  }
  return { loaded: false, attempts };
}

const chosen = probe();
if (!chosen.loaded) {
  module.exports = { probe };
} else {
  module.exports = chosen.native;
}
Object.defineProperty(module.exports, '__basaltSelection', { value: { probe, build: chosen.loaded ? chosen.build : undefined, attempts: chosen.attempts }, enumerable: false });
