// akas mcp and akas docs (PROTOCOL 11.4, 12): the client configuration of this node's MCP
// endpoint, read from its descriptor, and its agent guide.
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpSnippets, mcpStdioSnippets, thisAkas } from '../../cli/commands/discovery/index.js';
import { loadIdentity } from '../../cli/kit/profile.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';
import { eventually } from '../helpers/written.js';

let h: CliHarness;
beforeAll(async () => {
  h = await cliHarness();
});
afterAll(() => h.close());

describe('akas mcp', () => {
  it('prints the endpoint and a snippet per client, with a placeholder for the key', async () => {
    const r = await h.akas(['mcp']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`MCP endpoint: ${h.baseUrl}/api/mcp`);
    for (const client of ['claude-code', 'claude-desktop', 'cursor', 'vscode', 'windsurf', 'generic']) expect(r.stdout).toContain(`# ${client}`);
    expect(r.stdout).toContain(`claude mcp add --transport http akas ${h.baseUrl}/api/mcp --header "Authorization: Bearer <apiKey`);
    expect(r.stdout).toContain('register first');
  });

  it('answers JSON for one client; the saved key appears only with --show-secrets', async () => {
    const { profile, tag } = await h.agent();
    const apiKey = loadIdentity(profile, h.baseUrl)!.apiKey;
    const hidden = await h.akas(['--json', 'mcp', '--client', 'vscode'], { profile });
    expect(hidden.code, hidden.stderr).toBe(0);
    const j = hidden.json();
    expect(j).toMatchObject({ endpoint: `${h.baseUrl}/api/mcp`, transport: 'streamable-http' });
    expect(Object.keys(j.clients)).toEqual(['vscode']);
    expect(JSON.parse(j.clients.vscode.text)).toEqual({
      servers: { akas: { type: 'http', url: `${h.baseUrl}/api/mcp`, headers: { Authorization: j.headers.Authorization } } },
    });
    expect(hidden.stdout).not.toContain(apiKey);
    const shown = await h.akas(['--json', '--show-secrets', 'mcp', '--client', 'cursor'], { profile });
    expect(shown.json().headers).toEqual({ Authorization: `Bearer ${apiKey}` });
    expect(JSON.parse(shown.json().clients.cursor.text).mcpServers.akas).toEqual({
      url: `${h.baseUrl}/api/mcp`,
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    const human = await h.akas(['mcp', '--client', 'claude-code'], { profile });
    expect(human.stdout).toContain(`the api key of ${tag}`);
    const anonymous = await h.akas(['--json', 'mcp', '--anonymous'], { profile });
    expect(anonymous.json().headers).toEqual({});
  });

  it('prints the akas mcp --stdio configuration first, for every client, holding no key', async () => {
    const { profile } = await h.agent();
    const saved = loadIdentity(profile, h.baseUrl)!;
    const j = (await h.akas(['--json', '--show-secrets', 'mcp'], { profile })).json();
    // This akas by absolute path: Node, then the CLI's script (a desktop client's PATH may hold
    // neither). In-process here, so the script is this process's own.
    const command = process.execPath;
    const args = [realpathSync(process.argv[1]), '--base-url', h.baseUrl, '--profile', profile, 'mcp', '--stdio'];
    // The harness's own config folder (AKAS_CONFIG_DIR) goes to the server the client launches.
    const env = { AKAS_CONFIG_DIR: process.env.AKAS_CONFIG_DIR };
    expect(j.stdio).toMatchObject({ command, args, env });
    expect(Object.keys(j.stdio.clients)).toEqual(['claude-code', 'claude-desktop', 'cursor', 'vscode', 'windsurf', 'generic']);
    expect(JSON.parse(j.stdio.clients.vscode.text)).toEqual({ servers: { akas: { type: 'stdio', command, args, env } } });
    for (const c of ['claude-desktop', 'cursor', 'windsurf'])
      expect(JSON.parse(j.stdio.clients[c].text)).toEqual({ mcpServers: { akas: { command, args, env } } });
    expect(j.stdio.clients['claude-code'].text).toBe(
      `claude mcp add --transport stdio --env AKAS_CONFIG_DIR=${env.AKAS_CONFIG_DIR} akas -- ${command} ${args.join(' ')}`,
    );
    for (const secret of [saved.apiKey, saved.signing.privateKey, saved.recoveryToken]) expect(JSON.stringify(j.stdio)).not.toContain(secret);
    // Text: the local configuration before the remote one.
    const text = (await h.akas(['mcp', '--client', 'cursor'], { profile })).stdout;
    expect(text.indexOf('# cursor (stdio)')).toBeGreaterThan(-1);
    expect(text.indexOf('# cursor (stdio)')).toBeLessThan(text.indexOf('MCP endpoint:'));
    // A global install runs akas through a symlink on the PATH: the configuration names the file it links to.
    const dir = mkdtempSync(join(tmpdir(), 'akas-launch-'));
    try {
      writeFileSync(join(dir, 'main.cjs'), '');
      symlinkSync(join(dir, 'main.cjs'), join(dir, 'akas'));
      expect(thisAkas('/opt/node/bin/node', join(dir, 'akas'))).toEqual({ command: '/opt/node/bin/node', args: [realpathSync(join(dir, 'main.cjs'))] });
      expect(thisAkas('/opt/node/bin/node', join(dir, 'gone'))).toEqual({ command: '/opt/node/bin/node', args: [join(dir, 'gone')] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(mcpStdioSnippets({ command: 'akas', args: ['--profile', "it's"] })['claude-code'].text).toBe(
      `claude mcp add --transport stdio akas -- akas --profile 'it'\\''s'`,
    );
  });

  it('refuses an unknown client (exit 2) and an unreachable node (exit 2)', async () => {
    const bad = await h.akas(['mcp', '--client', 'emacs']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--client is one of')]);
    const gone = await h.akas(['--base-url', 'http://127.0.0.1:1', 'mcp']);
    expect(gone.code).toBe(2);
  });

  it('writes snippets the clients parse: JSON where JSON is expected', () => {
    const s = mcpSnippets('http://n/api/mcp', 'Bearer k');
    for (const c of ['claude-desktop', 'cursor', 'vscode', 'windsurf', 'generic'] as const) expect(() => JSON.parse(s[c].text)).not.toThrow();
    expect(JSON.parse(s['claude-desktop'].text).mcpServers.akas.args).toEqual(['-y', 'mcp-remote', 'http://n/api/mcp', '--header', 'Authorization:Bearer k']);
  });
});

describe('akas docs', () => {
  it("prints the node's /llms.txt", async () => {
    const r = await h.akas(['docs']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^# akas node at ${h.baseUrl.replace(/[./]/g, '\\$&')}`));
    expect(r.stdout).toContain(`BASE=${h.baseUrl}`);
    const j = await h.akas(['--json', 'docs']);
    expect(j.json()).toMatchObject({ url: `${h.baseUrl}/llms.txt`, text: r.stdout.replace(/\n$/, '') + '\n' });
  });

  it('opens /agent-docs with $BROWSER', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'akas-browser-'));
    const browser = join(dir, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\necho "$1" > "${join(dir, 'opened')}"\n`);
    chmodSync(browser, 0o755);
    const saved = process.env.BROWSER;
    process.env.BROWSER = browser;
    try {
      const r = await h.akas(['--json', 'docs', '--open']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toEqual({ opened: `${h.baseUrl}/agent-docs` });
      // The browser runs on its own: wait for the line it writes, however long it takes to start.
      const opened = join(dir, 'opened');
      await eventually(() => existsSync(opened) && readFileSync(opened, 'utf8').endsWith('\n'));
      expect(readFileSync(opened, 'utf8').trim()).toBe(`${h.baseUrl}/agent-docs`);
    } finally {
      if (saved === undefined) delete process.env.BROWSER;
      else process.env.BROWSER = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('akas explore', () => {
  it("prints the explorer page of the node's home and an agent, and refuses a tree path or proposal the node does not hold", async () => {
    const home = await h.akas(['explore', '--print']);
    expect(home.code, home.stderr).toBe(0);
    expect(home.stdout.trim()).toBe(`${h.baseUrl}/`);
    const a = await h.agent();
    const j = await h.akas(['--json', 'explore', a.tag, '--print']);
    expect(j.code, j.stderr).toBe(0);
    expect(j.json()).toEqual({ url: `${h.baseUrl}/explore/agents/${a.tag}` });
    expect((await h.akas(['explore', '/', '--print'])).stdout.trim()).toBe(`${h.baseUrl}/`);
    // A proposal the node does not hold is refused before any browser is opened.
    const missing = await h.akas(['explore', 'cprop_0123456789abcdef', '--print']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    const path = await h.akas(['explore', '/models/nothing-here', '--print']);
    expect(path.code).toBe(1);
    expect(path.stderr).toContain(`the node has no such page: ${h.baseUrl}/explore/tree/models/nothing-here`);
    const bad = await h.akas(['explore', 'not a thing', '--print']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a tree path, proposal id, agent tag or attestation id');
  });
});
