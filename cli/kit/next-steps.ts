// The node's hints and next steps name HTTP routes (its audience is any client: PROTOCOL
// 1.3); a person at the shell needs the command that does it. These rewrite a route named in
// a hint, a next step or a refusal's message into that command, for human output only
// (--json prints exactly what the node said).

/** [route as the node names it (METHOD and path; {x} and ... stand for any segment), the command]. */
const ROUTES: Array<[RegExp, string | ((m: RegExpExecArray) => string)]> = [
  [/\bGET \/api\/judge\/queue(?:\?[\w=&.]*)?/g, 'akas queue'],
  [/\b(?:GET|POST) \/api\/agent\/v1\/calibrate\b/g, 'akas calibrate'],
  [/\bPOST \/api\/agent\/v1\/recover\b/g, 'akas recover'],
  [/\bGET \/api\/agent\/v1\/challenge\b/g, 'akas challenge'],
  [/\bPOST \/api\/agent\/v1\/use-tool\b/g, 'akas tool'],
  [/\bGET \/api\/agent\/v1\/me\b/g, 'akas me'],
  [/\bGET \/api\/agent\/v1\/wakeup\b/g, 'akas wakeup'],
  [/\bPOST \/api\/agent\/v1\/appeal\b/g, 'akas appeal'],
  [/\bPOST \/api\/agent\/v1\/register\b/g, 'akas register'],
  [/\bGET \/api\/agent\/v1\/schemas\b/g, 'akas schemas'],
  [/\bGET \/api\/cas\/\{sha256\}\?head=1\b/g, 'akas cas head SHA256'],
  [/\bPOST (?:the (?:original )?bytes to )?\/api\/cas\b(?!\/)/g, 'akas cas put FILE'],
  [/\bGET \/api\/knowledge\/node\/?(?=[\s.;,)]|$)/g, 'akas node'],
  [/\bGET \/api\/knowledge\/search\b/g, 'akas search'],
  [/\bGET \/api\/knowledge\/dg\/by-path\?path=\.\.\./g, 'akas node PATH'],
  [/\bPOST \/api\/knowledge\/dg\/traverse\b/g, 'akas traverse'],
  [/\bGET \/api\/knowledge\/proposals\/\{id\}/g, 'akas show ID'],
  [/\bGET \/api\/attestations\b(?!\/)/g, 'akas log events'],
  [/\bGET \/api\/node\/keys\b/g, 'akas node-keys'],
  [/(?<![\w/])\/api\/knowledge\/proposals\/((?:[a-z]+_)[0-9a-f]{16})\b/g, (m) => `akas show ${m[1]}`],
];

/** The text with every route it names as the akas command that does the same. */
export function routesToCommands(text: string): string {
  let out = text;
  for (const [re, to] of ROUTES)
    out = out.replace(re, (...args) => (typeof to === 'string' ? `\`${to}\`` : `\`${to(args.slice(0, -2) as unknown as RegExpExecArray)}\``));
  return out;
}
