import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import { ERRORS_TAG } from './openapi-tags.js';

/**
 * Swagger UI's layout, tuned to read as a reference: no "Explore" bar (it loads other documents, not this
 * one's), the error catalogue's section (a tag without operations, openapi-tags.ts) shown as a section
 * with its table under the heading rather than squeezed into the heading line, request durations shown.
 */
const CSS = `.swagger-ui .topbar { display: none; }
.swagger-ui .information-container .info { margin: 24px 0 8px; }
#operations-tag-${ERRORS_TAG} { flex-wrap: wrap; cursor: default; }
#operations-tag-${ERRORS_TAG} > small { flex: 1 1 100%; order: 3; padding: 8px 0 0; }
#operations-tag-${ERRORS_TAG} > small table { width: 100%; font-size: 13px; }
#operations-tag-${ERRORS_TAG} > small :is(th, td) { padding: 2px 16px 2px 0; text-align: left; }
#operations-tag-${ERRORS_TAG} > .expand-operation { display: none; }
`;

export const SWAGGER_UI_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  theme: { title: 'MSV3 Gateway API', css: [{ filename: 'gateway.css', content: CSS }] },
  uiConfig: {
    deepLinking: true,
    docExpansion: 'list',
    displayRequestDuration: true,
    filter: true,
    // The schemas appear within each operation; the long list of them below would bury the errors.
    defaultModelsExpandDepth: -1,
  },
};
