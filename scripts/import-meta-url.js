// Injected into the CommonJS front of the bundle (scripts/bundle.mjs) in place of
// import.meta.url, which CommonJS lacks: the URL of the bundle file itself.
export const importMetaUrl = require('node:url').pathToFileURL(__filename).href;
