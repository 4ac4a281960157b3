import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export: under NodeNext its namespace is what TypeScript sees.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Checks answers and webhook payloads against the gateway's own OpenAPI 3.1 document with Ajv (JSON
 * Schema 2020-12, the document's dialect): what a contract proxy cannot judge, because it answers a
 * malformed request itself instead of passing it on, or does not read the document's `webhooks`.
 * Each check gives a list of problems, empty when the answer is what the document says.
 */

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
type Json = any;

const DOCUMENT_ID = 'openapi.json';

interface Answer {
  method: string;
  /** The request's path and query, e.g. `/v1/events?limit=3`. */
  path: string;
  status: number;
  headers: Headers;
  body: string;
}

export interface OpenApiChecker {
  answer(answer: Answer): string[];
  /** A webhook delivery's (or the events feed's) body, against the document's `webhooks` entry of its type. */
  webhook(body: unknown): string[];
}

export function openApiChecker(document: Json): OpenApiChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const validate = (pointer: string[], value: unknown): string[] => {
    const fragment = pointer.map((part) =>
      encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1')),
    );
    const check = ajv.getSchema(`${DOCUMENT_ID}#/${fragment.join('/')}`);
    if (check === undefined) return [`no schema at ${pointer.join(' ')}`];
    return check(value)
      ? []
      : (check.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? e.keyword}`);
  };

  const templates = Object.keys(document.paths as Record<string, unknown>).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    parameters: (template.match(/\{/g) ?? []).length,
  }));
  const templateOf = (path: string) =>
    templates.filter((t) => t.pattern.test(path)).sort((a, b) => a.parameters - b.parameters)[0]?.template;

  return {
    answer({ method, path, status, headers, body }) {
      const template = templateOf(path.split('?')[0]!);
      const at = `${method} ${path} → ${status}`;
      if (template === undefined) return [`${at}: no such path in the document`];
      const operation = document.paths[template][method.toLowerCase()];
      if (operation === undefined) return [`${at}: no such operation in the document`];
      const key = operation.responses[String(status)] === undefined ? 'default' : String(status);
      const response = operation.responses[key];
      if (response === undefined) return [`${at}: status not in the document`];
      const problems: string[] = [];
      for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
        const value = headers.get(name);
        if (value === null) {
          if (header.required === true) problems.push(`${at}: no ${name} header`);
          continue;
        }
        const number = header.schema?.type === 'integer' ? Number(value) : undefined;
        const problem = validate(
          ['paths', template, method.toLowerCase(), 'responses', key, 'headers', name, 'schema'],
          number === undefined || Number.isNaN(number) || !/^\d+$/.test(value) ? value : number,
        );
        for (const p of problem) problems.push(`${at}: header ${name}: ${p}`);
      }
      const type = headers.get('content-type')?.split(';')[0]?.trim() ?? '';
      const media = response.content?.[type];
      if (response.content !== undefined && media === undefined)
        problems.push(`${at}: content type ${type || '(none)'} not in the document`);
      if (type === 'application/json' && media !== undefined) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          return [...problems, `${at}: the body is not JSON`];
        }
        const pointer = [
          'paths',
          template,
          method.toLowerCase(),
          'responses',
          key,
          'content',
          type,
          'schema',
        ];
        for (const p of validate(pointer, parsed)) problems.push(`${at}: ${p}`);
        // An error answer names a kind the document lists for that status.
        const kinds = Object.keys(media.examples ?? {});
        const kind = (parsed as { error?: unknown }).error;
        if (status >= 400 && key !== 'default' && kinds.length > 0 && !kinds.includes(String(kind)))
          problems.push(`${at}: error kind ${String(kind)} is not among ${kinds.join(', ')}`);
      }
      return problems;
    },
    webhook(body) {
      const type = (body as { type?: unknown }).type;
      if (typeof type !== 'string' || document.webhooks?.[type] === undefined)
        return [`webhook: no payload of type ${String(type)} in the document`];
      return validate(
        ['webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema'],
        body,
      ).map((p) => `webhook ${type}: ${p}`);
    },
  };
}
