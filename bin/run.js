#!/usr/bin/env node
// Basalt's command-line entry point. Plain JavaScript so the Node version can be checked before anything
// else loads: the uWebSockets.js native build Basalt serves JSON-RPC with exists only for Node.js 20.

const REQUIRED_NODE_MAJOR = 20;
const nodeMajor = Number(process.versions.node.split('.')[0]);
if (nodeMajor !== REQUIRED_NODE_MAJOR) {
  process.stderr.write(
    `Basalt requires Node.js ${REQUIRED_NODE_MAJOR}.x (its uWebSockets.js native build exists only for Node.js ${REQUIRED_NODE_MAJOR}); ` +
      `this is Node.js ${process.versions.node}.\n`,
  );
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
