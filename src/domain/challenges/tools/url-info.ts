// url-info (PROTOCOL 4.4): the parts of a URL by the WHATWG URL parser (node's URL), with no
// network access. An unparseable URL is a result {valid: false, all parts ''}, not an error.
// - protocol: the scheme without its ':' ("https").
// - host: the host name without port (IPv6 in brackets, "[::1]"; IDN in punycode).
// - port: the explicit port, else the scheme's default (http/ws 80, https/wss 443, ftp 21),
//   else ''. The parser drops an explicit port equal to the default, so that reads the same.
// - path: the path only ("/a/b"; no query, no fragment); special schemes always have at
//   least "/", others may have '' or an opaque path ("mailto:x@y.z" -> "x@y.z").
import { checkToolInput } from './check-input.js';
import type { ToolSpec } from './types.js';

/** toolInput of url-info. */
export interface UrlInfoInput {
  url: string;
}

/** The result of url-info (all parts '' when not valid). */
export interface UrlInfoOutput {
  valid: boolean;
  protocol: string;
  host: string;
  port: string;
  path: string;
}

/** JSON Schema of url-info toolInput (PROTOCOL 4.4). */
export const urlInfoInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', description: 'An absolute URL. Parsed only; never fetched.' },
  },
} as const;

/** JSON Schema of the url-info result. */
export const urlInfoOutputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['valid', 'protocol', 'host', 'port', 'path'],
  properties: {
    valid: { type: 'boolean', description: 'True when url parses as an absolute URL (WHATWG URL Standard).' },
    protocol: { type: 'string', description: "Scheme without ':' (e.g. https); '' when not valid." },
    host: { type: 'string', description: "Host name without port; '' when none or not valid." },
    port: { type: 'string', description: "Explicit port, else the scheme default (http 80, https 443, ws 80, wss 443, ftp 21), else ''." },
    path: { type: 'string', description: 'Path without query or fragment.' },
  },
} as const;

/** Default ports of the special schemes that have one. */
export const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', ws: '80', wss: '443', ftp: '21' };

// PROTOCOL 4.4: an invalid URL is a result with every part empty, not an error.
const INVALID: UrlInfoOutput = { valid: false, protocol: '', host: '', port: '', path: '' };

/** url-info: the parts of a URL, or valid false. */
export async function urlInfo(input: UrlInfoInput): Promise<UrlInfoOutput> {
  checkToolInput(urlInfoInputSchema, input);
  let u: URL;
  try {
    u = new URL(input.url);
  } catch {
    return { ...INVALID };
  }
  const protocol = u.protocol.replace(/:$/, '');
  return { valid: true, protocol, host: u.hostname, port: u.port || (DEFAULT_PORTS[protocol] ?? ''), path: u.pathname };
}

/** url-info as a registry entry (PROTOCOL 4.4, cost multiplier 1). */
export const urlInfoTool: ToolSpec<UrlInfoInput, UrlInfoOutput> = {
  name: 'url-info',
  description:
    "Parses a URL without fetching it: valid, protocol (scheme without ':'), host, port (explicit or the scheme default) and path. An " +
    'invalid URL gives valid false with empty parts, not an error.',
  costMultiplier: 1,
  input: urlInfoInputSchema,
  output: urlInfoOutputSchema,
  run: urlInfo,
};
