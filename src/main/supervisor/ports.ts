import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { StartupError } from './network.js';

/**
 * Fails like Besu when a port is taken, before any actor starts, naming every busy port in one
 * message. A port that also carries UDP (devp2p discovery) must be free for both, as Besu checks it.
 */
export async function assertPortsFree(ports: { host: string; port: number; udp?: boolean }[]): Promise<void> {
  const busy: number[] = [];
  for (const { host, port, udp } of ports) {
    if (port === 0) continue;
    const tcpFree = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
    });
    const udpFree = !udp || (await new Promise<boolean>((resolve) => {
      const probe = createSocket('udp4');
      probe.once('error', () => resolve(false));
      probe.bind({ address: host, port, exclusive: true }, () => probe.close(() => resolve(true)));
    }));
    if (!tcpFree || !udpFree) busy.push(port);
  }
  if (busy.length > 0) {
    throw new StartupError(`Port(s) '[${busy.join(', ')}]' already in use. Check for other processes using the port(s).`);
  }
}
