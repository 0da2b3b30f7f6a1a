// The routes' instance, requests and replies as the TypeBox type provider
// (@fastify/type-provider-typebox, over typebox@1) types them: a handler's body, query and params
// are the Static types of the schemas its route declares, and what it returns is checked against
// the route's response schemas. Types only: nothing here runs, so a request costs what it did.
//
// A route plugin takes an App; a handler named apart from its route (the routes are a table:
// app.get(path, options, handler)) takes the request and reply of its route's schema:
// `async function brief(request: Req<typeof BriefRoute.schema>)`.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyContextConfig,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
} from 'fastify';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** The request of a route whose schema is S: body, querystring and params typed from it. */
export type Req<S extends FastifySchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, S, TypeBoxTypeProvider>;

/** The reply of a route whose schema is S: what it sends is checked against S's response schemas. */
export type Reply<S extends FastifySchema> = FastifyReply<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyContextConfig,
  S,
  TypeBoxTypeProvider
>;

/**
 * A route's options as the table names them: its schema, its config (errors, auth, idempotency,
 * body bounds), and the few route options a route sets itself (its byte limit, a hook of its own).
 */
export interface RouteOptions {
  schema: FastifySchema;
  config?: FastifyContextConfig;
  bodyLimit?: number;
  onRequest?: (request: FastifyRequest) => Promise<void>;
  preValidation?: (request: FastifyRequest) => Promise<void>;
}
