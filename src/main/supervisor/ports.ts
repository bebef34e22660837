import { createServer } from 'node:net';
import { StartupError } from './network.js';

/**
 * Fails like Besu when a port is taken. uWS binds with SO_REUSEPORT (so that several HTTP workers can
 * share one port), which would also let a second node silently share a port with the first; an
 * exclusive probe bind before the workers start catches that.
 */
export async function assertPortsFree(ports: { host: string; port: number }[]): Promise<void> {
  const busy: number[] = [];
  for (const { host, port } of ports) {
    if (port === 0) continue;
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
    });
    if (!free) busy.push(port);
  }
  if (busy.length > 0) {
    throw new StartupError(`Port(s) '[${busy.join(', ')}]' already in use. Check for other processes using the port(s).`);
  }
}
