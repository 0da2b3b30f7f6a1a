// What a node's listen address and proxy settings say about who can reach it: the same-IP rule
// (PROTOCOL 7.5) and the demo calibration set's refusal depend on it.

/** Addresses only this machine can reach: every client of a node listening on one has the same IP. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The same-IP rule (PROTOCOL 7.5: one judge per client IP for each proposal) where it can
 * mean something. A node listening on loopback only, without --trust-proxy, sees every
 * client at the same address: there the rule would stop the second agent of a local first
 * session, so agents are told apart by their keys alone. Wherever clients can be told apart
 * by IP (another listen address, or X-Forwarded-For behind a proxy) it holds, unless the
 * operator turns it off.
 */
export function sameIpPolicy(opts: { host: string; trustProxy: boolean; allowSameIp: boolean }): { enforced: boolean; reason: string } {
  if (opts.allowSameIp) return { enforced: false, reason: 'off (--allow-same-ip): agents on one IP may judge the same proposal' };
  if (isLoopbackHost(opts.host) && !opts.trustProxy) {
    return {
      enforced: false,
      reason: `off: listening on loopback only (${opts.host}) without --trust-proxy, every client has one address; agents are told apart by their keys`,
    };
  }
  return {
    enforced: true,
    reason: opts.trustProxy
      ? 'on: one judge per client IP for each proposal (the IP read from X-Forwarded-For, --trust-proxy)'
      : `on: one judge per client IP for each proposal (listening on ${opts.host})`,
  };
}

/**
 * Why other machines' clients reach this node, or undefined when only this machine's can: a
 * listen address other than loopback, a reverse proxy in front (--trust-proxy: it forwards
 * others' requests to a loopback port), or a public URL that is not loopback.
 */
export function reachableFromOutside(opts: { host: string; config: { trustProxy?: boolean | number | string[]; publicUrl?: string } }): string | undefined {
  if (!isLoopbackHost(opts.host)) return `listening on ${opts.host}`;
  if (opts.config.trustProxy !== undefined && opts.config.trustProxy !== false) return 'behind a reverse proxy (--trust-proxy)';
  if (opts.config.publicUrl) {
    let host: string | undefined;
    try {
      host = new URL(opts.config.publicUrl).hostname;
    } catch {
      host = undefined;
    }
    if (!host || !isLoopbackHost(host)) return `published at ${opts.config.publicUrl} (--public-url)`;
  }
  return undefined;
}
