export { addressPolicy, publicAddress } from './address.js';
export { FetchFailed, fetchUrl, type FetchRequest, type FetchResponse } from './fetch.js';
export { KeptConnections, type KeptLimits } from './kept.js';
