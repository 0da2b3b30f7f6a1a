// The small things of a newcomer's first hour (issue 23, item 5), run in-process against a
// test node: where nothing answers, a server that is not akas, a corrupt profile, the other
// pool's answers file, hints as commands, and the node's keys.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../../cli/kit/errors.js';
import { routesToCommands } from '../../cli/kit/next-steps.js';
import { describeFailure } from '../../cli/kit/output.js';
import { PROPOSAL_TEMPLATES } from '../../src/domain/proposals/templates.js';
import { cliHarness, type CliHarness } from '../helpers/cli.js';

let h: CliHarness;
let work: string;
beforeEach(async () => {
  h = await cliHarness();
  work = mkdtempSync(join(tmpdir(), 'akas-newcomer-'));
});
afterEach(async () => {
  await h.close();
  rmSync(work, { recursive: true, force: true });
});

// A web server that is not akas: an HTML 404 page for everything, or an empty 404.
let other: Server;
let otherUrl: string;
beforeAll(async () => {
  other = createServer((req, res) => {
    if (req.url?.startsWith('/empty')) return res.writeHead(404).end();
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>Not Found</h1></body></html>');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherUrl = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => other.close(() => r())));

const file = (name: string, value: unknown) => {
  const path = join(work, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};

describe('a --base-url where no akas node is', () => {
  it('says nothing answers there, even where "no identity" would have been the first thing to fail', async () => {
    const { profile } = await h.agent();
    const r = await h.akas(['--base-url', 'http://127.0.0.1:9', 'me'], { profile });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('nothing answers at http://127.0.0.1:9');
    expect(r.stderr).not.toContain('register');
  });

  it('says a server that is not akas is not an akas node, instead of printing its page', async () => {
    for (const args of [['search', 'x'], ['me'], ['node']]) {
      const r = await h.akas(['--base-url', otherUrl, ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`${otherUrl} is not an akas node`);
      expect(r.stderr).not.toContain('<html>');
    }
    const j = await h.akas(['--json', '--base-url', otherUrl, 'search', 'x']);
    expect(j.json()).toMatchObject({ ok: false, code: 'not_akas', status: 404 });
  });

  it('says a --base-url without http:// is not a URL, with the one it probably meant', async () => {
    const { profile } = await h.agent();
    const bare = h.baseUrl.replace(/^http:\/\//, '');
    for (const args of [['me'], ['search', 'x'], ['log', 'events'], ['cas', 'put', file('blob.txt', 'hello')]]) {
      const r = await h.akas(['--base-url', bare, ...args], { profile });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(`--base-url ${bare} is not an http:// or https:// URL: try --base-url http://${bare}`);
      expect(r.stderr, args.join(' ')).not.toContain('nothing answers');
    }
    const j = await h.akas(['--json', '--base-url', 'htp://127.0.0.1:9', 'me'], { profile });
    expect(j.json()).toMatchObject({ ok: false, code: 'bad_base_url' });
    expect(j.json().error).toContain('try --base-url http://127.0.0.1:9');
  });

  it('akas log events says nothing answers, or not an akas node, where the other commands do', async () => {
    const down = await h.akas(['--base-url', 'http://127.0.0.1:9', 'log', 'events']);
    expect(down.code).toBe(2);
    expect(down.stderr).toContain('nothing answers at http://127.0.0.1:9');
    expect(down.stderr).not.toContain('broke off');
    const other = await h.akas(['--base-url', otherUrl, 'log', 'events']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`${otherUrl} is not an akas node`);
    expect(other.stderr).not.toContain('<html>');
    const j = await h.akas(['--json', '--base-url', otherUrl, 'log', 'events']);
    expect(j.json()).toMatchObject({ ok: false, code: 'not_akas', status: 404 });
    // The node's own refusal is its envelope, not "HTTP 400: {...}".
    const refused = await h.akas(['log', 'events', '--from', '99999999999999999999']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(validation_failed, HTTP 400)');
    expect(refused.stderr).toContain('from');
    expect(refused.stderr).not.toMatch(/HTTP \d+: \{/);
  });

  it('names the nodes a profile does hold when it has no identity at this one', async () => {
    const { profile } = await h.agent();
    // Another live node, where this profile has no identity.
    const second = await cliHarness();
    process.env.AKAS_CONFIG_DIR = h.configDir; // cliHarness points the config folder at its own
    try {
      const r = await h.akas(['--base-url', second.baseUrl, 'me'], { profile });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('No identity');
      expect(r.stderr).toContain(`holds identities for: ${h.baseUrl}`);
    } finally {
      await second.close();
    }
  });
});

describe('a corrupt profile file', () => {
  it('is named, with how to get going again (exit 2)', async () => {
    const { profile } = await h.agent();
    const dir = join(h.configDir, 'profiles', profile);
    const path = join(dir, readdirSync(dir)[0]);
    writeFileSync(path, '{"tag": "ak_', { mode: 0o600 });
    const r = await h.akas(['me'], { profile });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${path} is not a readable profile`);
    expect(r.stderr).toContain('akas recover --tag TAG --token RECOVERY_TOKEN');
    const j = await h.akas(['--json', 'me'], { profile });
    expect(j.json()).toMatchObject({ code: 'profile_unreadable', path });
  });
});

describe('an answers file of the other calibration pool', () => {
  it('is refused saying which pool the agent has and which the file answers', async () => {
    const reg = await h.akas(['--json', '--profile', 'pb', 'register', '--pool', 'B']);
    expect(reg.code).toBe(0);
    const poolA = JSON.parse(readFileSync(new URL('../../data/calibration/pool-A.json', import.meta.url), 'utf8')) as {
      questions: Array<{ id: string; expected: string }>;
    };
    const answers = file('a.json', Object.fromEntries(poolA.questions.map((q) => [q.id, q.expected])));
    const r = await h.akas(['calibrate', '--answers', answers], { profile: 'pb' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/this agent's pool is B \(questions B1, .*B5\); .* answers A1, .*A5, which are not its questions \(pool A\)/);
    expect(r.stderr).toContain('akas calibrate --questions');
  });
});

describe('hints and next steps', () => {
  it('name the command where the node names a route', () => {
    expect(routesToCommands('Judge pending proposals instead (GET /api/judge/queue?expand=1); challenges come back later.')).toBe(
      'Judge pending proposals instead (`akas queue`); challenges come back later.',
    );
    expect(routesToCommands('Calibrate before proposing: GET /api/agent/v1/calibrate.')).toBe('Calibrate before proposing: `akas calibrate`.');
    expect(routesToCommands('POST the bytes to /api/cas first')).toBe('`akas cas put FILE` first');
    expect(routesToCommands('GET /api/knowledge/node/ lists the top of the tree; GET /api/knowledge/search finds nodes.')).toBe(
      '`akas node` lists the top of the tree; `akas search` finds nodes.',
    );
    expect(routesToCommands('see /api/knowledge/proposals/cprop_0123456789abcdef')).toBe('see `akas show cprop_0123456789abcdef`');
    const text = describeFailure(CliError.fromNode(1, 'x', { hint: 'Earn credits by judging pending proposals (GET /api/judge/queue) or answer challenges.' }));
    expect(text).toContain('hint: Earn credits by judging pending proposals (`akas queue`)');
  });

  it('after calibrating, name the next command', async () => {
    const reg = await h.akas(['--json', '--profile', 'pa', 'register', '--pool', 'A']);
    expect(reg.code).toBe(0);
    const poolA = JSON.parse(readFileSync(new URL('../../data/calibration/pool-A.json', import.meta.url), 'utf8')) as {
      questions: Array<{ id: string; expected: string }>;
    };
    const r = await h.akas(['calibrate', '--answers', file('a.json', Object.fromEntries(poolA.questions.map((q) => [q.id, q.expected])))], { profile: 'pa' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('next: akas queue (');
  });
});

describe('akas node-keys', () => {
  it("prints the issuer DID, the log key an auditor pins and the HMAC key ids; --json is the node's answer", async () => {
    const r = await h.akas(['node-keys']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`issuer       ${h.node.keys.issuer.did}`);
    expect(r.stdout).toContain(`log key      ${h.node.keys.log.verifierKey}`);
    expect(r.stdout).toContain('hmac keys    hk_test (current)');
    const j = await h.akas(['--json', 'keys']);
    expect(j.json().log.verifierKey).toBe(h.node.keys.log.verifierKey);
  });
});

describe('akas propose --template and --dry-run', () => {
  it('prints a template the node takes, and lists every error of a broken payload with descriptions', async () => {
    const t = await h.akas(['propose', 'artifact', '--template']);
    expect(t.code).toBe(0);
    expect(JSON.parse(t.stdout)).toEqual(PROPOSAL_TEMPLATES.artifact);
    const a = await h.agent();
    const ok = await h.akas(['propose', 'artifact', '--file', file('t.json', t.stdout), '--dry-run'], { profile: a.profile });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain('valid artifact for /models/my-model');
    const broken = structuredClone(PROPOSAL_TEMPLATES.artifact) as { payload: { provenance: Record<string, unknown> } };
    broken.payload.provenance.createdAt = '2026-01-01';
    delete broken.payload.provenance.license;
    const bad = await h.akas(['propose', 'artifact', '--file', file('b.json', broken), '--dry-run'], { profile: a.profile });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('NOT valid for artifact: 2 errors');
    expect(bad.stdout).toContain('payload.provenance.createdAt: must be integer');
    expect(bad.stdout).toContain('Unix time in milliseconds');
    expect(bad.stdout).toContain('payload.provenance.license: is required');
    const fields = await h.akas(['schemas', '--kind', 'artifact']);
    expect(fields.stdout).toMatch(/createdAt {2}\(required, integer\) {2}When it was made: Unix time in milliseconds/);
  });
});

describe('usage errors', () => {
  it('a typo of a command gets the suggestion and a pointer, not the whole command list', async () => {
    const r = await h.akas(['regster']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'regster'");
    expect(r.stderr).toContain('(Did you mean register?)');
    expect(r.stderr).toContain('akas --help lists every command');
    expect(r.stderr).not.toContain('Commands:');
    // A subcommand's usage error gets one pointer to its help, not the help itself (issue 36, 6).
    const missing = await h.akas(['judge']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'id'");
    expect(missing.stderr).toContain('(akas judge --help lists its options)');
    expect(missing.stderr).not.toContain('Usage: akas judge');
  });

  it('under --json is JSON on stdout, as every other failure is', async () => {
    for (const args of [
      ['--json', 'regster'],
      ['--json', 'judge'],
      ['judge', '--json'],
      ['--json', 'me', '--no-such-option'],
    ]) {
      const r = await h.akas(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.json(), args.join(' ')).toMatchObject({ ok: false, code: 'usage' });
      expect(r.json().error, args.join(' ')).not.toMatch(/^error:/);
    }
    // Without --json, stdout stays empty.
    expect((await h.akas(['judge'])).stdout).toBe('');
  });
});

describe('akas demo seed', () => {
  it('lists each proposal with the path it is about, the eval result with the artifact it evaluates', async () => {
    const r = await h.akas(['--json', 'demo', 'seed']);
    expect(r.code, r.stderr).toBe(0);
    const byKind = Object.fromEntries((r.json().proposals as Array<{ kind: string; path: string | null }>).map((p) => [p.kind, p.path]));
    expect(byKind).toMatchObject({ capability: '/tools/pdf-to-text', artifact: '/models/tiny-classifier', 'eval-result': '/models/tiny-classifier' });
    const human = await h.akas(['demo', 'seed']);
    expect(human.stdout).toContain('nothing to do');
  });
});

describe('akas attest --template', () => {
  it('prints the example body of the kind, which the dry run takes; an unknown kind lists the kinds', async () => {
    const r = await h.akas(['attest', 'review.attestation.v1', '--template']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toHaveProperty('verdict');
    const dry = await h.akas(['attest', 'review.attestation.v1', '--file', file('review.json', body), '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('valid review.attestation.v1');
    expect(dry.stdout).toContain(`akas attest review.attestation.v1 --file ${join(work, 'review.json')}`);
    const unknown = await h.akas(['attest', 'reviw.attestation.v1', '--template']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown attestation kind "reviw.attestation.v1"');
    expect(unknown.stderr).toContain('  review.attestation.v1');
    // Without a body, the refusal names the template.
    const bare = await h.akas(['attest', 'review.attestation.v1', '--dry-run']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('akas attest KIND --template');
  });
});

describe('where the keys an auditor pins come from', () => {
  it('the verify commands name akas node-keys for --issuer, --issuer-keys and --log-key', async () => {
    for (const sub of ['bundle', 'node', 'credential', 'log-proof']) {
      const r = await h.akas(['verify', sub, '--help']);
      expect(r.code, sub).toBe(0);
      expect(r.stdout.replace(/\s+/g, ' '), sub).toContain('akas node-keys');
      expect(r.stdout, sub).not.toMatch(/\(GET \/api\/node\/keys\)|from GET \/api\/node\/keys|\/healthz or \/api\/node\/keys/);
    }
  });
});

describe('akas serve --demo where it cannot seed', () => {
  it('says every flag it needs at once, before making anything', async () => {
    const data = join(work, 'node');
    const r = await h.akas(['serve', '--demo', '--host', '0.0.0.0', '--port', '0', '--data', data]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('add --allow-same-ip and --allow-demo-calibration');
    const calibrated = await h.akas(['serve', '--demo', '--calibration', join(work, 'cal'), '--port', '0', '--data', data]);
    expect(calibrated.code).toBe(2);
    expect(calibrated.stderr).toContain('start it without --calibration');
    expect(readdirSync(work)).not.toContain('node');
  });
});

describe('akas wakeup', () => {
  it('names the command to run where the node names a route, and how to register', async () => {
    const proposer = await h.agent();
    const judge = await h.agent();
    const tpl = await h.akas(['propose', 'tree-expansion', '--template']);
    const proposed = await h.akas(['propose', 'tree-expansion', '--file', file('t.json', tpl.stdout)], { profile: proposer.profile });
    expect(proposed.code, proposed.stderr).toBe(0);
    const w = await h.akas(['wakeup'], { profile: judge.profile });
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toContain('work-available');
    expect(w.stdout).toContain('`akas queue`');
    expect(w.stdout).not.toContain('GET /api/judge/queue');
    // --json stays the node's answer.
    expect((await h.akas(['--json', 'wakeup'], { profile: judge.profile })).json().nextEligibleAt.reasonDetail).toContain('GET /api/judge/queue');
    const anonymous = await h.akas(['wakeup'], { profile: 'nobody-here' });
    expect(anonymous.stdout).toContain('register: akas register');
  });
});
