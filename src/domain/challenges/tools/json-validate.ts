// json-validate (PROTOCOL 4.4): whether a text is JSON, and a summary of its shape. Not a schema
// validator. bytes is the UTF-8 length of the text as given (surrounding white space included).
import { checkToolInput } from './check-input.js';
import type { ToolSpec } from './types.js';

/** PROTOCOL 14: json-validate text max. */
export const JSON_VALIDATE_TEXT_MAX = 100_000;

/** The JSON type of the top-level value, or 'invalid'. */
export type JsonType = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null' | 'invalid';

/** toolInput of json-validate. */
export interface JsonValidateInput {
  text: string;
}

/** The result of json-validate. */
export interface JsonValidateOutput {
  valid: boolean;
  type: JsonType;
  bytes: number;
}

/** JSON Schema of json-validate toolInput (PROTOCOL 4.4). */
export const jsonValidateInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: {
    text: { type: 'string', maxLength: JSON_VALIDATE_TEXT_MAX, description: 'The text to check (max 100000 characters).' },
  },
} as const;

/** JSON Schema of the json-validate result. */
export const jsonValidateOutputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['valid', 'type', 'bytes'],
  properties: {
    valid: { type: 'boolean', description: 'True when text is one JSON value (RFC 8259), surrounding white space allowed.' },
    type: {
      type: 'string',
      enum: ['object', 'array', 'string', 'number', 'boolean', 'null', 'invalid'],
      description: "JSON type of the top-level value; 'invalid' when not JSON.",
    },
    bytes: { type: 'integer', minimum: 0, description: 'UTF-8 byte length of text.' },
  },
} as const;

// The JSON type of a parsed value (JSON.parse yields nothing else).
function typeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as 'object' | 'string' | 'number' | 'boolean';
}

/** json-validate: {valid, type, bytes} of a text. */
export async function jsonValidate(input: JsonValidateInput): Promise<JsonValidateOutput> {
  checkToolInput(jsonValidateInputSchema, input);
  const bytes = Buffer.byteLength(input.text, 'utf8');
  try {
    return { valid: true, type: typeOf(JSON.parse(input.text)), bytes };
  } catch {
    return { valid: false, type: 'invalid', bytes };
  }
}

/** json-validate as a registry entry (PROTOCOL 4.4, cost multiplier 1). */
export const jsonValidateTool: ToolSpec<JsonValidateInput, JsonValidateOutput> = {
  name: 'json-validate',
  description:
    'Checks whether a text (max 100000 characters) is valid JSON and summarises it: valid, the top-level type (object, array, string, ' +
    "number, boolean, null, or 'invalid') and the UTF-8 byte length. A shape summary, not a schema validator.",
  costMultiplier: 1,
  input: jsonValidateInputSchema,
  output: jsonValidateOutputSchema,
  run: jsonValidate,
};
