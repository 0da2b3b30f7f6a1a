// A door of the CLI into src/ops (ARCHITECTURE 1), apart from index.ts so that printing a
// template loads no store: `akas propose KIND --template` prints the payload that
// GET /api/agent/v1/schemas serves, with no node to ask.
export { PROPOSAL_TEMPLATES } from '../domain/proposals/templates.js';
