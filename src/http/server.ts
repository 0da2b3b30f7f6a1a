// The CLI's former door for starting and checking a node, which now lives in src/node
// (ARCHITECTURE 1). It names that room's door, unchanged, until the CLI's imports name
// src/node/index.ts; then this file goes.
export {
  checkNode,
  isLoopbackHost,
  NoNodeError,
  openNode,
  parseWitnessSpec,
  PortError,
  reachableFromOutside,
  sameIpPolicy,
  startError,
  startNode,
  type NodeApp,
  type OpenedNode,
  type StartOptions,
  type StoreOptions,
} from '../node/index.js';
