/**
 * Which engine serves the HTTP ports (src/transport/engine.ts), chosen once at start: uWebSockets.js
 * where one of its native builds loads, otherwise `node:http` and `ws`, which serve the same answers
 * more slowly.
 *
 * uWebSockets.js ships prebuilt binaries for a few Node ABIs and glibc versions only, so two builds
 * are installed and `uWebSockets.js` itself is src/shared/uws-select (package.json `dependencies` and
 * `overrides`), which loads the first whose binary loads here: 20.57 (Node 20/22/24/25, glibc >= 2.38)
 * then 20.30 (Node 16/18/20, any glibc). hyper-express and the transport threads import it by that
 * name, so they run on the build probed here.
 */
import { createRequire } from 'node:module';
import type { HttpEngineSetting } from '../cli/options.js';
import type { HttpEngineName } from '../../shared/actors/worker-data.js';
import { errorMessage } from '../../shared/util/errors.js';
import { StartupError } from './network.js';

const require = createRequire(import.meta.url);

export type UwsProbe = { loaded: true; build: string; skipped: string[] } | { loaded: false; build: string; reason: string };

interface UwsSelection {
  probe(): { loaded: boolean; build?: string; attempts: { build: string; reason: string }[] };
}

/** Whether a native uWebSockets.js binary loads in this process, and which build it is. */
export function probeNativeUws(): UwsProbe {
  let selection: UwsSelection;
  try {
    selection = (require('uWebSockets.js') as { __basaltSelection: UwsSelection }).__basaltSelection;
  } catch (err) {
    return { loaded: false, build: 'uWebSockets.js', reason: `it is not installed (${errorMessage(err)})` };
  }
  // Probed again rather than taken from the first load: UWS_USE_FALLBACK is read at each probe.
  const outcome = selection.probe();
  const skipped = outcome.attempts.map((attempt) => `${attempt.build}: ${attempt.reason}`);
  if (outcome.loaded) return { loaded: true, build: outcome.build!, skipped };
  const builds = outcome.attempts.map((attempt) => attempt.build).join(', ');
  const reasons = [...new Set(outcome.attempts.map((attempt) => attempt.reason))];
  const reason =
    reasons.length === 1 ? reasons[0]! : outcome.attempts.map((attempt) => `${attempt.build}: ${attempt.reason}`).join('; ');
  return { loaded: false, build: builds === '' ? 'uWebSockets.js' : builds, reason };
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
  if (uws.loaded) {
    // A preferred build that did not load is worth a word: on a glibc >= 2.38 it would have served.
    const skipped = uws.skipped.length > 0 ? `; not ${uws.skipped.join('; ')}` : '';
    return { engine: 'uws', message: `HTTP engine: uWebSockets.js (${uws.build}, native)${skipped}`, warn: false };
  }
  if (setting === 'uws') throw new StartupError(`--Xhttp-engine=UWS: uWebSockets.js (${uws.build}) cannot serve: ${uws.reason}`);
  return {
    engine: 'node',
    message:
      `HTTP engine: node:http and ws, because uWebSockets.js (${uws.build}) cannot serve: ${uws.reason}. ` +
      'Same routes and answers, slower; README "Node.js versions" tells how to get a uWebSockets.js build for this Node',
    warn: true,
  };
}
