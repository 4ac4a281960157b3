import type { IncomingMessage, ServerResponse } from 'node:http';

/** Small HTTP helpers for the mock's `node:http` server. */

const SOAP_CONTENT_TYPE = 'application/soap+xml; charset=utf-8';

export type BodyResult = { ok: true; body: string } | { ok: false; reason: 'too_large' | 'aborted' };

/** Reads the whole request body, giving up (without buffering more) once it exceeds `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes)
    return Promise.resolve({ ok: false, reason: 'too_large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) finish({ ok: false, reason: 'too_large' });
      else chunks.push(chunk);
    });
    req.on('end', () =>
      finish({ ok: true, body: decode(Buffer.concat(chunks), req.headers['content-type']) }),
    );
    req.on('aborted', () => finish({ ok: false, reason: 'aborted' }));
    req.on('error', () => finish({ ok: false, reason: 'aborted' }));
  });
}

/** UTF-8 unless the content type says ISO-8859-1 (the only other charset a SOAP stack is likely to send). */
function decode(bytes: Buffer, contentType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  const latin1 = charset === 'iso-8859-1' || charset === 'latin1';
  return bytes.toString(latin1 ? 'latin1' : 'utf8');
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  const body = Buffer.from(text, 'utf8');
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(body.length),
    ...headers,
  });
  res.end(body);
}

export function sendSoap(res: ServerResponse, status: number, envelope: string): void {
  const body = Buffer.from(envelope, 'utf8');
  res.writeHead(status, { 'content-type': SOAP_CONTENT_TYPE, 'content-length': String(body.length) });
  res.end(body);
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
}
