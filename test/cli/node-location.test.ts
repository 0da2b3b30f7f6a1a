// Where a node's data is (cli/kit/node-location.ts): one reading of --data, --store, AKAS_DATA
// and AKAS_STORE for serve, log check, admin revoke and store migrate, and admin's look at the
// nodes running here (PROTOCOL 8.7). Four commands worked it out apart and differed: log check
// and admin revoke took --store over --data silently, and log check took any --store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandGroups } from '../../cli/commands/index.js';
import { CliError } from '../../cli/kit/errors.js';
import { nodeLocation, nodeMeant, type Registry } from '../../cli/kit/node-location.js';
import { run } from '../../cli/program.js';
import type { LiveNode } from '../../src/ops/admin-ask.js';
import { Capture } from '../helpers/cli.js';

const PG = 'postgres://akas@db.example/akas';

/** The usage error's code and message, failing the test if there is none. */
function refusal(f: () => unknown): { code: unknown; message: string } {
  try {
    f();
  } catch (e) {
    if (CliError.is(e)) return { code: e.body.code, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('nodeLocation', () => {
  it('is the folder ./.akas when nothing names one', () => {
    expect(nodeLocation({}, {})).toEqual({ kind: 'folder', dataDir: './.akas', named: false });
  });

  it('takes the folder --data names, else AKAS_DATA', () => {
    expect(nodeLocation({}, { AKAS_DATA: '/srv/a' })).toEqual({ kind: 'folder', dataDir: '/srv/a', named: true });
    expect(nodeLocation({ data: '/srv/b' }, { AKAS_DATA: '/srv/a' })).toEqual({ kind: 'folder', dataDir: '/srv/b', named: true });
  });

  it('takes the database --store or AKAS_STORE names, over AKAS_DATA', () => {
    expect(nodeLocation({ store: PG }, {})).toEqual({ kind: 'store', store: PG, dataDir: './.akas' });
    expect(nodeLocation({}, { AKAS_STORE: PG, AKAS_DATA: '/srv/a' })).toEqual({ kind: 'store', store: PG, dataDir: '/srv/a' });
  });

  it('lets --data alone override AKAS_STORE (a flag wins over the environment)', () => {
    expect(nodeLocation({ data: '/srv/b' }, { AKAS_STORE: PG })).toEqual({ kind: 'folder', dataDir: '/srv/b', named: true });
  });

  it('counts an environment variable set to nothing as not set', () => {
    expect(nodeLocation({}, { AKAS_STORE: '', AKAS_DATA: '' })).toEqual({ kind: 'folder', dataDir: './.akas', named: false });
  });

  it('names where the node secret comes from: --node-secret-file, else AKAS_NODE_SECRET_FILE, and AKAS_NODE_SECRET', () => {
    expect(nodeLocation({ store: PG, nodeSecretFile: '/run/a' }, { AKAS_NODE_SECRET_FILE: '/run/b', AKAS_NODE_SECRET: 's' })).toMatchObject({
      secretFile: '/run/a',
      secret: 's',
    });
    expect(nodeLocation({ store: PG }, { AKAS_NODE_SECRET_FILE: '/run/b' })).toMatchObject({ secretFile: '/run/b' });
  });

  it('refuses a --store that is not a postgres:// URL, and --data with --store', () => {
    expect(refusal(() => nodeLocation({ store: './folder' }, {})).code).toBe('usage');
    expect(refusal(() => nodeLocation({}, { AKAS_STORE: 'mysql://db' })).code).toBe('usage');
    expect(refusal(() => nodeLocation({ data: '/srv/a', store: PG }, {}))).toMatchObject({ code: 'usage', message: /exclude each other/ });
  });
});

const live = (o: Partial<LiveNode>): LiveNode => ({
  pid: 4242,
  url: 'http://127.0.0.1:7373',
  startedAt: '2026-01-01T00:00:00.000Z',
  file: '/state/x.json',
  ...o,
});

/** A registry holding these nodes; `asked` counts its readings. */
function registry(nodes: LiveNode[] | Error) {
  const r = {
    asked: 0,
    liveNodes: async () => {
      r.asked++;
      if (nodes instanceof Error) throw nodes;
      return nodes;
    },
    realDataFolder: (dir: string) => (dir.startsWith('/') ? dir : `/real/${dir.replace(/^\.\//, '')}`),
  };
  return r as typeof r & Registry;
}

describe('nodeMeant (admin revoke)', () => {
  it('takes the one local node running when nothing names one', async () => {
    const one = live({ dataDir: '/srv/one', socket: '/srv/one/admin.sock' });
    const m = await nodeMeant({}, {}, registry([one, live({ store: PG })]));
    expect(m).toEqual({ location: { kind: 'folder', dataDir: '/srv/one', named: false }, chosen: 'running', node: one });
  });

  it('is the default folder, made real, when no node runs here', async () => {
    expect(await nodeMeant({}, {}, registry([]))).toEqual({ location: { kind: 'folder', dataDir: '/real/.akas', named: false }, chosen: 'default' });
  });

  it('refuses several local nodes, listing them, and database nodes alone, asking for --store', async () => {
    const two = [live({ dataDir: '/srv/a', pid: 1 }), live({ dataDir: '/srv/b', pid: 2 })];
    await expect(nodeMeant({}, {}, registry(two))).rejects.toMatchObject({
      exitCode: 2,
      body: {
        code: 'several_nodes',
        nodes: [
          { dataDir: '/srv/a', pid: 1 },
          { dataDir: '/srv/b', pid: 2 },
        ],
      },
    });
    await expect(nodeMeant({}, {}, registry([live({ store: PG })]))).rejects.toMatchObject({ body: { code: 'store_nodes' } });
    await expect(nodeMeant({}, {}, registry(new Error('the registry folder is not yours alone')))).rejects.toMatchObject({
      body: { code: 'node_registry' },
    });
  });

  it('takes the folder --data or AKAS_DATA names, with the record of a node running on it', async () => {
    const there = live({ dataDir: '/srv/named', socket: '/run/akas/abc.sock' });
    const reg = registry([live({ dataDir: '/srv/other' }), there]);
    expect(await nodeMeant({ data: '/srv/named' }, {}, reg)).toEqual({
      location: { kind: 'folder', dataDir: '/srv/named', named: true },
      chosen: 'named',
      node: there,
    });
    expect(await nodeMeant({}, { AKAS_DATA: '/srv/stopped' }, reg)).toEqual({
      location: { kind: 'folder', dataDir: '/srv/stopped', named: true },
      chosen: 'named',
    });
  });

  it('takes a database as named, never reading the registry for it', async () => {
    const reg = registry([live({ dataDir: '/srv/a' })]);
    expect(await nodeMeant({ store: PG }, {}, reg)).toEqual({ location: { kind: 'store', store: PG, dataDir: './.akas' }, chosen: 'named' });
    expect(reg.asked).toBe(0);
  });
});

describe('the commands that open a node read it alike', () => {
  const state = mkdtempSync(join(tmpdir(), 'akas-location-'));
  afterAll(() => rmSync(state, { recursive: true, force: true }));
  const akas = async (args: string[]) => {
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await run(['--json', ...args], { stdout, stderr }, commandGroups, {});
    process.exitCode = 0;
    return { code, body: JSON.parse(stdout.text) };
  };
  // Nothing is opened: an unreachable database would be refused as unreachable, not as usage.
  const down = 'postgres://nobody@127.0.0.1:9/none';

  it.each([
    ['log check', ['log', 'check']],
    ['admin revoke', ['admin', 'revoke', 'jdg_0000000000000000', '--reason', 'test']],
    ['serve', ['serve', '--port', '0']],
  ])('%s refuses --data with --store (exit 2, usage)', async (_name, command) => {
    const r = await akas([...command, '--data', join(state, 'node'), '--store', down]);
    expect(r).toMatchObject({ code: 2, body: { code: 'usage' } });
  });

  it.each([
    ['log check', ['log', 'check']],
    ['admin revoke', ['admin', 'revoke', 'jdg_0000000000000000', '--reason', 'test']],
    ['store migrate', ['store', 'migrate']],
    ['serve', ['serve', '--port', '0']],
  ])('%s refuses a --store that is not a postgres:// URL (exit 2, usage)', async (_name, command) => {
    const r = await akas([...command, '--store', join(state, 'not-a-url')]);
    expect(r).toMatchObject({ code: 2, body: { code: 'usage' } });
  });
});
