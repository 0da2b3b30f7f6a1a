// The shape every priced tool shares (PROTOCOL 4.4), so the registry, the schemas route and the
// use-tool route can treat the five alike.
import type { JSONSchema } from '../../common/validate.js';

/** The five tools of PROTOCOL 4.4. */
export type ToolName = 'extract' | 'regex-test' | 'json-validate' | 'word-count' | 'url-info';

/** One priced tool: its published description and schemas, and its pure implementation. */
export interface ToolSpec<I, O> {
  name: ToolName;
  description: string;
  /** Multiplies the tier price (PROTOCOL 14: extract 2, others 1). */
  costMultiplier: number;
  /** JSON Schema of toolInput (draft-07 style, additionalProperties false). */
  input: JSONSchema;
  /** JSON Schema of the result. */
  output: JSONSchema;
  /**
   * Runs the tool. Validates `input` against `input` itself (ServiceError invalid_tool_input
   * with errors[] when it does not fit), so a caller that skipped validation is still safe.
   */
  run(input: I): Promise<O>;
}
