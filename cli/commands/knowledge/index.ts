// node, brief, search, suggest, traverse: reading the knowledge tree from the shell (PROTOCOL
// 10); a traversal the node kept is read with `akas show trv_...` (showTraversal, here). No identity is needed: every route here is anonymous.
// The text views (cli/commands/knowledge/view.ts) and the ink view (cli/views/node.tsx) are imported
// inside the actions, the ink one only on a terminal without --json.
import { Option, type Command } from 'commander';
import { type Json, jsonArg, limitArg, type Output, terminalSafeDeep, usageError } from '../../kit/index.js';
import { action, type Cli } from '../../program.js';
import { SKIPPED_BY_FLAG } from '../read/skipped.js';
import type { Verification } from '../read/verify.js';

/** A read's verification, or undefined when --no-verify skipped it. */
type Verified = Verification | undefined;
const NO_VERIFY = "do not check the read on this machine (it is printed as the node's word, and says so)";

/**
 * A read of the node, verified here unless --no-verify (cli/commands/read/cli.ts): asked with
 * ?evidence=full, checked under the profile's pin at a checkpoint proven one history with the one
 * kept. Answers the read, its verification, and the exit code of its verdict.
 */
async function verifiedRead(cli: Cli, url: string, verify: boolean): Promise<{ answer: Json; verification: Verified; exit: number }> {
  const client = cli.client();
  if (!verify) {
    cli.output().note(SKIPPED_BY_FLAG.line);
    return { answer: await client.get<Json>(url), verification: undefined, exit: 0 };
  }
  const answer = await client.get<Json>(`${url}${url.includes('?') ? '&' : '?'}evidence=full`);
  const { verifyForCli, exitOfVerification } = await import('../read/cli.js');
  const verification = await verifyForCli(cli, answer);
  return { answer, verification, exit: exitOfVerification(verification) };
}

/** The node kinds of PROTOCOL 10.2 (what `search --kind` filters on). */
export const NODE_KINDS = ['branch', 'leaf-brief', 'leaf-capability', 'leaf-decision', 'leaf-artifact'] as const;
/** Proposal-kind words people type for the node kind they publish. */
const NODE_KIND_ALIASES: Record<string, (typeof NODE_KINDS)[number]> = {
  brief: 'leaf-brief',
  capability: 'leaf-capability',
  graph: 'leaf-decision',
  dg: 'leaf-decision',
  decision: 'leaf-decision',
  'decision-graph': 'leaf-decision',
  artifact: 'leaf-artifact',
};
export const BRIEF_LEVELS = ['tldr', 'core', 'deep'] as const;
/** Hits a verified search page holds at most: each carries its read with full evidence (PROTOCOL 10.6). */
const VERIFIED_HITS = 20;

function nodeKindArg(name: string): string {
  const k = name.trim().toLowerCase();
  if ((NODE_KINDS as readonly string[]).includes(k)) return k;
  const alias = NODE_KIND_ALIASES[k];
  if (!alias) throw usageError(`unknown node kind "${name}"; one of: ${NODE_KINDS.join(', ')} (or brief, capability, graph, artifact)`);
  return alias;
}

/** A tree path as typed (`tools/pdf`, `/tools/pdf/`) in the form the node reads: `/tools/pdf`. */
export function treePath(input: string): string {
  const segments = input.split('/').filter(Boolean);
  if (segments.some((s) => !/^[a-z0-9][a-z0-9-]*$/.test(s))) {
    throw usageError(`not a tree path: ${input} (/ followed by lowercase segments of letters, digits and hyphens, e.g. /tools/pdf-to-text)`);
  }
  return '/' + segments.join('/');
}

function wholeNumber(flag: string, value: string, max: number): string {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw usageError(`${flag} is a whole number from 1 to ${max}`);
  return String(Number(value));
}

/** Prints a node or brief model: ink on a terminal, plain text in a pipe, the answer itself with --json. */
async function showModel(out: Output, answer: Json, model: () => Promise<import('./view.js').NodeModel>, verification: Verified) {
  if (out.json) return out.result({ ...answer, verification: verification ?? SKIPPED_BY_FLAG }, '');
  const m = await model();
  m.sections.unshift((await import('../read/cli.js')).verificationSection(verification));
  if (out.interactive) {
    const { renderNode } = await import('../../views/node.js');
    const columns = (out.io.stdout as { columns?: number }).columns ?? 80;
    out.io.stdout.write(renderNode(terminalSafeDeep(m), columns) + '\n');
    return;
  }
  const { modelText } = await import('./view.js');
  out.result(answer, modelText(m));
}

export function knowledgeCommands(program: Command, cli: Cli) {
  program
    .command('node')
    .summary('a node of the knowledge tree: what it says, its children, its evidence')
    .description('show a node of the knowledge tree: what it says, its children, its evidence (manifest, sha256 verification, evals, branches)')
    .argument('[path]', 'the tree path, e.g. /tools/pdf-to-text (default: the root)', '/')
    // Not --version: that is the program's own flag, wherever it stands on the command line.
    .option('--node-version <n>', 'an earlier version of the node (1 is the first; the current one by default)')
    .addOption(new Option('--level <level>', 'for a brief: the level served and signed').choices(BRIEF_LEVELS))
    .option('--limit <n>', 'children per page (1 to 500)', '100')
    .option('--cursor <cursor>', 'the next page of children (from the previous page)')
    .option('--no-verify', NO_VERIFY)
    .action(
      action(cli, async (pathArg: string, opts: { nodeVersion?: string; level?: string; limit: string; cursor?: string; verify: boolean }) => {
        const path = treePath(pathArg);
        const q = new URLSearchParams({ limit: wholeNumber('--limit', opts.limit, 500) });
        if (opts.nodeVersion !== undefined) q.set('version', wholeNumber('--node-version', opts.nodeVersion, 1_000_000));
        if (opts.level) q.set('level', opts.level);
        if (opts.cursor) q.set('cursor', opts.cursor);
        const url = `/api/knowledge/node/${path.slice(1).split('/').map(encodeURIComponent).join('/')}?${q}`;
        const { answer: n, verification, exit } = await verifiedRead(cli, url, opts.verify);
        const again = (cursor: string) =>
          `akas node ${path}${opts.nodeVersion ? ` --node-version ${opts.nodeVersion}` : ''}${
            opts.limit !== '100' ? ` --limit ` + `${opts.limit}` : ''
          } --cursor ${cursor}`;
        await showModel(cli.output(), n, async () => (await import('./view.js')).nodeModel(n, again), verification);
        return exit;
      }),
    );

  program
    .command('brief')
    .summary('a published brief at a level, with the manifest the node signs')
    .description('read a published brief at a level, with the manifest the node signs for it')
    .argument('<id>', 'the brief id, e.g. kb:retries-with-backoff')
    .addOption(new Option('--level <level>', 'how much of it').choices(BRIEF_LEVELS).default('core'))
    .option('--brief-version <yyyy-mm>', 'an earlier version of the brief (the current one by default)')
    .option('--no-verify', NO_VERIFY)
    .action(
      action(cli, async (id: string, opts: { level: string; briefVersion?: string; verify: boolean }) => {
        if (!/^kb:[a-z0-9-]+$/.test(id)) throw usageError(`not a brief id: ${id} (kb: followed by lowercase letters, digits and hyphens)`);
        if (opts.briefVersion !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.briefVersion)) throw usageError('--brief-version is YYYY-MM');
        const q = new URLSearchParams({ level: opts.level });
        if (opts.briefVersion) q.set('version', opts.briefVersion);
        const { answer: r, verification, exit } = await verifiedRead(cli, `/api/knowledge/briefs/${encodeURIComponent(id)}?${q}`, opts.verify);
        await showModel(cli.output(), r, async () => (await import('./view.js')).briefModel(r), verification);
        return exit;
      }),
    );

  program
    .command('search')
    .summary('search published nodes and briefs (typos tolerated)')
    .description('search published nodes and briefs (titles, specs, brief levels, paths); typos are tolerated')
    .argument('<query...>', 'the words to look for')
    .option('--kind <kind>', `only this node kind: ${NODE_KINDS.join(', ')} (or brief, capability, graph, artifact)`)
    .option('--limit <n>', `hits per page (1 to ${VERIFIED_HITS} verified, to 100 with --no-verify)`, '20')
    .option('--cursor <cursor>', 'the next page (nextCursor of the previous one)')
    .option('--no-verify', NO_VERIFY)
    .action(
      action(cli, async (words: string[], opts: { kind?: string; limit: string; cursor?: string; verify: boolean }) => {
        const query = words.join(' ').trim();
        if (!query || query.length > 200) throw usageError('the query is 1 to 200 characters');
        const q = new URLSearchParams({ q: query, limit: limitArg(opts.limit) });
        // Each hit carries its read and evidence: a page holds at most 20 of them (PROTOCOL 10.6).
        if (opts.verify && Number(q.get('limit')) > VERIFIED_HITS)
          throw usageError(`--limit is at most ${VERIFIED_HITS} when the hits are verified (each carries its evidence); --no-verify reads up to 100`);
        if (opts.kind) q.set('kind', nodeKindArg(opts.kind));
        if (opts.cursor) q.set('cursor', opts.cursor);
        const { answer: r, verification, exit } = await verifiedRead(cli, `/api/knowledge/search?${q}`, opts.verify);
        const out = cli.output();
        if (out.json) {
          out.result({ ...r, verification: verification ?? SKIPPED_BY_FLAG }, '');
          return exit;
        }
        const shown = await import('../read/cli.js');
        out.result(r, (await import('./view.js')).searchText(r, (i) => shown.hitVerdict(verification, i)) + shown.verificationText(verification));
        if (r.nextCursor)
          out.note(`more: akas search ${words.join(' ')}${opts.kind ? ` --kind ${opts.kind}` : ''} --limit ${opts.limit} --cursor ${r.nextCursor}`);
        return exit;
      }),
    );

  program
    .command('suggest')
    .summary('complete a tree path or the start of a title word')
    .description('complete a path prefix (/tools/p) or the start of a title word')
    .argument('<prefix>', 'a path prefix starting with /, or a word prefix')
    .option('--limit <n>', 'how many (1 to 50)', '10')
    .action(
      action(cli, async (prefix: string, opts: { limit: string }) => {
        if (!prefix.trim() || prefix.length > 200) throw usageError('the prefix is 1 to 200 characters');
        const q = new URLSearchParams({ q: prefix, limit: wholeNumber('--limit', opts.limit, 50) });
        const r = await cli.client().get<Json>(`/api/knowledge/suggest?${q}`);
        const list = (r.suggestions ?? []) as Json[];
        const width = Math.max(0, ...list.map((s) => String(s.path).length));
        cli
          .output()
          .result(r, () =>
            list.length ? list.map((s) => `${String(s.path).padEnd(width)}  ${s.title}  (${s.kind})`).join('\n') : `no completion for "${prefix}"`,
          );
      }),
    );

  program
    .command('traverse')
    .summary('walk a decision graph with your inputs to the leaves it reaches')
    .description('walk a decision graph with your inputs: every branch that holds is followed (forks in parallel) to the leaves it reaches')
    .argument('<path>', 'the decision node to start from, e.g. /decisions/pick-a-queue')
    .option('--inputs <json>', 'the inputs as JSON: \'{"throughput": 20000}\', @FILE to read a file, - for stdin (required)')
    .action(
      action(cli, async (pathArg: string, opts: { inputs?: string }) => {
        const path = treePath(pathArg);
        if (opts.inputs === undefined) throw usageError('--inputs JSON is required (an object; @FILE reads a file, - reads stdin)');
        const inputs = jsonArg(opts.inputs, '--inputs');
        if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) throw usageError('--inputs is a JSON object, e.g. {"throughput": 20000}');
        const t = await cli.client().post<Json>('/api/knowledge/dg/traverse', { path, inputs });
        const out = cli.output();
        if (out.json) return out.result(t, '');
        out.result(t, (await import('./view.js')).traversalText(t));
      }),
    );
}

/** A traversal the node kept, by its traversalId (`akas show trv_...`). */
export async function showTraversal(cli: Cli, id: string) {
  if (!/^trv_[0-9a-f]{16}$/.test(id)) throw usageError(`not a traversal id: ${id} (trv_ followed by 16 lowercase hex)`);
  const t = await cli.client().get<Json>(`/api/knowledge/dg/traversals/${id}`);
  const out = cli.output();
  if (out.json) return out.result(t, '');
  out.result(t, (await import('./view.js')).traversalText(t));
}
