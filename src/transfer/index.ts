// Taking in a pack that arrives on a connection: the quarantine it lands in, unpack-objects or
// index-pack by the unpack limit, and the connectivity check of the tips it brings. A push's
// receive-pack uses them (serve/), and a client's fetch will.
export { Quarantine } from './quarantine.js';
export { readPackHeader, receiveObjects } from './receive-objects.js';
export type { ReceiveObjectsOptions, ReceivedObjects, ReceivePhase } from './receive-objects.js';
export { isConnected } from './connectivity.js';
export type { ConnectivityOptions } from './connectivity.js';
