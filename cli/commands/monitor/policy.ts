// C2SP tlog-policy (https://c2sp.org/tlog-policy): which logs a checkpoint may be signed by, and
// the quorum of witness cosignatures it must carry. `log`, `witness`, `group` and `quorum` lines;
// names defined before use; `none` the empty quorum.
import { parseVerifierKey } from '../../../src/core/index.js';
import { Checks, checkWitnesses } from '../../../verifier/index.js';

type Rule = { kind: 'witness'; key: string } | { kind: 'group'; k: number; members: string[] };

export interface TlogPolicy {
  logs: string[];
  names: Map<string, Rule>;
  quorum: string;
}

const SEP = /[ \t]+/;

/** Parses a policy file's text; throws an Error naming the line for anything the specification does not allow. */
export function parsePolicy(text: string): TlogPolicy {
  const logs: string[] = [];
  const names = new Map<string, Rule>();
  let quorum: string | undefined;
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const fail = (why: string) => new Error(`line ${i + 1}: ${why}`);
    const [word, ...args] = line.split(SEP);
    const define = (name: string | undefined, rule: Rule) => {
      if (!name || name === 'none' || names.has(name)) throw fail(`the name ${name} is missing, reserved or defined twice`);
      names.set(name, rule);
    };
    if (word === 'log') {
      if (args.length < 1 || args.length > 2 || !parseVerifierKey(args[0])) throw fail('log <vkey> [<url>]: not an Ed25519 note verifier key');
      logs.push(args[0]);
    } else if (word === 'witness') {
      if (args.length < 2 || args.length > 3) throw fail('witness <name> <vkey> [<url>]');
      define(args[0], { kind: 'witness', key: args[1] });
    } else if (word === 'group') {
      const [name, k, ...members] = args;
      if (!members.length) throw fail('group <name> all|any|<k> <name>...');
      for (const m of members) if (!names.has(m)) throw fail(`${m} is not defined on a line before`);
      if (new Set(members).size !== members.length) throw fail('a name is listed twice in the group');
      const n = k === 'all' ? members.length : k === 'any' ? 1 : /^[1-9][0-9]*$/.test(k) ? Number(k) : Number.NaN;
      if (!(n >= 1 && n <= members.length)) throw fail(`the threshold ${k} is not all, any or 1..${members.length}`);
      define(name, { kind: 'group', k: n, members });
    } else if (word === 'quorum') {
      if (quorum !== undefined) throw fail('a policy has exactly one quorum line');
      if (args.length !== 1 || (args[0] !== 'none' && !names.has(args[0]))) throw fail('quorum <name>: a witness or group defined before, or none');
      quorum = args[0];
    } else throw fail(`unknown line "${word}"`);
  }
  if (quorum === undefined) throw new Error('the policy has no quorum line');
  return { logs, names, quorum };
}

/** Whether a checkpoint note meets the policy's quorum, and which witnesses' cosignatures verified. */
export function quorumOf(policy: TlogPolicy, note: string): { met: boolean; cosigned: string[]; missing: string[] } {
  const verified = new Map<string, boolean>();
  const witnessOk = (name: string, key: string) => {
    let ok = verified.get(name);
    if (ok === undefined) {
      ok = checkWitnesses(new Checks(), note, { keys: [key], quorum: 1 });
      verified.set(name, ok);
    }
    return ok;
  };
  const holds = (name: string): boolean => {
    const rule = policy.names.get(name)!;
    if (rule.kind === 'witness') return witnessOk(name, rule.key);
    return rule.members.filter(holds).length >= rule.k;
  };
  const met = policy.quorum === 'none' || holds(policy.quorum);
  const witnesses = [...policy.names].filter(([, r]) => r.kind === 'witness').map(([n]) => n);
  for (const w of witnesses) holds(w);
  return { met, cosigned: witnesses.filter((w) => verified.get(w)), missing: witnesses.filter((w) => !verified.get(w)) };
}
