import { Type } from 'typebox';
import { fetchDocument } from '../../services/documents.js';
import type { AppDeps } from '../app-deps.js';
import { customerRequest, Msv3CredentialHeaders } from '../msv3-credentials.js';
import { withCallNotes } from '../request-notes.js';
import { routeErrors, V2_CALL_ERRORS } from '../route-errors.js';
import { WholesalerQuerySchema } from '../schemas/common.js';
import { UUID_PATTERN } from '../schemas/patterns.js';
import type { GatewayApp } from '../types.js';

const DocumentParams = Type.Object(
  {
    id: Type.String({
      pattern: UUID_PATTERN,
      description:
        'Document id (uuid): `document_id` of a delivery notice (PDF delivery note) or of a return portion (return slip).',
      examples: ['5b0f1f5e-8c1a-4f0e-9d3a-1c2b3d4e5f60'],
    }),
  },
  { additionalProperties: false },
);

// Documented, not used for serialisation: the handler sends a Buffer.
const PdfResponse = {
  description: 'The PDF (at most 2 MiB), as the wholesaler stores it.',
  headers: {
    'content-length': { type: 'integer', description: 'Size in bytes.' },
    'content-disposition': {
      type: 'string',
      description:
        '`attachment; filename="delivery-note-<tracking number>.pdf"` when this pharmacy has seen the delivery notice through the gateway, otherwise `document-<id>.pdf`.',
    },
  },
  content: {
    'application/pdf': {
      schema: { type: 'string', format: 'binary' },
      example: '%PDF-1.7 … (binary)',
    },
  },
};

const DOCUMENT_ERRORS = routeErrors(['document_not_found', V2_CALL_ERRORS]);

export function registerDocumentRoutes(app: GatewayApp, deps: AppDeps): void {
  app.get(
    '/v1/documents/:id',
    {
      config: { errors: DOCUMENT_ERRORS },
      schema: {
        operationId: 'downloadDocument',
        tags: ['documents'],
        summary: 'Download a PDF delivery note or return slip (dokumentAbfragen)',
        description: `Returns \`application/pdf\` with Content-Length and a Content-Disposition filename; \`Cache-Control: private, no-store\` because it is one pharmacy's document. Example: \`GET /v1/documents/5b0f1f5e-8c1a-4f0e-9d3a-1c2b3d4e5f60?wholesaler=phoenix\`. 400 \`invalid_request\` when the id is not a uuid; 404 \`document_not_found\` when the wholesaler has no such document for this customer (MSV3 answers an unknown id with a ValidationFault; its texts are in \`upstream\`).`,
        headers: Msv3CredentialHeaders,
        params: DocumentParams,
        querystring: WholesalerQuerySchema,
        response: { 200: PdfResponse },
      },
    },
    async (request, reply) => {
      const document = await fetchDocument(
        withCallNotes(request, deps.services.documents),
        customerRequest(request, request.query.wholesaler),
        request.params.id,
      );
      return reply
        .type('application/pdf')
        .header('content-length', document.data.length)
        .header('content-disposition', `attachment; filename="${document.filename}"`)
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .send(document.data);
    },
  );
}
