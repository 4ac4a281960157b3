import { errorCatalogueTable } from './error-catalogue-doc.js';

/** The tag of the reference's last section: the error catalogue (linked from the top description). */
export const ERRORS_TAG = 'errors';

const ERRORS_DESCRIPTION = `Every 4xx and 5xx body is \`{ error, message, wholesaler, error_code, request_id, param? }\`.
\`error\` and \`error_code\` are stable; \`message\` is a sentence for people; \`request_id\` is the response's
\`X-Request-Id\` (send your own, \`[A-Za-z0-9._:-]\` up to 128 characters, to have it kept). Each operation
lists the errors it can answer, with examples. Over a key's rate limit: \`429 rate_limited\` with
\`Retry-After\` in seconds; every keyed response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and
\`RateLimit-Reset\` (seconds until the window resets). The same catalogue is in \`x-error-codes\`.

${errorCatalogueTable()}`;

/**
 * The reference's sections in reading order, the endpoints a pharmacy calls first. The error catalogue
 * is a tag without operations: Swagger UI renders such a tag as a section of its description alone, so
 * the catalogue sits after the endpoints instead of above them in `info.description`.
 */
export function openApiTags(): { name: string; description: string }[] {
  return [
    { name: 'wholesalers', description: 'Which wholesalers a key can reach; custom ones; a login test.' },
    { name: 'availability', description: 'Stock and delivery dates for PZNs, one request or in bulk.' },
    {
      name: 'contracts',
      description: 'What the pharmacy’s contract allows: capabilities, order types, order windows.',
    },
    { name: 'orders', description: 'Place an order (idempotent, with a dry run) and follow its status.' },
    { name: 'deliveries', description: 'Delivery notices: unconfirmed ones, confirmation, history.' },
    {
      name: 'returns',
      description: 'Ask whether items may go back, announce a return, offer articles for take-back.',
    },
    { name: 'documents', description: 'Delivery notes and return slips as PDF.' },
    { name: 'webhooks', description: 'Subscriptions that POST signed events to your URL.' },
    {
      name: 'events',
      description: 'The events feed: every event of the key’s account, as webhooks send it.',
    },
    {
      name: 'test_helpers',
      description:
        'Test keys only: make the sandbox process a night-mode order, deliver an order (with shortages) or go down and up, raising the events that go with it.',
    },
    { name: 'service', description: 'Liveness and readiness probes; no key needed.' },
    { name: ERRORS_TAG, description: ERRORS_DESCRIPTION },
  ];
}
