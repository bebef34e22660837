#!/usr/bin/env node
// Basalt's command-line entry point. Plain JavaScript so the Node version can be checked before anything
// else loads. Any Node.js from 20 on runs it; which HTTP engine serves depends on the Node and the
// uWebSockets.js build installed (src/main/supervisor/http-engine.ts, README "Node.js versions").

const OLDEST_NODE_MAJOR = 20;
const nodeMajor = Number(process.versions.node.split('.')[0]);
if (nodeMajor < OLDEST_NODE_MAJOR) {
  process.stderr.write(`Basalt requires Node.js ${OLDEST_NODE_MAJOR} or later; this is Node.js ${process.versions.node}.\n`);
  process.exit(1);
}

let main;
try {
  ({ main } = await import('../dist/src/main/cli/main.js'));
} catch (error) {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/src/main/cli/main.js')) {
    process.stderr.write('Basalt is not built: run `npm run build` first.\n');
    process.exit(1);
  }
  throw error;
}

const exitCode = await main(process.argv.slice(2));
// Exit explicitly: a stopped node must not linger on handles left open; let pending output drain first.
await new Promise((resolve) => process.stdout.write('', resolve));
await new Promise((resolve) => process.stderr.write('', resolve));
process.exit(exitCode);
