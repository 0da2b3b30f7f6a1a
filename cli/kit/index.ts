// The CLI's kit: what every command room under cli/commands uses, named here one by one (none
// re-exported wholesale), so a command reaches the kit through this file only (the rooms test
// holds it): the node client and its bounded HTTP/1.1 reader, undici for streamed blobs, output
// and exit codes, errors and their registry (CLI_CODES), old spellings kept a release
// (renamed.ts), the saved profile, files written safely, input files and arguments,
// terminal-safe text, and where a node's data is (node-location.ts: the one reading of --data,
// --store, AKAS_DATA and AKAS_STORE).
export { AkasClient, unreachableError } from './client.js';
export { CLI_CODES, type CliCode, CliError, EXIT, reasonOf, usageError } from './errors.js';
export { boundedGet, boundedTransport, type FetchCaps, http1Request, isFetchError } from './http1.js';
export { addHelpModel, bundledHelpModel, type HelpModel, helpModelOf } from './help-model.js';
export { jsonArg, limitArg, readIssuerKeysFile, readJsonFile, readSource } from './input.js';
export type { Json } from './json.js';
export { DEFAULT_DATA_DIR, isPostgresUrl, type NodeLocation, type NodeMeant, nodeLocation, nodeMeant } from './node-location.js';
export { routesToCommands } from './next-steps.js';
export { collect } from './options.js';
export { errorLines, type Io, Output, quietOnEpipe, table } from './output.js';
export { noticeBefore, noticesOnce, oldOption, renamedNotice, renamedOption, type Say } from './renamed.js';
export {
  configDir,
  keepAside,
  loadIdentity,
  profileFile,
  ProfileFileError,
  ProfileModeError,
  type SavedIdentity,
  saveIdentity,
  takeBack,
  trySave,
  updateIdentity,
  withFileLock,
} from './profile.js';
export { appendLineSafely, writeFileSafely } from './safe-file.js';
export { terminalSafe, terminalSafeDeep } from './terminal-text.js';
export { undiciRequest } from './undici.js';
