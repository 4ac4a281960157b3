import type { DocumentRequest, DocumentResponse } from '../msv3/operations/dokument-abfragen.js';
import type { RequestContext } from './context.js';
import { validationFault } from './faults.js';
import { type Letterhead, renderDeliveryNote, renderReturnSlip } from './pdf.js';
import type { CustomerState, DocumentSource } from './state.js';

/**
 * dokumentAbfragen (docs/msv3.md "Documents"): the PDF behind a `Lieferavis/DokumentId` or a
 * `RetourenAnteil/@DokumentID` of this customer. A missing or unknown id is a ValidationFault (MSV3
 * leaves this open; other customers' ids are unknown too). Each PDF is rendered once and then kept.
 */
export async function fetchDocument(
  ctx: RequestContext,
  request: DocumentRequest,
): Promise<DocumentResponse> {
  const id = request.documentId;
  if (id === undefined) {
    throw validationFault('dokumentAbfragenType/@DokumentId is missing', 'Bitte eine Dokument-ID angeben.');
  }
  const { customer } = ctx;
  const source = customer.documents.get(id);
  if (source === undefined) throw validationFault(`unknown DokumentId ${id}`, 'Dokument unbekannt.');
  let data = customer.renderedDocuments.get(id);
  if (data === undefined) {
    data = await render(ctx, customer, source);
    customer.renderedDocuments.set(id, data);
  }
  return { document: { documentId: id, data } };
}

function render(ctx: RequestContext, customer: CustomerState, source: DocumentSource): Promise<Buffer> {
  const head = (createdAt: number): Letterhead => ({
    wholesalerName: ctx.env.wholesalerName,
    tenant: ctx.tenant.name,
    customerId: customer.customerId,
    createdAt: new Date(createdAt),
  });
  if (source.kind === 'delivery-note') {
    const stored = customer.notices.get(source.deliveryNoteNumber)!;
    return renderDeliveryNote(stored.notice, head(stored.createdAt));
  }
  const stored = customer.announcements.get(source.announcementId)!;
  const answer = stored.response.answer!;
  const slip = {
    announcementId: answer.id,
    supportId: answer.supportId,
    portion: answer.portions[source.portion]!,
  };
  return renderReturnSlip(slip, head(stored.announcedAt));
}
