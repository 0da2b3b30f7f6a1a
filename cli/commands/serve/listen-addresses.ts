// Every address a node listens on, as URLs: the one address it was bound to, or for a wildcard
// bind (0.0.0.0, ::) each address of this machine's interfaces, so the banner names every URL
// that reaches it and not only the first (the issue 36 newcomer read "listening on
// http://127.0.0.1:7373" from a node on 0.0.0.0).
import { networkInterfaces } from 'node:os';

const url = (address: string, port: number) => `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

export function listenUrls(bound: { address: string; port: number; family?: string } | string | null): string[] {
  if (!bound || typeof bound === 'string') return [];
  const { address, port } = bound;
  if (address !== '0.0.0.0' && address !== '::') return [url(address, port)];
  // :: takes IPv4 too on a dual-stack system (Node's default), 0.0.0.0 IPv4 alone.
  const families = address === '::' ? ['IPv4', 'IPv6'] : ['IPv4'];
  const all = Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && families.includes(i.family) && !(i.family === 'IPv6' && i.scopeid))
    .map((i) => url(i!.address, port));
  return all.length ? all : [url(address, port)];
}
