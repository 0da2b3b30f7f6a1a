// The walk form's body (application/x-www-form-urlencoded, the explorer's scope only: the API
// reads JSON), read as strictly as a JSON body (PROTOCOL 1.1): URLSearchParams would put U+FFFD
// in place of bytes (raw or percent-escaped) that are not UTF-8, a lone surrogate's among them.
import { decodeUtf8Strict, ServiceError } from '../core/index.js';

/** The walk form's byte limit: a path and up to 64 inputs. */
export const FORM_BYTES = 64 * 1024;

/** How many fields a form holds (its '&'-separated pairs, empty ones too), counted on the bytes. */
export function formFields(body: Buffer): number {
  let n = 1;
  for (let i = body.indexOf(0x26); i !== -1; i = body.indexOf(0x26, i + 1)) n++;
  return n;
}

/**
 * An application/x-www-form-urlencoded body as fields, refused (400 invalid_json, as a JSON body
 * would be) when its bytes or a percent-escape are not UTF-8, or when a field comes twice.
 */
export function parseFormStrict(body: Buffer): Record<string, string> {
  const refuse = (why: string) => new ServiceError('invalid_json', `The form is not strict: ${why}.`, { hint: 'Send UTF-8 text, each field once.' });
  const text = decodeUtf8Strict(body);
  if (text === undefined) throw refuse('its bytes are not UTF-8');
  const fields: Record<string, string> = Object.create(null);
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent((at === -1 ? pair : pair.slice(0, at)).replace(/\+/g, ' '));
      value = at === -1 ? '' : decodeURIComponent(pair.slice(at + 1).replace(/\+/g, ' '));
    } catch {
      throw refuse('a percent-escape is not UTF-8 (or is malformed)');
    }
    if (Object.hasOwn(fields, name)) throw refuse(`the field ${JSON.stringify(name.slice(0, 40))} comes twice`);
    fields[name] = value;
  }
  return { ...fields };
}

/** The walk's inputs from the form's `in.NAME` fields: a number, true or false as such; anything else as text. */
export function walkInputs(body: Record<string, unknown>): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (!k.startsWith('in.')) continue;
    const s = String(v).trim();
    inputs[k.slice(3)] = s === 'true' ? true : s === 'false' ? false : s !== '' && Number.isFinite(Number(s)) ? Number(s) : s;
  }
  return inputs;
}
