// The HTTP kit, a room of its own beside src/http (ARCHITECTURE 1): what the node's routes and the
// explorer's pages both answer with (error envelopes, media types, security headers, inner calls,
// body bounds, the node's origin). It stands on src/core alone and imports nothing of src/http,
// so src/http registers the explorer and no arrow runs back up from the explorer into http. This
// index names what the explorer imports (it imports nothing else of the kit); src/http takes the
// kit's files one by one.
export { bodyBoundsOf } from './bodies.js';
export { errorHandler, tooManyMembers } from './errors.js';
export { innerCall, type InnerCall, type InnerResponse } from './inner-call.js';
export { Media, wantsHtml } from './media.js';
export { helmetHeaders } from './security-headers.js';
export { originOf } from './urls.js';
export type { App, Reply, Req, RouteOptions } from './typed.js';
