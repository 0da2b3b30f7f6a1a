// Every tool re-checks its input against its own schema before running, so a caller that
// forgot to validate cannot push a 10 MB text into a tool.
import { ServiceError } from '../../core/index.js';
import { validateWithSchema, type JSONSchema } from './validate.js';

/** Throws ServiceError invalid_tool_input (errors[] under 'toolInput') when input does not fit schema. */
export function checkToolInput(schema: JSONSchema, input: unknown): void {
  const v = validateWithSchema(schema, input, 'toolInput');
  if (!v.ok) throw new ServiceError('invalid_tool_input', 'toolInput does not fit the chosen tool.', { errors: v.errors });
}
