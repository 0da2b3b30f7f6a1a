// Which node a saved identity belongs to (ARCHITECTURE 4, profiles: identities are saved per profile and node,
// the node being its issuer DID found at its base URL). A fresh node on the port of an old one
// answers the old identity's api key with 401: this says so, naming both nodes, and puts back
// the identity kept for the node that answers when there is one. `akas register` on another
// node at the same URL keeps the old identity for its node and makes a new one without --force.
import { AkasClient, CliError, keepAside, type SavedIdentity, takeBack, updateIdentity } from '../../kit/index.js';
import type { Cli } from '../../program.js';

type Json = Record<string, unknown>;

const urlOf = (cli: Cli) => cli.globals().baseUrl.replace(/\/$/, '');

/** The issuer DID of the node at the URL, or undefined when nothing (or no akas node) answers. */
export async function nodeIssuer(baseUrl: string): Promise<string | undefined> {
  try {
    const h = await new AkasClient({ baseUrl }).health<Json>();
    return typeof h.issuer === 'string' ? h.issuer : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the node at the URL knows this api key (undefined: it could not be asked). */
async function knows(baseUrl: string, apiKey: string): Promise<boolean | undefined> {
  try {
    const r = await new AkasClient({ baseUrl, apiKey }).call('GET', '/api/agent/v1/me', { auth: true, okStatuses: [401, 403, 429] });
    return r.status !== 401;
  } catch {
    return undefined;
  }
}

const labelOf = (id: SavedIdentity) => id.issuer ?? `unknown-node-${id.createdAt}`;

/**
 * After the node refused the saved api key (401): 'switched' when the identity kept for the
 * node that answers was put back in use (the command may run again: a 401 did nothing); a
 * CliError naming both nodes when the saved identity is another node's; undefined when it is
 * this node's, or that cannot be told (the refusal stands as it is).
 */
export async function otherNodesIdentity(cli: Cli, refusal: CliError): Promise<'switched' | CliError | undefined> {
  const g = cli.globals();
  const baseUrl = urlOf(cli);
  const saved = cli.identity();
  if (!saved) return undefined;
  const issuer = await nodeIssuer(baseUrl);
  if (!issuer || saved.issuer === issuer) return undefined;
  if (takeBack(g.profile, baseUrl, issuer, saved)) {
    cli
      .output()
      .note(`the node at ${baseUrl} is ${issuer}: profile "${g.profile}" uses the identity it keeps for that node (${saved.tag} is kept for its own)`);
    return 'switched';
  }
  const whose = saved.issuer
    ? `another node's: it was made on ${saved.issuer}`
    : "another node's, it seems: this node does not know its api key (it was saved before akas recorded which node an identity belongs to)";
  return CliError.fromNode(
    1,
    [
      `The identity profile "${g.profile}" holds for ${baseUrl} (${saved.tag}) is ${whose}; the node answering at ${baseUrl} now is ${issuer}.`,
      `\`akas register\` makes an identity on this node and keeps ${saved.tag} for its node (used again when that node answers here); ` +
        '--profile NAME uses another profile.',
    ].join('\n'),
    // The node's hint (register for an api key) is what this says already, with why.
    { ...refusal.body, hint: undefined, savedIssuer: saved.issuer ?? null, nodeIssuer: issuer, tag: saved.tag },
  );
}

/**
 * Before `akas register`: the identity this profile holds for the node that answers (the one in
 * use if it is that node's; one kept for it, put back), with another node's identity kept aside
 * for its node. `issuer` is the node's (from its /healthz); without it nothing can be told and
 * the identity in use is answered as it is.
 */
export async function identityForNode(cli: Cli, issuer: string | undefined): Promise<{ existing?: SavedIdentity; note?: string }> {
  const g = cli.globals();
  const baseUrl = urlOf(cli);
  const saved = cli.identity();
  if (!issuer || !saved || saved.issuer === issuer) return { existing: saved };
  if (!saved.issuer) {
    // Saved before identities recorded their node: this node's if it knows the api key.
    const known = await knows(baseUrl, saved.apiKey);
    if (known === undefined) return { existing: saved };
    if (known) {
      updateIdentity(g.profile, baseUrl, (current) => (current ? { ...current, issuer } : undefined));
      return { existing: { ...saved, issuer } };
    }
  }
  if (takeBack(g.profile, baseUrl, issuer, saved)) {
    return { existing: cli.identity(), note: `${saved.tag} is another node's (${saved.issuer ?? 'made before akas recorded nodes'}): kept for it` };
  }
  const to = keepAside(g.profile, baseUrl, labelOf(saved));
  return { note: `${saved.tag} is another node's (${saved.issuer ?? 'this node does not know it'}): kept for that node in ${to}` };
}

/** Records the node's issuer in an identity saved before identities recorded their node (after the node took its key). */
export async function recordIssuer(cli: Cli, saved: SavedIdentity | undefined) {
  if (!saved || saved.issuer) return;
  const issuer = await nodeIssuer(urlOf(cli));
  if (issuer) updateIdentity(cli.globals().profile, urlOf(cli), (current) => (current && current.tag === saved.tag ? { ...current, issuer } : undefined));
}
