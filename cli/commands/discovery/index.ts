// akas node-keys, mcp, explore, docs: what a node says of itself. Its public keys (to pin), the
// snippet that plugs it into an MCP client, its explorer's pages, and its agent guide (PROTOCOL
// 11.4, 12). Each reads the node's own documents: the MCP endpoint from its descriptor, the
// guide from /llms.txt.
import type { Command } from 'commander';
import { realpathSync } from 'node:fs';
import { CliError, type Json, trySave, updateIdentity, usageError } from '../../kit/index.js';
import { VERSION } from '../../../src/core/version.js';
import { action, type Cli } from '../../program.js';

/** The Authorization header for a snippet: the saved key only with --show-secrets. */
const KEY_PLACEHOLDER = '<apiKey: akas --show-secrets profile>';

/** Configuration snippets of popular MCP clients for a Streamable HTTP server with a Bearer header. */
export function mcpSnippets(url: string, authorization: string | null) {
  const headers = authorization ? { Authorization: authorization } : {};
  const header = authorization ? ` --header "Authorization: ${authorization}"` : '';
  return {
    'claude-code': { file: null, text: `claude mcp add --transport http akas ${url}${header}` },
    'claude-desktop': {
      file: 'claude_desktop_config.json (through the mcp-remote bridge)',
      text: JSON.stringify(
        { mcpServers: { akas: { command: 'npx', args: ['-y', 'mcp-remote', url, ...(authorization ? ['--header', `Authorization:${authorization}`] : [])] } } },
        null,
        2,
      ),
    },
    cursor: { file: '~/.cursor/mcp.json', text: JSON.stringify({ mcpServers: { akas: { url, headers } } }, null, 2) },
    vscode: { file: '.vscode/mcp.json', text: JSON.stringify({ servers: { akas: { type: 'http', url, headers } } }, null, 2) },
    windsurf: { file: '~/.codeium/windsurf/mcp_config.json', text: JSON.stringify({ mcpServers: { akas: { serverUrl: url, headers } } }, null, 2) },
    generic: { file: null, text: JSON.stringify({ type: 'streamable-http', url, headers }, null, 2) },
  };
}

export type McpClientName = keyof ReturnType<typeof mcpSnippets>;

/** How an MCP client launches `akas mcp --stdio` for this node and profile. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/**
 * How to start this very akas: Node and the CLI's script, both by absolute path. An MCP client
 * launched from a desktop (Claude Desktop, an editor opened from a dock) has a minimal PATH on
 * which neither `akas` nor, behind its `#!/usr/bin/env node`, a version manager's `node` is found.
 */
export function thisAkas(execPath = process.execPath, script = process.argv[1]): { command: string; args: string[] } {
  if (!script) return { command: 'akas', args: [] };
  let path = script;
  try {
    path = realpathSync(script);
  } catch {
    // a script that cannot be resolved is named as it was run
  }
  return { command: execPath, args: [path] };
}

export function stdioLaunch(baseUrl: string, profile: string, env: NodeJS.ProcessEnv = process.env, self = thisAkas()): StdioLaunch {
  // A config folder other than the default must reach the server the client launches.
  return {
    command: self.command,
    args: [...self.args, '--base-url', baseUrl, '--profile', profile, 'mcp', '--stdio'],
    ...(env.AKAS_CONFIG_DIR ? { env: { AKAS_CONFIG_DIR: env.AKAS_CONFIG_DIR } } : {}),
  };
}

const shellWord = (s: string) => (/^[A-Za-z0-9_/.:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * Configuration snippets of the same clients for `akas mcp --stdio` (PROTOCOL 12.5): a local
 * server the client launches, holding no key (the profile does).
 */
export function mcpStdioSnippets(launch: StdioLaunch) {
  const { command, args, env } = launch;
  const server = { command, args, ...(env ? { env } : {}) };
  const envFlags = Object.entries(env ?? {})
    .map(([k, v]) => ` --env ${shellWord(`${k}=${v}`)}`)
    .join('');
  return {
    'claude-code': { file: null, text: `claude mcp add --transport stdio${envFlags} akas -- ${[command, ...args].map(shellWord).join(' ')}` },
    'claude-desktop': { file: 'claude_desktop_config.json', text: JSON.stringify({ mcpServers: { akas: server } }, null, 2) },
    cursor: { file: '~/.cursor/mcp.json', text: JSON.stringify({ mcpServers: { akas: server } }, null, 2) },
    vscode: { file: '.vscode/mcp.json', text: JSON.stringify({ servers: { akas: { type: 'stdio', ...server } } }, null, 2) },
    windsurf: { file: '~/.codeium/windsurf/mcp_config.json', text: JSON.stringify({ mcpServers: { akas: server } }, null, 2) },
    generic: { file: null, text: JSON.stringify({ type: 'stdio', ...server }, null, 2) },
  };
}

/** The command that opens a URL in the default browser: $BROWSER, else the platform's opener. */
function opener(url: string): [string, string[]] {
  if (process.env.BROWSER) return [process.env.BROWSER, [url]];
  if (process.platform === 'darwin') return ['open', [url]];
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '""', url]];
  return ['xdg-open', [url]];
}

/** The explorer page of a target (PROTOCOL 15): a tree path, a proposal, an agent, an attestation, else home. */
export function explorerPage(target: string | undefined): string {
  if (!target || target === '/') return '/';
  if (target.startsWith('/')) return `/explore/tree${target.split('/').map(encodeURIComponent).join('/')}`;
  if (/^[a-z]*prop_[0-9a-f]{16}$/.test(target)) return `/explore/proposals/${target}`;
  if (/^att_[0-9a-f]{16}$/.test(target)) return `/explore/log/${target}`;
  if (/^ak_[A-Za-z0-9_-]+$/.test(target)) return `/explore/agents/${target}`;
  throw usageError(`not a tree path, proposal id, agent tag or attestation id: ${target}`);
}

/** Past this, an opener still running is a browser started in the foreground: taken as shown. */
const OPENER_WAIT_MS = 5000;

/**
 * Asks for a browser to show the URL and answers whether one was: no display on Linux (and no
 * $BROWSER), an opener that is not installed, or one that exits non-zero (xdg-open with no
 * browser configured, a $BROWSER that fails) all mean nothing opened, and say why.
 */
async function openInBrowser(url: string): Promise<{ opened: true } | { opened: false; why: string }> {
  if (!process.env.BROWSER && process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { opened: false, why: 'no display here (DISPLAY and WAYLAND_DISPLAY are unset) and no $BROWSER' };
  }
  const { spawn } = await import('node:child_process');
  const [cmd, args] = opener(url);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
    const timer = setTimeout(() => {
      child.unref();
      resolve({ opened: true });
    }, OPENER_WAIT_MS);
    timer.unref();
    child.once('error', (e) => {
      clearTimeout(timer);
      const code = (e as NodeJS.ErrnoException).code;
      resolve({ opened: false, why: code === 'ENOENT' ? `${cmd} is not installed` : `${cmd}: ${e.message}` });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? { opened: true } : { opened: false, why: `${cmd} exited ${code ?? signal}` });
    });
  });
}

/** The URL on stdout either way; "opened" only when a browser took it, else why not and exit 2. */
async function showInBrowser(cli: Cli, url: string): Promise<number> {
  const r = await openInBrowser(url);
  if (r.opened) {
    cli.output().result({ opened: url }, `opened ${url} (a browser was asked to show it)`);
    return 0;
  }
  cli.output().result({ opened: false, url, why: r.why }, url);
  cli.output().note(`nothing opened: ${r.why}; open the URL above yourself (or set $BROWSER)`);
  return 2;
}

const day = (iso: unknown) => (typeof iso === 'string' ? iso.slice(0, 19) + 'Z' : 'now');

export function discoveryCommands(program: Command, cli: Cli) {
  nodeKeysCommand(program, cli);
  mcpCommand(program, cli);
  exploreCommand(program, cli);
  docsCommand(program, cli);
}

function nodeKeysCommand(program: Command, cli: Cli) {
  program
    .command('node-keys')
    .summary("the node's public keys, and whether it serves this package's explorer")
    .alias('keys')
    .description(
      "the node's public keys: the issuer did:key and its history, the log key (--log-key of akas verify log-proof), the HMAC key ids; and " +
        "the sha256 of this package's explorer script, stylesheet and browser verifier, with whether the node serves the same bytes",
    )
    .option('--pem', 'print only the current issuer key as SPKI PEM (the key of akas export --format dsse|sigstore, for tools that want a PEM)')
    .action(
      action(cli, async (opts: { pem?: boolean; trust?: boolean; agent?: string[]; judgesOf?: string }) => {
        // The old `akas node-keys --trust [--agent TAG] [--judges-of ID]` (hidden options:
        // cli/commands/renamed/index.ts) is `akas trust pin`.
        if ((opts.agent?.length || opts.judgesOf) && !opts.trust) throw usageError('--agent and --judges-of add judges to a trust file: akas trust pin');
        const client = cli.client();
        const keys = await client.get<Json>('/api/node/keys');
        if (opts.pem) {
          const { issuerPem } = await import('../export/supply-chain.js');
          cli.io.stdout.write(issuerPem(keys.issuer.current));
          return 0;
        }
        if (opts.trust) return (await import('../trust/index.js')).pinTrust(cli, { agent: opts.agent ?? [], judgesOf: opts.judgesOf });
        const { explorerIntegrity, explorerLines } = await import('./explorer-integrity.js');
        const files = await explorerIntegrity(client.baseUrl);
        const k: Json = { ...keys, explorer: { akas: VERSION, files } };
        cli
          .output()
          .result(k, () =>
            [
              `issuer       ${k.issuer.current}`,
              ...(k.issuer.keys as Json[]).map(
                (x) =>
                  `  ${x.did === k.issuer.current ? 'current' : 'prior  '}  ${x.did}  ${day(x.validFromIso)} to ` +
                  `${x.validUntilIso ? day(x.validUntilIso) : 'now'}`,
              ),
              ...(k.issuer.rotations?.length ? [`  ${k.issuer.rotations.length} rotation(s), each signed by both keys`] : []),
              `log key      ${k.log.verifierKey}`,
              `  origin     ${k.log.origin}   (akas verify log-proof FILE --log-key '${k.log.verifierKey}')`,
              `hmac keys    ${(k.hmac as Json[]).map((h) => `${h.signingKeyId}${h.current ? ' (current)' : ''}`).join(', ')}`,
              '  manifests are HMACs: only the node checks them (akas verify manifest asks it)',
              ...explorerLines(files, VERSION, client.baseUrl),
            ].join('\n'),
          );
      }),
    );
}

function mcpCommand(program: Command, cli: Cli) {
  program
    .command('mcp')
    .summary('the MCP client configuration for this node, or (--stdio) the MCP server')
    .description('print the MCP client configuration for this node: akas mcp --stdio (local, keys kept in the profile) and the remote endpoint')
    .option('--client <name>', 'only this client: claude-code, claude-desktop, cursor, vscode, windsurf, generic')
    .option('--anonymous', 'without the api key (read tools only)')
    .option(
      '--stdio',
      "be the MCP server, on stdin/stdout, for a client that launches it: the node's tools, proxied with the api key of this profile, " +
        'judgments signed here with its private key; neither key appears in a tool call or result',
    )
    .option('--no-verify', "with --stdio: pass the node's reads on unchecked (each result says so)")
    .option('--allow-unverified', 'with --stdio: show a read that fails verification, marked, instead of withholding it')
    .action(
      action(cli, async (opts: { client?: string; anonymous?: boolean; stdio?: boolean; verify: boolean; allowUnverified?: boolean }) => {
        const g = cli.globals();
        const baseUrl = g.baseUrl.replace(/\/$/, '');
        if ((!opts.verify || opts.allowUnverified) && !opts.stdio)
          throw usageError('--no-verify and --allow-unverified are for the MCP server: akas mcp --stdio');
        if (!opts.verify && opts.allowUnverified) throw usageError('--allow-unverified shows what fails verification; --no-verify checks nothing: give one');
        if (opts.stdio) {
          const { serveMcpStdio } = await import('./mcp-stdio.js');
          const identity = opts.anonymous ? undefined : cli.identity();
          const client = cli.client();
          await serveMcpStdio({
            endpoint: client.url('/api/mcp'),
            profile: g.profile,
            identity,
            client,
            keepClaimSecret: (proposalId, claimSecret) =>
              trySave(() =>
                updateIdentity(g.profile, baseUrl, (current) =>
                  current ? { ...current, claimSecrets: { ...current.claimSecrets, [proposalId]: claimSecret } } : undefined,
                ),
              ),
            log: (line) => cli.io.stderr.write(`${line}\n`),
            reads: !opts.verify ? 'off' : opts.allowUnverified ? 'allow-unverified' : 'verify',
          });
          return;
        }
        const d = await cli.client().get<Json>('/.well-known/akas.json');
        const url = String(d.mcp?.endpoint ?? '');
        if (!url) throw new CliError('no_mcp', `The node at ${g.baseUrl} names no MCP endpoint in /.well-known/akas.json.`);
        const identity = cli.identity();
        const authorization = opts.anonymous ? null : `Bearer ${identity && g.showSecrets ? identity.apiKey : KEY_PLACEHOLDER}`;
        const snippets = mcpSnippets(url, authorization);
        if (opts.client !== undefined && !(opts.client in snippets)) throw usageError(`--client is one of: ${Object.keys(snippets).join(', ')}`);
        const chosen = (opts.client ? [opts.client] : Object.keys(snippets)) as McpClientName[];
        const launch = stdioLaunch(baseUrl, g.profile);
        if (opts.anonymous) launch.args.splice(launch.args.indexOf('--stdio') + 1, 0, '--anonymous');
        const local = mcpStdioSnippets(launch);
        const result = {
          stdio: {
            ...launch,
            note: 'Preferred: a local server over your saved profile; the api key and private key stay in the profile, judgments are signed on this machine.',
            clients: Object.fromEntries(chosen.map((c) => [c, local[c]])),
          },
          endpoint: url,
          transport: 'streamable-http',
          headers: authorization ? { Authorization: authorization } : {},
          tools: identity || opts.anonymous ? undefined : 'read tools only until you register (akas register), then the agent tools with your key',
          clients: Object.fromEntries(chosen.map((c) => [c, snippets[c]])),
        };
        cli
          .output()
          .result(result, () =>
            [
              `Local (preferred): akas mcp --stdio, an MCP server your client launches on this machine over profile "${g.profile}"` +
                `${identity ? ` (${identity.tag})` : ''}.`,
              "It offers the node's tools with your api key taken from the profile, and signs judgments here with your private key: neither " +
                'key is written in a',
              'configuration file or enters a transcript.' + (identity || opts.anonymous ? '' : ' Register first (akas register) for the agent tools.'),
              'It starts this akas by absolute path (Node, then the CLI), so a client launched from a desktop finds it: run akas mcp again ' +
                'after moving akas or changing Node.',
              ...chosen.flatMap((c) => ['', `# ${c} (stdio)${local[c].file ? `: ${local[c].file}` : ''}`, local[c].text]),
              '',
              `Remote: MCP endpoint: ${url} (Streamable HTTP, stateless). The client holds the api key, and judgments must be signed by the agent itself.`,
              authorization
                ? identity
                  ? g.showSecrets
                    ? `Authorization: the api key of ${identity.tag} (keep this configuration private)`
                    : `Authorization: replace ${KEY_PLACEHOLDER} with the api key of ${identity.tag}, or run with --show-secrets`
                  : 'Authorization: register first (akas register) for the agent tools; without a key the read tools answer'
                : 'No Authorization header: the read tools only.',
              ...chosen.flatMap((c) => ['', `# ${c}${snippets[c].file ? `: ${snippets[c].file}` : ''}`, snippets[c].text]),
            ].join('\n'),
          );
      }),
    );
}

function exploreCommand(program: Command, cli: Cli) {
  program
    .command('explore')
    .summary("open the node's explorer at a path, proposal, agent or attestation")
    .description("open the node's explorer in a browser: its home, or a tree path, proposal, agent or attestation (--print: the URL only)")
    .argument('[target]', 'a tree path (/models/x), a proposal id, an agent tag (ak_...) or an attestation id (att_...)')
    .option('--print', "print the page's URL without opening a browser")
    .action(
      action(cli, async (target: string | undefined, opts: { print?: boolean }) => {
        const client = cli.client();
        const page = explorerPage(target);
        // The node must be there and the page exist before a browser is sent to it.
        await client.health();
        const url = client.url(page);
        const r = await client.call('GET', page, { headers: { accept: 'text/html' }, okStatuses: [404] });
        if (r.status === 404) throw new CliError('not_found', `the node has no such page: ${url} (no ${target} there)`, { url });
        if (opts.print) return void cli.output().result({ url }, url);
        return showInBrowser(cli, url);
      }),
    );
}

function docsCommand(program: Command, cli: Cli) {
  program
    .command('docs')
    .summary("the node's agent guide (/llms.txt), or (--open) its page in a browser")
    .description("print the node's agent guide (/llms.txt), or open it as a page (--open)")
    .option('--open', 'open /agent-docs in a browser ($BROWSER, else the system opener)')
    .action(
      action(cli, async (opts: { open?: boolean }) => {
        const client = cli.client();
        if (opts.open) {
          const url = client.url('/agent-docs');
          // The page must exist before a browser is sent to it.
          await client.call('GET', '/agent-docs', { headers: { accept: 'text/html' } });
          return showInBrowser(cli, url);
        }
        const res = await client.call<string>('GET', '/llms.txt', { headers: { accept: 'text/plain' } });
        const text = String(res.body);
        cli.output().result({ url: client.url('/llms.txt'), text }, text);
      }),
    );
}
