import type { Kysely } from 'kysely';
import { ApiError, isApiError } from '../core/errors.js';
import { dokumentAbfragen } from '../msv3/operations/dokument-abfragen.js';
import { findSeenNoticeByDocument } from '../store/delivery-notices.js';
import type { Tables } from '../store/schema.js';
import { callWholesaler, type UpstreamDeps } from '../wholesalers/call.js';
import { type CustomerRequest, customerScopeOf } from './deliveries/notices.js';

/**
 * `GET /v1/documents/{id}` → `dokumentAbfragen` (v2 only, docs/msv3.md "Documents"): a PDF delivery
 * note or return slip by the id from a delivery notice (`document_id`) or a return portion.
 */

export interface DocumentDownload {
  documentId: string;
  data: Buffer;
  /** For Content-Disposition: `delivery-note-<tracking number>.pdf` when this customer has seen the notice. */
  filename: string;
}

export async function fetchDocument(
  deps: { upstream: UpstreamDeps; db: Kysely<Tables> },
  request: CustomerRequest,
  documentId: string,
): Promise<DocumentDownload> {
  const id = documentId.toLowerCase();
  const wholesaler = await deps.upstream.registry.resolve(request.tenant, request.wholesaler);
  let document: { data: Buffer } | undefined;
  try {
    const { value } = await callWholesaler(deps.upstream, wholesaler, dokumentAbfragen, request.credentials, {
      clientSoftwareId: deps.upstream.clientSoftwareId,
      documentId: id,
    });
    document = value.document;
  } catch (error) {
    // The id is a well-formed uuid (checked by the route), so a ValidationFault means "no such document".
    if (isApiError(error) && error.options.upstream?.kind === 'ValidationFault')
      throw notFound(request, id, error);
    throw error;
  }
  if (document === undefined) throw notFound(request, id);
  // Only read after the wholesaler accepted the credentials and handed out the document.
  const notice = await findSeenNoticeByDocument(deps.db, customerScopeOf(request), id);
  const filename =
    notice === undefined
      ? `document-${id}.pdf`
      : `delivery-note-${notice.notice.deliveryNoteNumber.replace(/[^A-Za-z0-9_-]/g, '_')}.pdf`;
  return { documentId: id, data: document.data, filename };
}

function notFound(request: CustomerRequest, id: string, cause?: ApiError): ApiError {
  return new ApiError(
    'document_not_found',
    `${request.wholesaler} has no document ${id} for this customer.`,
    {
      wholesaler: request.wholesaler,
      ...(cause?.options.upstream === undefined ? {} : { upstream: cause.options.upstream }),
    },
  );
}
