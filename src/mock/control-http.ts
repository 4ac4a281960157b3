import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate, REALM } from './auth.js';
import { isControlAction, runControl } from './control.js';
import { mediaType, readBody, sendText } from './http-io.js';
import type { ResolvedOptions } from './options.js';

/** Control requests are small JSON objects. */
const MAX_CONTROL_BODY_BYTES = 16 * 1024;

function sendJson(res: ServerResponse, status: number, body: object): void {
  const bytes = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(bytes.length),
  });
  res.end(bytes);
}

/**
 * `POST /<tenant>/control/<action>` over HTTP: Basic auth as for SOAP requests (the user name is the
 * customer), a JSON body, then the action on the tenant's state through the world's load and save
 * (`control.ts`). Works whether the tenant is up or down: `status` must be able to bring it back.
 */
export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  config: ResolvedOptions,
  target: { tenant: string; action: string },
): Promise<string> {
  const auth = authenticate(req.headers.authorization, config.credentials);
  if (!auth.ok) {
    const headers: Record<string, string> =
      auth.status === 401 ? { 'www-authenticate': `Basic realm="${REALM}"` } : {};
    sendText(res, auth.status, auth.status === 401 ? 'Unauthorized\n' : 'Forbidden\n', headers);
    return `control → ${auth.status}`;
  }
  const { action, tenant } = target;
  if (!isControlAction(action)) {
    sendJson(res, 404, { error: 'unknown_action', message: `No control action "${action}".` });
    return 'control → 404';
  }
  if (mediaType(req.headers['content-type']) !== 'application/json') {
    sendJson(res, 415, { error: 'unsupported_media_type', message: 'Control requests are JSON.' });
    return 'control → 415';
  }
  const read = await readBody(req, MAX_CONTROL_BODY_BYTES);
  if (!read.ok) {
    if (read.reason === 'too_large') sendJson(res, 413, { error: 'too_large', message: 'Body too large.' });
    return `control → ${read.reason}`;
  }
  let input: unknown;
  try {
    input = JSON.parse(read.body);
  } catch {
    sendJson(res, 400, { error: 'invalid_request', message: 'The body is not valid JSON.' });
    return 'control → 400';
  }
  const answer = await config.world.update(tenant, 'write', async (state) =>
    runControl(action, input, state, auth.customerId, config.env),
  );
  sendJson(res, answer.status, answer.body);
  return `control ${action} → ${answer.status}`;
}
