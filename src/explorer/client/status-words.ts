// A judgment credential's status in words (PROTOCOL 8.7; issue 47), one function for the page as
// the node renders it and for the page script that checks it: active, revoked or suspended, with
// the reason, the time and the list version. The node's word (its record of each change, GET
// /api/credentials/status/{id}) is what a page shows without JavaScript, said to be unchecked;
// in a browser the verdict is the signed list's (read under the pinned issuer), the node's record
// naming only the reason and time of the change the list shows, and a list that cannot be read
// or does not verify is "status unknown", never good. It lives with the page script, which may
// import nothing outside it, and the node's pages (layout.ts) import it from here (tsconfig.json lists it).

/** The node's record of the last change of one of a credential's bits (domain/credentials/status-lists.ts). */
export interface NodeStatusRecord {
  set: boolean;
  action: string;
  reason: string;
  at: number;
  version: number;
}

/** The node's records of a credential, by purpose (none for a credential never changed). */
export type NodeStatus = Partial<Record<string, NodeStatusRecord>>;

/** What one entry of the credential says, as the verifier read it in its signed list (verifier/status-list.ts StatusVerdict). */
export interface CheckedEntry {
  purpose: string;
  state: 'clear' | 'set' | 'unknown' | 'malformed';
  version?: number;
  asOf?: string;
  reason?: string;
  at?: number;
}

export type StatusState = 'active' | 'revoked' | 'suspended' | 'unknown';

/** A time as the explorer's badges say it: to the minute, in UTC. */
export const when = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const setWord = (purpose: string) => (purpose === 'revocation' ? 'revoked' : purpose === 'suspension' ? 'suspended' : `set for ${purpose}`);
const liftedWord = (purpose: string) => (purpose === 'suspension' ? 'suspension lifted' : `${purpose} cleared`);
const listName = (purpose: string, version: number | undefined) => `${purpose} list version ${version ?? 'not given'}`;

/** The node's word on a credential, for a page read without JavaScript: what it recorded, not checked. */
export function nodeStatusWords(s: NodeStatus): { state: StatusState; text: string } {
  const records = Object.entries(s).filter((e): e is [string, NodeStatusRecord] => e[1] !== undefined);
  const set = records.filter(([, r]) => r.set);
  if (set.length)
    return {
      state: set.some(([p]) => p === 'revocation') ? 'revoked' : 'suspended',
      text: set.map(([p, r]) => `${setWord(p)}: ${r.reason}, ${when(r.at)} (${listName(p, r.version)})`).join(' · '),
    };
  const lifted = records.map(([p, r]) => `${liftedWord(p)}: ${r.reason}, ${when(r.at)} (${listName(p, r.version)})`);
  return { state: 'active', text: lifted.length ? `active: ${lifted.join(' · ')}` : 'active: never revoked or suspended' };
}

/**
 * A credential's status as checked in the browser: the entries read in the signed lists, with
 * the node's records for the reason and time. Unknown when an entry could not be read, or when
 * the node's record and its signed list disagree (which is right cannot be told here).
 */
export function checkedStatusWords(entries: CheckedEntry[], node: NodeStatus, unknownWhy?: string): { state: StatusState; text: string } {
  if (!entries.length || entries.some((e) => e.state === 'unknown' || e.state === 'malformed'))
    return { state: 'unknown', text: `status unknown: ${unknownWhy ?? 'its status list could not be read'}` };
  for (const e of entries) {
    const said = node[e.purpose];
    if (said && said.set !== (e.state === 'set'))
      return {
        state: 'unknown',
        text:
          `status unknown: the node says ${said.set ? setWord(e.purpose) : `not ${setWord(e.purpose)}`} (${listName(e.purpose, said.version)}), ` +
          `its signed ${listName(e.purpose, e.version)} says ${e.state === 'set' ? setWord(e.purpose) : `not ${setWord(e.purpose)}`}`,
      };
  }
  const checked = 'checked in your browser';
  const set = entries.filter((e) => e.state === 'set');
  if (set.length) {
    const parts = set.map((e) => {
      const r = node[e.purpose];
      const at = r?.at ?? e.at;
      const time = at ? when(at) : `at or before ${e.asOf ?? 'an unknown time'}`;
      return `${setWord(e.purpose)}: ${r?.reason ?? e.reason ?? 'reason not given'}, ${time} (${listName(e.purpose, e.version)}, ${checked})`;
    });
    return { state: set.some((e) => e.purpose === 'revocation') ? 'revoked' : 'suspended', text: parts.join(' · ') };
  }
  const clear = entries.map((e) => {
    const r = node[e.purpose];
    return r ? `${liftedWord(e.purpose)}: ${r.reason}, ${when(r.at)}` : `not ${setWord(e.purpose)}`;
  });
  return { state: 'active', text: `active: ${clear.join(' · ')} (${entries.map((e) => listName(e.purpose, e.version)).join(', ')}, ${checked})` };
}
