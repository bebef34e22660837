/**
 * Which engine serves the HTTP ports (src/transport/engine.ts), chosen once at start: uWebSockets.js
 * where its native build loads, otherwise `node:http` and `ws`, which serve the same answers more
 * slowly.
 *
 * uWebSockets.js ships prebuilt binaries for a few Node ABIs only. The build installed by default
 * (`@trufflesuite/uws-js-unofficial` 20.30, the `uWebSockets.js` override in package.json) has them
 * for Node 16/18/20 and needs no recent glibc; on another Node it silently falls back to a JavaScript
 * shim that hyper-express cannot use, so its binary is loaded here directly rather than through its
 * entry point. Newer builds (the official 20.5x ones, republished on npm as
 * `@btc-vision/uwebsockets.js`) cover Node 20/22/24/25 but need glibc 2.38; installed as
 * `uWebSockets.js` (README "Node.js versions"), they are found the same way, binaries at the
 * package root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { HttpEngineSetting } from '../cli/options.js';
import type { HttpEngineName } from '../../shared/actors/worker-data.js';
import { errorMessage } from '../../shared/util/errors.js';
import { StartupError } from './network.js';

const require = createRequire(import.meta.url);

export type UwsProbe = { loaded: true; build: string } | { loaded: false; build: string; reason: string };

/** Whether a native uWebSockets.js binary loads in this process, and which build it is. */
export function probeNativeUws(): UwsProbe {
  let packageDir: string;
  let build: string;
  try {
    // Not `uWebSockets.js/package.json`: the 20.5x builds' "exports" do not list it.
    packageDir = dirname(require.resolve('uWebSockets.js'));
    while (!existsSync(join(packageDir, 'package.json')) && dirname(packageDir) !== packageDir) packageDir = dirname(packageDir);
    const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { name?: string; version?: string };
    build = `${manifest.name ?? 'uWebSockets.js'}@${manifest.version ?? '?'}`;
  } catch (err) {
    return { loaded: false, build: 'uWebSockets.js', reason: `it is not installed (${errorMessage(err)})` };
  }
  // uWS' own switch to its JavaScript shim, which hyper-express cannot use.
  const forcedShim = process.env.UWS_USE_FALLBACK;
  if (forcedShim !== undefined && ['true', 'True', 'TRUE', '1'].includes(forcedShim)) {
    return { loaded: false, build, reason: 'UWS_USE_FALLBACK forces its JavaScript shim' };
  }
  const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const binary = [join(packageDir, 'binaries', name), join(packageDir, name)].find((path) => existsSync(path));
  if (binary === undefined) {
    return { loaded: false, build, reason: `it has no binary for Node ${process.version} (${process.platform}-${process.arch}, ABI ${process.versions.modules})` };
  }
  try {
    require(binary);
    return { loaded: true, build };
  } catch (err) {
    // A glibc too old for the binary, typically: "version `GLIBC_2.38' not found".
    return { loaded: false, build, reason: `its binary for Node ${process.version} does not load: ${errorMessage(err).split('\n')[0]}` };
  }
}

export interface HttpEngineChoice {
  engine: HttpEngineName;
  /** The start-up log line saying which engine serves and why. */
  message: string;
  /** The fallback was taken because uWS does not load (not because it was asked for): a warning. */
  warn: boolean;
}

export function chooseHttpEngine(setting: HttpEngineSetting, probe: () => UwsProbe = probeNativeUws): HttpEngineChoice {
  if (setting === 'node') {
    return { engine: 'node', message: 'HTTP engine: node:http and ws (--Xhttp-engine=NODE)', warn: false };
  }
  const uws = probe();
  if (uws.loaded) return { engine: 'uws', message: `HTTP engine: uWebSockets.js (${uws.build}, native)`, warn: false };
  if (setting === 'uws') throw new StartupError(`--Xhttp-engine=UWS: uWebSockets.js (${uws.build}) cannot serve: ${uws.reason}`);
  return {
    engine: 'node',
    message:
      `HTTP engine: node:http and ws, because uWebSockets.js (${uws.build}) cannot serve: ${uws.reason}. ` +
      'Same routes and answers, slower; README "Node.js versions" tells how to get a uWebSockets.js build for this Node',
    warn: true,
  };
}
