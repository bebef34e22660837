/** Besu's well-known dev accounts, funded in Basalt's dev genesis (public test keys; never use them elsewhere). */
export const DEV_ACCOUNTS = [
  { address: '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73', privateKey: '0x8f2a55949038a9610f50fb23b5883af3b4ecb3c3bb792cbcefbd1542c692be63' },
  { address: '0x627306090abab3a6e1400e9345bc60c78a8bef57', privateKey: '0xc87509a1c067bbde78beb793e6fa76530b6382a4c0241e5e4a9ec0a0f44dc0d3' },
  { address: '0xf17f52151ebef6c7334fad080c5704d77216b732', privateKey: '0xae6ae8e5ccbfb04590405997ee2d52d2b330726137b875053c36d94e974d162f' },
] as const;
