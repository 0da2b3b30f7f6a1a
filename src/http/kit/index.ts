// The kit: the few things of src/http that another room may use (ARCHITECTURE 1). The explorer
// imports these and nothing else of http, and the kit imports nothing of http outside itself,
// so http can register the explorer without the two reaching into each other.
export { bodyBoundsOf } from './bodies.js';
export { errorHandler, tooManyMembers } from './errors.js';
export { innerCall, type InnerCall, type InnerResponse } from './inner-call.js';
export { Media, wantsHtml } from './media.js';
export { helmetHeaders } from './security-headers.js';
export { originOf } from './urls.js';
