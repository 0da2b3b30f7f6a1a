/**
 * Exit codes (docs/CLI.md "Exit codes"): 0 ok, 1 refused by the node or a check failed, 2 could
 * not run; 3 a verification that could not be anchored (no key pinned by the auditor: issue 32);
 * 130 interrupted (Ctrl-C in an interactive view), as a shell reports a SIGINT.
 */
export const EXIT = { ok: 0, refused: 1, broken: 2, unanchored: 3, interrupted: 130 } as const;

export type ExitCode = 1 | 2 | 3 | 130;

/**
 * The CLI's own error codes (what `--json` prints as `code` on a failure), each with the exit
 * status it carries and what it means: the one registry, as ERROR_CODES is the node's
 * (src/core/errors.ts). A CliError takes its exit status from here, so a code not listed is a
 * compile error; docs/CLI.md "Error codes (--json)" lists exactly these, in this order
 * (test/cli/codes.test.ts holds both ways). The node's codes pass through CliError.fromNode.
 */
export const CLI_CODES = {
  usage: { exit: 2, doc: 'a flag or argument is missing, unknown or malformed, or two flags exclude each other' },
  crash: { exit: 2, doc: "an unexpected error inside the CLI (a bug): the message is the error's" },
  bad_base_url: { exit: 2, doc: '--base-url (or AKAS_BASE_URL) is not an http:// or https:// URL; the message guesses the one meant' },
  unreachable: { exit: 2, doc: "nothing answered (the node, a tile prefix, an artifact's URL), or the event stream broke off" },
  not_akas: { exit: 2, doc: 'what answers at --base-url is not an akas node (no JSON where JSON belongs, an error without an envelope)' },
  no_identity: { exit: 2, doc: 'no identity is saved for this profile and node: akas register first (savedFor lists the nodes it has one for)' },
  profile_mode: { exit: 2, doc: 'a profile file others may read or write: refused until it is mode 0600' },
  profile_unreadable: { exit: 2, doc: 'a profile file that cannot be read or is not a saved identity' },
  unreadable: { exit: 2, doc: "a file, folder, stdin, state file or stopped node's store named could not be read" },
  unwritable: { exit: 2, doc: 'a file or folder to write into could not be written' },
  invalid_json: { exit: 2, doc: "a file, stdin or a flag's value is not (strict) JSON" },
  not_a_key_list: { exit: 2, doc: "--issuer-keys is not the node's key list ({keys[], rotations[]})" },
  not_a_trust_file: { exit: 2, doc: '--trust is not a trust file, or pins nothing this command checks with' },
  invalid_key: { exit: 2, doc: '--key is not an Ed25519 or ECDSA P-256 public key in SPKI PEM' },
  not_checkable: { exit: 2, doc: 'the input is not what the verify command checks (not a proposal, bundle, node or profile)' },
  not_a_manifest: { exit: 2, doc: 'verify manifest: the file carries no manifest the node signs' },
  not_an_artifact: { exit: 2, doc: 'verify cas --node: the node given is not a leaf-artifact' },
  unfetchable: { exit: 2, doc: "verify cas --node --fetch: the artifact's uri is not an http(s) URL, or answered an HTTP error" },
  hash_mismatch: { exit: 1, doc: 'bytes sent or received do not hash to the sha256 named (cas put, cas get, export --blobs): nothing was written' },
  transfer_failed: { exit: 2, doc: 'a blob transfer broke off' },
  unsafe_name: { exit: 1, doc: "the node's answer names a file with a value outside its id's grammar: refused, nothing more written" },
  bad_issuer: { exit: 1, doc: "the node's issuer is not an Ed25519 did:key (node-keys --pem)" },
  keys_do_not_hold: { exit: 1, doc: "trust pin, trust accept: the node's key list or its log key endorsement does not verify, so nothing is pinned" },
  not_accepted: { exit: 1, doc: 'trust accept: the new keys were not confirmed (or the pin changed meanwhile): the pin is unchanged' },
  confirm_needed: { exit: 2, doc: 'trust accept: no terminal to confirm on and no --yes: the pin is unchanged' },
  not_verified: { exit: 1, doc: 'mcp --stdio: a read that failed verification on this machine, withheld (the checks that failed are named)' },
  content_not_named: { exit: 1, doc: 'judge: the node names no contentSha256 for the proposal, so nothing is signed' },
  content_unverified: { exit: 1, doc: 'judge: the content the node shows does not match what it names, so nothing is signed' },
  no_template: { exit: 2, doc: "attest --template: the kind's schema holds no example body" },
  incomplete_answers: { exit: 2, doc: 'calibrate --answers: a question without an answer or with one too long; not submitted, no attempt used' },
  cancelled: { exit: 2, doc: 'calibrate: the questionnaire was closed before submitting; no attempt used' },
  interrupted: { exit: 130, doc: 'Ctrl-C in an interactive view (calibrate, queue): the object says what was sent' },
  no_mcp: { exit: 1, doc: "mcp: the node's /.well-known/akas.json names no MCP endpoint" },
  not_found: { exit: 1, doc: 'explore: the node has no explorer page for that target' },
  check_failed: { exit: 1, doc: 'serve --check: the data folder failed its audit; the node did not start' },
  node_keys: { exit: 2, doc: 'the node keys cannot be opened as they are (their mode, their content, a node secret that does not open them)' },
  schema_version: { exit: 2, doc: "the database's schema is behind or ahead of this akas (akas store migrate, or a newer akas)" },
  calibration_set: { exit: 2, doc: 'serve --calibration: the folder is not a usable calibration set' },
  data_in_use: { exit: 2, doc: 'another process holds the data folder' },
  port_unavailable: { exit: 2, doc: "the port is taken, or needs privileges, or the address is not this machine's" },
  no_node: { exit: 2, doc: 'no node, running or stopped, at the folder given' },
  admin_socket: { exit: 2, doc: 'the admin channel (a Unix socket in the data folder) cannot be opened' },
  storage: { exit: 2, doc: 'the data folder or database cannot be used: read-only, no permission, disk full, an I/O error, the database down' },
  copy_failed: { exit: 2, doc: 'store copy did not complete (a target that is not empty, a count or check that disagrees)' },
  node_registry: { exit: 2, doc: 'admin: the record of running nodes cannot be read' },
  several_nodes: { exit: 2, doc: 'admin: several local nodes run; name one with --data (nodes lists them)' },
  store_nodes: { exit: 2, doc: 'admin: only nodes on a shared database run here; give --store (nodes lists them)' },
  witness_key: { exit: 2, doc: 'witness: the witness key file cannot be read or made' },
  demo_needs_one_address: { exit: 2, doc: 'demo seed: the node takes one judge per IP, and the demo agents share one address' },
  demo_needs_demo_calibration: { exit: 2, doc: 'demo seed: the node runs a private calibration set' },
  demo_failed: { exit: 2, doc: 'demo seed: the demo tree could not be stored or published' },
  incomplete: { exit: 3, doc: 'monitor: a round could not complete: nothing is verified or refuted' },
  timeout: { exit: 2, doc: 'monitor: an answer did not arrive within its time bound' },
  too_large: { exit: 2, doc: 'monitor: an answer was larger than its size bound' },
  redirect_refused: { exit: 2, doc: 'monitor: a redirect that is not a URL, or to another origin, was not followed' },
  too_many_redirects: { exit: 2, doc: 'monitor: more redirects than its bound' },
  bad_encoding: { exit: 2, doc: 'monitor: a body in an encoding not asked for, or gzip that does not inflate' },
} as const satisfies Record<string, { exit: ExitCode; doc: string }>;

export type CliCode = keyof typeof CLI_CODES;

const BRAND = Symbol.for('akas.CliError');
/** The constructor's second form, for a failure whose code is the node's (CliError.fromNode, restated). */
const PASSED = Symbol('akas.CliError.passed');

/**
 * A failure the CLI reports and exits with; `body` is what --json prints (its `code` first).
 * Recognised by a brand rather than instanceof: the bundle duplicates this class into lazily
 * loaded modules (scripts/bundle.mjs), and an error from one copy must still be a CliError to
 * the other.
 */
export class CliError extends Error {
  readonly [BRAND] = true;
  readonly exitCode: ExitCode;
  readonly body: Record<string, unknown>;

  static is(e: unknown): e is CliError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }

  /**
   * A refusal or failure the node answered, passed through as it said it (PROTOCOL 1.3's
   * envelope: its code, one of PROTOCOL 13's or the admin channel's, and its status), with the
   * exit status the command gives it: 1 refused, 2 could not run (a 5xx, or input that was the caller's).
   */
  static fromNode(exitCode: 1 | 2, message: string, body: Record<string, unknown>): CliError {
    return new CliError(PASSED, message, body, exitCode);
  }

  /** The same failure said with another message and more fields: its code and exit status kept. */
  restated(message: string, extra: Record<string, unknown>): CliError {
    return new CliError(PASSED, message, { ...this.body, ...extra }, this.exitCode);
  }

  // `extra` names no code of its own: the code is the first argument, registered above.
  constructor(code: CliCode, message: string, extra?: Record<string, unknown> & { code?: never });
  constructor(code: typeof PASSED, message: string, body: Record<string, unknown>, exitCode: ExitCode);
  constructor(code: CliCode | typeof PASSED, message: string, extra: Record<string, unknown> = {}, exitCode: ExitCode = EXIT.broken) {
    super(message);
    this.name = 'CliError';
    this.exitCode = code === PASSED ? exitCode : CLI_CODES[code].exit;
    this.body = code === PASSED ? extra : { code, ...extra };
  }
}

/** Bad flags or arguments (exit 2). */
export const usageError = (message: string) => new CliError('usage', message, { error: message });

/** Why a file operation failed, as a message says it: the errno code (ENOENT, EACCES), else the message. */
export const reasonOf = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;
