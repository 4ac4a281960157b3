import type {} from '@fastify/swagger'; // route schema options `hide`, `tags`, `summary`
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Logger } from 'pino';
import type { Caller } from '../core/caller.js';
import type { RouteErrors } from './route-errors.js';

/**
 * The Fastify instance routes are registered on (TypeBox types flow into handlers). Its logger is the
 * gateway's pino logger (`request.log` a child with the request id), so services take it as the one
 * `Logger` type.
 */
export type GatewayApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  Logger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Starts draining (src/http/lifecycle.ts): new requests get 503 with `Connection: close` while the
     * listener stays open; resolves once the requests in flight at the start have been answered.
     */
    drain(): Promise<void>;
    /** Whether the drain (or `close`) has begun: a request answered now gets the drain's 503. */
    isDraining(): boolean;
  }
  interface FastifySchema {
    /** What a success answer holds, in a sentence or two: its description in the OpenAPI document. */
    responseDescription?: string;
  }
  interface FastifyRequest {
    /**
     * Set by the auth hook before any keyed route runs. Public routes (`config: { public: true }`)
     * have no caller, and reading it there is a bug (it is null).
     */
    auth: Caller;
  }
  interface FastifyContextConfig {
    /** No API key, no rate limit (health, docs, metrics). */
    public?: boolean;
    /** The route's own error kinds (src/http/route-errors.ts): description, OpenAPI and error handler. */
    errors?: RouteErrors;
  }
}
