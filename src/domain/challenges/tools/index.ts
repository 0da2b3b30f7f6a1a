// The registry of the five priced tools (PROTOCOL 4.4): published descriptions, cost
// multipliers, input and output JSON Schemas, and the implementations.
import { extractTool, type ExtractInput, type ExtractOutput } from './extract.js';
import { jsonValidateTool, type JsonValidateInput, type JsonValidateOutput } from './json-validate.js';
import { regexTestTool, type RegexTestInput, type RegexTestOutput } from './regex-test.js';
import type { ToolName, ToolSpec } from './types.js';
import { urlInfoTool, type UrlInfoInput, type UrlInfoOutput } from './url-info.js';
import { validateWithSchema, type Validation } from '../../common/validate.js';
import { wordCountTool, type WordCountInput, type WordCountOutput } from './word-count.js';

export type { ToolName, ToolSpec } from './types.js';
export type { JSONSchema, FieldError, Validation } from '../../common/validate.js';
export { validateWithSchema } from '../../common/validate.js';
export { ToolError, isToolError, type ToolErrorCode } from './errors.js';
export { closeRegexWorker, warmRegexWorker } from './regex-test.js';
export { clearExtractCache } from './extract.js';
export type {
  ExtractInput,
  ExtractOutput,
  JsonValidateInput,
  JsonValidateOutput,
  RegexTestInput,
  RegexTestOutput,
  UrlInfoInput,
  UrlInfoOutput,
  WordCountInput,
  WordCountOutput,
};
export type { RegexMatch } from './regex-test.js';

/** Each tool's input and output types by name. */
export interface ToolIO {
  extract: [ExtractInput, ExtractOutput];
  'regex-test': [RegexTestInput, RegexTestOutput];
  'json-validate': [JsonValidateInput, JsonValidateOutput];
  'word-count': [WordCountInput, WordCountOutput];
  'url-info': [UrlInfoInput, UrlInfoOutput];
}

/** The tools by name, each typed with its own input and output. */
export const TOOLS: { readonly [K in ToolName]: ToolSpec<ToolIO[K][0], ToolIO[K][1]> } = {
  extract: extractTool,
  'regex-test': regexTestTool,
  'json-validate': jsonValidateTool,
  'word-count': wordCountTool,
  'url-info': urlInfoTool,
};

/** The tool names in the protocol's order. */
export const TOOL_NAMES = Object.keys(TOOLS) as ToolName[];

/** Whether a string names a tool. */
export const isToolName = (s: unknown): s is ToolName => typeof s === 'string' && Object.hasOwn(TOOLS, s);

/** Checks a toolInput against the named tool's input schema; errors are named 'toolInput.<field>'. */
export const validateToolInput = (name: ToolName, input: unknown): Validation => validateWithSchema(TOOLS[name].input, input, 'toolInput');

/**
 * Runs the named tool on an input of unknown shape (as the use-tool route has it): throws
 * ServiceError invalid_tool_input when it does not fit, else whatever the tool throws
 * (ServiceError invalid_pattern, ToolError) or its result.
 */
export function runTool<K extends ToolName>(name: K, input: unknown): Promise<ToolIO[K][1]> {
  return (TOOLS[name] as ToolSpec<unknown, ToolIO[K][1]>).run(input);
}
