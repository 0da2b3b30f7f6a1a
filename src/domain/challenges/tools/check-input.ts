// Every tool re-checks its input against its own schema before running, so a caller that
// forgot to validate cannot push a 10 MB text into a tool. Size limits come first (PROTOCOL
// 1.3): an input over one is refused naming that limit alone.
import { ServiceError } from '../../../core/index.js';
import { validateWithSchema, type JSONSchema } from '../../common/validate.js';

/** Throws ServiceError invalid_tool_input (errors[] under 'toolInput') when input does not fit schema. */
export function checkToolInput(schema: JSONSchema, input: unknown): void {
  const v = validateWithSchema(schema, input, 'toolInput', { sizesFirst: true });
  if (!v.ok) throw new ServiceError('invalid_tool_input', 'toolInput does not fit the chosen tool.', { errors: v.errors });
}
