// Every JSON Schema the project compiles is a JSON Schema. The node's ajv instances do not check
// that at run time (src/domain/common/ajv.ts: validateSchema off, as compiling the meta-schema
// six times over was most of a start), so this suite does, for all of them: route schemas and
// the answers routes document, proposal payloads, tool inputs, challenge answers, calibration
// answers of the shipped set. An operator's set is checked when it is read: the last case.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cryptoRandom } from '../../src/core/index.js';
import { schemaProblems } from '../../src/domain/common/ajv.js';
import { ANSWER_SCHEMAS } from '../../src/domain/calibration/bank.js';
import { generateCalibrationSet } from '../../src/domain/calibration/generate.js';
import { loadPools } from '../../src/domain/calibration/scoring.js';
import { CalibrationSetError, readCalibrationSet } from '../../src/domain/calibration/set.js';
import { TOOLS } from '../../src/domain/challenges/tools/index.js';
import { PAYLOAD_SCHEMAS } from '../../src/domain/proposals/kinds.js';
import { documentedResponses } from '../../src/http/route-docs.js';
import { tempDir } from '../helpers/e2e.js';
import { testNode, type TestNode } from '../helpers/app.js';

let node: TestNode;

beforeAll(async () => {
  node = await testNode();
});
afterAll(() => node.close());

const expectSchema = (schema: unknown, where: string) => expect(schemaProblems(schema), where).toEqual([]);

describe('the schemas the project compiles', () => {
  it('are JSON Schemas: every route part and every answer a route documents', () => {
    // Every route as fastify added it (openapi.ts collects them for the document).
    const routes = node.app.akasRoutes as unknown as Array<{ method: string; url: string; schema?: Record<string, unknown> }>;
    expect(routes.length).toBeGreaterThan(80);
    let parts = 0;
    for (const r of routes) {
      for (const part of ['body', 'querystring', 'params', 'headers'] as const) {
        const s = r.schema?.[part];
        if (s) {
          expectSchema(s, `${r.method} ${r.url} ${part}`);
          parts++;
        }
      }
      for (const [status, doc] of Object.entries(documentedResponses(r as never))) {
        const s = doc.schema ?? doc.content?.['application/json']?.schema;
        if (s) {
          expectSchema(s, `${r.method} ${r.url} answer ${status}`);
          parts++;
        }
      }
    }
    expect(parts).toBeGreaterThan(150);
  });

  it('are JSON Schemas: proposal payloads, tool inputs, challenge answers, the shipped calibration answers', () => {
    for (const [kind, s] of Object.entries(PAYLOAD_SCHEMAS)) expectSchema(s, `payload ${kind}`);
    for (const [name, t] of Object.entries(TOOLS)) expectSchema(t.input, `tool ${name}`);
    for (const [name, s] of Object.entries(ANSWER_SCHEMAS)) expectSchema(s, `answer ${name}`);
    const pools = loadPools();
    const withSchema = [...pools.A, ...pools.B].filter((q) => q.schema);
    expect(withSchema.length).toBeGreaterThan(0);
    for (const q of withSchema) expectSchema(q.schema, `question ${q.id}`);
  });

  it('names what is wrong with a schema that is not one', () => {
    expect(schemaProblems({ type: 'object', required: 'name' }).join('; ')).toMatch(/required/);
    expect(schemaProblems({ type: 'string', minLength: 'five' }).join('; ')).toMatch(/minLength/);
  });
});

describe("an operator's calibration set", () => {
  it('is refused when a question carries an answer schema that is not a JSON Schema, naming the question', () => {
    const dir = join(tempDir('akas-calset-'), 'set');
    mkdirSync(dir, { mode: 0o700 });
    const set = generateCalibrationSet(cryptoRandom) as unknown as Record<string, { questions?: Array<Record<string, unknown>> }>;
    const q = set['pool-A.json'].questions!.find((x) => x.scoring === 'schema-cosine')!;
    q.schema = { ...(q.schema as object), required: 'not-a-list' };
    for (const [file, body] of Object.entries(set)) {
      writeFileSync(join(dir, file), JSON.stringify(body));
      chmodSync(join(dir, file), 0o600);
    }
    expect(() => readCalibrationSet(dir)).toThrow(CalibrationSetError);
    expect(() => readCalibrationSet(dir)).toThrow(new RegExp(`${q.id as string}: its schema is not a JSON Schema`));
  });

  it('is refused when an expected answer does not fit its own schema, naming the question', () => {
    const dir = join(tempDir('akas-calset-'), 'set');
    mkdirSync(dir, { mode: 0o700 });
    const set = generateCalibrationSet(cryptoRandom) as unknown as Record<string, { questions?: Array<Record<string, unknown>> }>;
    const q = set['pool-B.json'].questions!.find((x) => x.scoring === 'schema-cosine')!;
    q.expected = '"a string where the schema wants an object"';
    for (const [file, body] of Object.entries(set)) {
      writeFileSync(join(dir, file), JSON.stringify(body));
      chmodSync(join(dir, file), 0o600);
    }
    expect(() => readCalibrationSet(dir)).toThrow(new RegExp(`${q.id as string}: expected does not fit its schema`));
  });
});
