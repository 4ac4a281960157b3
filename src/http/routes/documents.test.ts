import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/db.js';
import { type Gateway, startGateway } from '../../../test/gateway.js';
import { pdfText } from '../../../test/pdf.js';
import { placeSandboxOrder } from '../../../test/sandbox-orders.js';

describeEachDialect('GET /v1/documents/{id}', (getDatabase) => {
  let gw: Gateway;
  const pharmacy = { username: 'docs1', password: 'pw-for-tests' };
  let notice: { tracking_number: string; document_id: string };

  beforeAll(async () => {
    gw = await startGateway({ database: getDatabase() });
    await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 2 }], { credentials: pharmacy });
    const listed = await gw.inject({
      url: '/v1/deliveries',
      query: { wholesaler: 'phoenix' },
      credentials: pharmacy,
    });
    notice = listed.json().deliveries[0];
  });
  afterAll(() => gw.close());

  const download = (id: string, credentials = pharmacy, wholesaler = 'phoenix') =>
    gw.inject({ url: `/v1/documents/${id}`, query: { wholesaler }, credentials });

  it('sends the delivery note as a PDF with length and a filename', async () => {
    const response = await download(notice.document_id.toUpperCase());
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/pdf');
    expect(Number(response.headers['content-length'])).toBe(response.rawPayload.length);
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="delivery-note-${notice.tracking_number}.pdf"`,
    );
    expect(response.headers['cache-control']).toBe('private, no-store');
    // A real PDF that names the delivery note it belongs to.
    expect(response.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = pdfText(response.rawPayload);
    if (text !== null) expect(text).toContain(notice.tracking_number);
  });

  it('says 404 for an id the wholesaler does not know, and for another pharmacy’s document', async () => {
    const unknown = await download('00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({
      error: 'document_not_found',
      wholesaler: 'phoenix',
      upstream: { kind: 'ValidationFault' },
    });
    const other = await download(notice.document_id, { username: 'docs2', password: 'pw-for-tests' });
    expect(other.statusCode).toBe(404);
    expect(other.json().error).toBe('document_not_found');
  });

  it('wants a uuid, v2 and the credentials', async () => {
    const notUuid = await download('delivery-note-1');
    expect(notUuid.statusCode).toBe(400);
    expect(notUuid.json()).toMatchObject({ error: 'invalid_request' });
    const v1 = await download(notice.document_id, pharmacy, 'gehe');
    expect(v1.statusCode).toBe(422);
    expect(v1.json().error).toBe('operation_not_supported');
    const rejected = await download(notice.document_id, { username: 'docs1', password: 'wrong-password' });
    expect(rejected.statusCode).toBe(401);
  });
});
