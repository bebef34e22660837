import { readFileSync } from 'node:fs';
/** Besu's well-known dev accounts, funded in Basalt's dev genesis (public test keys; never use them elsewhere). */
export const DEV_ACCOUNTS = [
  { address: '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73', privateKey: '0x8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63' },
  { address: '0x627306090abab3a6e1400e9345bc60c78a8bef57', privateKey: '0xc87509a1c067bbde78beb793e6fa76530b6382a4c0241e5e4a9ec0a0f44dc0d3' },
  { address: '0xf17f52151ebef6c7334fad080c5704d77216b732', privateKey: '0xae6ae8e5ccbfb04590405997ee2d52d2b330726137b875053c36d94e974d162f' },
] as const;

/** What the dev genesis (genesis/dev.json) funds `address` with, read from the file itself. */
export function devGenesisBalance(address: string): bigint {
  const genesis = JSON.parse(readFileSync(new URL('../../../genesis/dev.json', import.meta.url), 'utf8')) as { alloc: Record<string, { balance: string }> };
  const wanted = address.toLowerCase().replace(/^0x/, '');
  // Keys are written in mixed case, without 0x.
  const entry = Object.entries(genesis.alloc).find(([key]) => key.toLowerCase().replace(/^0x/, '') === wanted)?.[1];
  if (entry === undefined) throw new Error(`${address} is not funded in genesis/dev.json`);
  return BigInt(entry.balance);
}
