// The node's JSON answers as the CLI reads them: field by field, each checked where it is used
// (the node's schemas in docs/openapi.json are the contract; the CLI prints, it does not re-type).
// biome-ignore lint/suspicious/noExplicitAny: a decoded answer of a node, read loosely on purpose
export type Json = Record<string, any>;
