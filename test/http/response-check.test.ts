// The test-time contract of answers (response-check.ts): an answer that does not fit what its
// route documents becomes a 500 naming the mismatch, so the OpenAPI document cannot drift from
// what the node answers while every HTTP test runs with the check on.
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/core/index.js';
import { errorHandler } from '../../src/http-kit/errors.js';
import { registerOpenApi } from '../../src/http/openapi.js';
import { registerResponseCheck } from '../../src/http/response-check.js';
import { Closed } from '../../src/http/schemas.js';

let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify();
  app.setErrorHandler(errorHandler);
  await registerOpenApi(app);
  registerResponseCheck(app);
  const schema = (operationId: string) => ({ operationId, summary: operationId, tags: ['discovery'], response: { 200: Closed({ ok: Type.Boolean() }) } });
  app.get('/fits', { schema: schema('fits') }, async () => ({ ok: true }));
  app.get('/grew', { schema: schema('grew') }, async () => ({ ok: true, privateKey: 'f'.repeat(64) }));
  app.get('/mistyped', { schema: schema('mistyped') }, async () => ({ ok: 'yes' }));
  app.get('/declared', { schema: schema('declared'), config: { errors: ['not_found'] } }, async () => {
    throw new ServiceError('not_found', 'nothing here');
  });
  app.get('/undeclared', { schema: schema('undeclared') }, async () => {
    throw new ServiceError('self_judge', 'not this route');
  });
  app.get('/teapot', { schema: schema('teapot') }, async (_request, reply) => reply.code(418 as 200).send({ ok: true }));
  await app.ready();
});
afterAll(() => app.close());

const get = (url: string) => app.inject({ url });

describe('the response check', () => {
  it('lets an answer that fits its schema through unchanged', async () => {
    const res = await get('/fits');
    expect([res.statusCode, res.json()]).toEqual([200, { ok: true }]);
    const declared = await get('/declared');
    expect([declared.statusCode, declared.json().code]).toEqual([404, 'not_found']);
  });

  it('fails an answer that grew an undeclared field, or whose field has the wrong type', async () => {
    for (const url of ['/grew', '/mistyped']) {
      const res = await get(url);
      expect(res.statusCode).toBe(500);
      expect(res.json()).toMatchObject({ code: 'internal_error', violation: { route: url, status: 200 } });
    }
    expect(JSON.stringify((await get('/grew')).json().violation.problems)).toContain('privateKey');
  });

  it('fails a refusal code the route never declared, and a status it does not document', async () => {
    const undeclared = await get('/undeclared');
    expect(undeclared.statusCode).toBe(500);
    expect(JSON.stringify(undeclared.json().violation)).toContain('status 403 is not documented');
    const teapot = await get('/teapot');
    expect(teapot.json().violation.problems).toEqual([expect.stringContaining('status 418 is not documented')]);
    expect(app.akasResponseViolations.map((v) => v.route)).toEqual(expect.arrayContaining(['/grew', '/mistyped', '/undeclared', '/teapot']));
  });
});
