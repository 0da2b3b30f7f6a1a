// akas trust accept: the reader's pin of a node (pins.ts) moved to the keys the node shows now,
// or to a trust file the reader gives (--trust FILE), as ssh's known_hosts is edited: the old
// keys and the new are printed, and the change is made only when confirmed (--yes, or y at the
// prompt on a terminal). A signed rotation needs no confirmation (it is followed on any contact
// anyway), nor a node never pinned (trust on first use, said so); keys that do not hold are
// never pinned (exit 1).
import { createInterface } from 'node:readline/promises';
import { parseTrust } from '../../../verifier/index.js';
import { AkasClient, CliError, type Json, readJsonFile } from '../../kit/index.js';
import type { Cli } from '../../program.js';
import { commitReaderState, decidePin, freshPin, readerStatePath, readReaderState, type ReaderState } from './pins.js';
import { trustFileFrom } from './trust-file.js';

export interface AcceptOptions {
  yes?: boolean;
  trust?: string;
}

type Pin = Pick<ReaderState, 'issuer' | 'logKey' | 'source'> & { pinnedAt?: string };
const keysOf = (p: Pin) => ({ issuer: p.issuer, logKey: p.logKey, source: p.source, ...(p.pinnedAt ? { pinnedAt: p.pinnedAt } : {}) });

/** The trust file of keys the reader accepted, saying so (not trust on first use). */
const acceptedDoc = (doc: Json, url: string, now: number): Json => ({
  ...doc,
  source: 'accepted',
  note:
    `Accepted with akas trust accept from ${url}/api/node/keys at ${new Date(now).toISOString()}, in place of the keys pinned before. ` +
    'Add the witnesses you trust to the policy (C2SP tlog-policy).',
});

/** Asks on the terminal; false on anything but y or yes. Refused (exit 2) where there is no terminal to ask on. */
async function confirmed(cli: Cli, question: string): Promise<boolean> {
  const stdin = (cli.io as { stdin?: NodeJS.ReadStream }).stdin ?? process.stdin;
  if (cli.globals().json || !stdin.isTTY)
    throw new CliError('confirm_needed', 'There is no terminal to confirm on: run `akas trust accept --yes` once you have compared the keys above.');
  const rl = createInterface({ input: stdin, output: cli.io.stderr });
  try {
    return /^(y|yes)$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** The pin this command makes, and what it replaces (undefined: nothing to do). */
async function proposedPin(url: string, state: ReaderState | undefined, opts: AcceptOptions, now: number) {
  if (opts.trust) {
    const doc = readJsonFile(opts.trust) as Json;
    try {
      parseTrust(doc);
    } catch (e) {
      throw new CliError('not_a_trust_file', `${opts.trust} is not a trust file: ${(e as Error).message}`, { path: opts.trust });
    }
    return { next: freshPin(url, doc, 'file', now, state), event: undefined, ask: true };
  }
  const keys = await new AkasClient({ baseUrl: url }).get<Json>('/api/node/keys');
  if (!state) return { next: freshPin(url, acceptedDoc(await trustFileFrom(keys, url, now), url, now), 'accepted', now), event: undefined, ask: false };
  const d = await decidePin(state, keys, url, now);
  if (d.status === 'unchanged') return undefined;
  if (d.status === 'pinned' || d.status === 'followed') return { next: d.next, event: undefined, ask: false };
  // Keys that do not hold are never pinned, accepted or not.
  if (!d.doc) throw new CliError('keys_do_not_hold', `${d.event.why}: nothing is pinned`);
  return { next: freshPin(url, acceptedDoc(d.doc, url, now), 'accepted', now, state), event: d.event, ask: true };
}

/** akas trust accept: prints the old and new keys on stderr, asks, and pins; the result on stdout. */
export async function acceptTrust(cli: Cli, opts: AcceptOptions): Promise<number> {
  const g = cli.globals();
  const url = g.baseUrl.replace(/\/$/, '');
  const path = readerStatePath(g.profile, url);
  const now = Date.now();
  const state = readReaderState(path);
  const out = cli.output();
  const proposed = await proposedPin(url, state, opts, now);
  if (!proposed) {
    out.result({ accepted: false, status: 'unchanged', pin: keysOf(state!), path }, () => `${url} shows the keys pinned in ${path}: nothing to accept`);
    return 0;
  }
  const { next, event, ask } = proposed;
  const line = (p: Pin) => [`  issuer   ${p.issuer}`, `  log key  ${p.logKey}`];
  const shown = [
    ...(event ? [`akas: ${event.message}`] : []),
    ...(state ? [`pinned (${state.source}, ${state.pinnedAt}):`, ...line(state)] : [`${url} was never pinned in profile "${g.profile}"`]),
    `${opts.trust ? `the trust file ${opts.trust}` : `${url} shows now`}:`,
    ...line(next),
  ];
  cli.io.stderr.write(`${shown.join('\n')}\n`);
  if (ask && !opts.yes && !(await confirmed(cli, 'Pin the new keys in place of the pinned ones? [y/N] ')))
    throw new CliError('not_accepted', `Not accepted: the pin in ${path} is unchanged.`, { path });
  if (!commitReaderState(path, state?.rev ?? 0, next))
    throw new CliError('not_accepted', `The pin in ${path} changed while this ran (another akas process): nothing was written; run akas trust accept again.`, {
      path,
    });
  const change = next.changes.at(-1)!;
  out.result({ accepted: true, status: change.what, old: state ? keysOf(state) : null, pin: keysOf(next), change, path }, () =>
    change.what === 'followed'
      ? `followed ${url}'s signed rotation to ${next.issuer}: recorded in ${path}`
      : `pinned ${url}'s keys (${next.source}) in ${path}: its reads are verified against them from now on`,
  );
  return 0;
}
