// akas serve's own flags, read before a node starts: what --trust-proxy trusts, what --public-url takes.
import { describe, expect, it } from 'vitest';
import { parsePublicUrl, parseTrustProxy } from '../../cli/commands/serve/config.js';
import { clientKey } from '../../src/http/caller.js';

describe('--trust-proxy', () => {
  it('trusts nothing when absent, one hop alone, N hops as a number, or the proxies named', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy(true)).toBe(1);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('10.0.0.1, 10.1.0.0/16,fd00::/8,loopback')).toEqual(['10.0.0.1', '10.1.0.0/16', 'fd00::/8', 'loopback']);
  });

  it('refuses what is neither a hop count nor an address', () => {
    for (const bad of ['0', 'proxy.example', '10.0.0.0/40', '10.0.0.1/8/2', ',']) expect(() => parseTrustProxy(bad), bad).toThrow(/--trust-proxy/);
  });
});

describe('--public-url', () => {
  it('takes an http(s) origin, with a path the proxy serves the node under, and drops the trailing slash', () => {
    expect(parsePublicUrl('https://akas.example.org')).toBe('https://akas.example.org');
    expect(parsePublicUrl('https://akas.example.org/')).toBe('https://akas.example.org');
    expect(parsePublicUrl('HTTPS://Akas.Example.org:443/nodes/a/')).toBe('https://akas.example.org/nodes/a');
    expect(parsePublicUrl('http://127.0.0.1:7373')).toBe('http://127.0.0.1:7373');
  });

  it('refuses what cannot start every absolute URL: not a URL, another scheme, a user, a query or a fragment', () => {
    for (const bad of [
      'akas.example.org',
      'ftp://akas.example.org',
      'https://u:p@akas.example.org',
      'https://akas.example.org/?a=1',
      'https://akas.example.org/#x',
      'https://akas.example.org?',
    ]) {
      expect(() => parsePublicUrl(bad), bad).toThrow(/--public-url/);
    }
  });
});

describe('per-IP limits', () => {
  it('count an IPv4 address as it is and an IPv6 address by its /64', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:1:2::7')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1.2.3.4')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey(clientKey('2001:db8:1:2::7'))).toBe('2001:db8:1:2::/64');
  });
});
