import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../../src/core/index.js';
import { urlInfo, urlInfoTool } from '../../../../src/domain/challenges/tools/url-info.js';
import { validateWithSchema } from '../../../../src/domain/common/validate.js';

describe('url-info', () => {
  it.each([
    ['https://example.com/a/b?q=1#frag', { protocol: 'https', host: 'example.com', port: '443', path: '/a/b' }],
    ['http://example.com', { protocol: 'http', host: 'example.com', port: '80', path: '/' }],
    ['http://example.com:8080/x', { protocol: 'http', host: 'example.com', port: '8080', path: '/x' }],
    ['https://example.com:443/', { protocol: 'https', host: 'example.com', port: '443', path: '/' }],
    ['wss://[::1]:9000/socket', { protocol: 'wss', host: '[::1]', port: '9000', path: '/socket' }],
    ['ftp://files.example.org/pub', { protocol: 'ftp', host: 'files.example.org', port: '21', path: '/pub' }],
    ['HTTPS://Bücher.Example/', { protocol: 'https', host: 'xn--bcher-kva.example', port: '443', path: '/' }],
    ['mailto:ann@example.org', { protocol: 'mailto', host: '', port: '', path: 'ann@example.org' }],
    ['file:///etc/hosts', { protocol: 'file', host: '', port: '', path: '/etc/hosts' }],
  ])('parses %s', async (url, parts) => {
    const out = await urlInfo({ url });
    expect(out).toEqual({ valid: true, ...parts });
    expect(validateWithSchema(urlInfoTool.output, out).ok).toBe(true);
  });

  it.each(['', 'not a url', 'example.com/path', '/relative', 'http://', 'https://exa mple.com', 'http://example.com:99999'])(
    'answers %j with valid false and empty parts, not an error',
    async (url) => {
      expect(await urlInfo({ url })).toEqual({ valid: false, protocol: '', host: '', port: '', path: '' });
    },
  );

  it('refuses input outside the schema with invalid_tool_input', async () => {
    for (const input of [{}, { url: 1 }, { url: 'https://a.b', fetch: true }]) {
      await expect(urlInfo(input as never)).rejects.toSatisfy((e) => e instanceof ServiceError && e.code === 'invalid_tool_input');
    }
  });
});
