// The node room's door (ARCHITECTURE 1; test/rooms.test.ts holds it): opening, checking and
// starting a node. What a command on a stopped node runs (open its store and keys, audit it,
// say why it could not) loads no HTTP server: only startNode imports src/http, when it runs.
export { checkNode } from './check.js';
export { NoNodeError, openNode, type OpenedNode, type Rotate, type StoreOptions } from './open.js';
export { PortError, startError } from './errors.js';
export { isLoopbackHost, reachableFromOutside, sameIpPolicy } from './policy.js';
export { startNode, type NodeApp, type StartOptions } from './start.js';
// `akas serve --witness` parses the witnesses it gives the node with the parser the node's own
// witness client uses.
export { parseWitnessSpec } from '../domain/log/index.js';
