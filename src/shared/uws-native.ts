/**
 * uWebSockets.js ships prebuilt binaries for a few Node ABIs only. When none matches it silently
 * falls back to a JavaScript shim that hyper-express cannot use, and the failure surfaces later as
 * an obscure error. This check fails fast with a message that says what to do.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** The path of the native binary uWebSockets.js would load on this Node. */
export function nativeUwsBinaryPath(): string {
  const packageDir = dirname(require.resolve('uWebSockets.js/package.json'));
  const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  return join(packageDir, 'binaries', name);
}

/** Throws when uWebSockets.js would not run natively in this process. */
export function assertNativeUws(): void {
  const fallback = process.env.UWS_USE_FALLBACK;
  if (fallback !== undefined && ['true', 'True', 'TRUE', '1'].includes(fallback)) {
    throw new Error('uWebSockets.js is forced to its JavaScript fallback (UWS_USE_FALLBACK); unset it to serve HTTP');
  }
  const binary = nativeUwsBinaryPath();
  try {
    require(binary);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(
      `uWebSockets.js has no native binary for Node ${process.version} (${process.platform}-${process.arch}, ` +
        `ABI ${process.versions.modules}); Basalt needs Node.js 20.x. Could not load ${binary}: ${reason}`,
    );
  }
}
