import type { IncomingMessage } from 'node:http';
import { newRequestId } from '../lib/ids.js';

/** An incoming X-Request-Id is kept only if it is this harmless (it ends up in logs and bodies). */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify `genReqId`: the caller's X-Request-Id if safe, else a new `req_…`. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : newRequestId();
}
