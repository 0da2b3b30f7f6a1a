// The offline verifier: checks that need no node and no network (ARCHITECTURE 1). Imports
// src/core and data/ only.
export * from './cas.js';
export * from './judgment.js';
export * from './report.js';
export * from './credential.js';
export * from './issuer-keys.js';
export * from './bundle.js';
export * from './log.js';
export * from './presentation.js';
export * from './vc.js';
