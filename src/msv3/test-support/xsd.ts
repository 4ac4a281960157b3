import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Msv3Version } from '../envelope.js';
import { XSI_NS } from '../xml/read.js';

/**
 * Validates encoder output against the original MSV3 XSDs with `xmllint --schema` (Debian's
 * libxml2-utils). The XSD folder comes from MSV3_XSD_DIR, defaulting to ../shared/msv3/xsd beside the
 * project. When xmllint or the folder is missing, `xsdAvailable` says why and the suites skip loudly.
 */

const run = promisify(execFile);

export const XSD_DIR = resolve(
  process.env.MSV3_XSD_DIR ?? join(process.cwd(), '..', 'shared', 'msv3', 'xsd'),
);
export const SAMPLES_DIR = resolve(
  process.env.MSV3_SAMPLES_DIR ?? join(process.cwd(), '..', 'shared', 'msv3', 'samples'),
);

function findXmllint(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = join(dir, 'xmllint');
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

const XMLLINT = findXmllint();

/** `null` when validation can run, otherwise the reason it cannot. */
export const xsdUnavailableReason: string | null =
  XMLLINT === null
    ? 'xmllint not found (install libxml2-utils)'
    : !existsSync(join(XSD_DIR, 'v2', 'Msv3Service_schema1.xsd'))
      ? `MSV3 XSDs not found in ${XSD_DIR} (set MSV3_XSD_DIR)`
      : null;

if (xsdUnavailableReason !== null) {
  console.warn(`[xsd] schema validation tests are SKIPPED: ${xsdUnavailableReason}`);
}

/**
 * Cuts the Body's payload (or, for a fault, the fault bean in the Detail) out of an envelope, whatever
 * its prefixes (our encoder's `env`, node-soap's `soap`), and declares on the payload's root the
 * namespaces the Envelope and Body declare (and XSI), unless the root declares them itself, so that it
 * stands alone.
 */
function extractPayload(envelope: string): string {
  const body = /<(?:([\w.-]+):)?Body>/.exec(envelope);
  if (body === null) throw new Error('envelope without a Body start tag');
  const p = body[1] === undefined ? '' : `${body[1]}:`;
  const bodyEnd = envelope.lastIndexOf(`</${p}Body>`);
  if (bodyEnd === -1) throw new Error('envelope without a Body end tag');
  let payload = envelope.slice(body.index + body[0].length, bodyEnd);
  if (payload.startsWith(`<${p}Fault>`)) {
    const detailStart = payload.indexOf(`<${p}Detail>`);
    const detailEnd = payload.lastIndexOf(`</${p}Detail>`);
    payload = payload.slice(detailStart + `<${p}Detail>`.length, detailEnd);
  }
  const envelopeTag = /<(?:[\w.-]+:)?Envelope\b[^>]*>/.exec(envelope)?.[0] ?? '';
  const nameEnd = payload.search(/[\s/>]/);
  const rootTag = payload.slice(0, payload.indexOf('>') + 1);
  const declarations = new Map<string, string>([['xsi', XSI_NS]]);
  for (const d of envelopeTag.matchAll(/\sxmlns(?::([\w.-]+))?="([^"]*)"/g))
    declarations.set(d[1] ?? '', d[2]!);
  let added = '';
  for (const [prefix, uri] of declarations) {
    const attribute = prefix === '' ? 'xmlns' : `xmlns:${prefix}`;
    if (!new RegExp(`\\s${attribute}=`).test(rootTag)) added += ` ${attribute}="${uri}"`;
  }
  return `${payload.slice(0, nameEnd)}${added}${payload.slice(nameEnd)}`;
}

export interface XsdResult {
  valid: boolean;
  /** xmllint's messages for this document (empty when valid). */
  errors: string;
}

/** Validates many envelopes of one version with a single xmllint run; results keep the input order. */
export async function validateEnvelopes(version: Msv3Version, envelopes: string[]): Promise<XsdResult[]> {
  if (XMLLINT === null) throw new Error(xsdUnavailableReason ?? 'xmllint unavailable');
  const dir = mkdtempSync(join(tmpdir(), 'msv3-xsd-'));
  try {
    const files = envelopes.map((env, i) => {
      const file = join(dir, `doc${i}.xml`);
      writeFileSync(file, extractPayload(env));
      return file;
    });
    const schema = join(XSD_DIR, `v${version}`, 'Msv3Service_schema1.xsd');
    let stderr = '';
    try {
      ({ stderr } = await run(XMLLINT, ['--noout', '--schema', schema, ...files], {
        maxBuffer: 64 * 1024 * 1024,
      }));
    } catch (error) {
      stderr = (error as { stderr?: string }).stderr ?? String(error);
    }
    const lines = stderr.split('\n');
    return files.map((file) => {
      const mine = lines.filter((l) => l.startsWith(file));
      const valid = mine.some((l) => l === `${file} validates`);
      return { valid, errors: valid ? '' : mine.join('\n') || stderr };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
