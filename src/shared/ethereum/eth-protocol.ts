/** The highest eth/ protocol version Basalt offers peers (@ethereumjs/devp2p 10.0.0 implements up to eth/68). */
export const ETH_PROTOCOL_VERSION = 68;
