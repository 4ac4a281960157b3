import { readFileSync } from 'node:fs';
import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Msv3Service } from '../msv3/operations/operation.js';

/**
 * The wholesaler catalogue: which wholesaler ids exist, their MSV3 version and where their live and
 * test servers are. Operators replace the default file (config/wholesalers.json) through
 * WHOLESALER_CATALOGUE; it is read and checked once at start-up.
 */

const SERVICES: Msv3Service[] = [
  'verbindungTesten',
  'verfuegbarkeitAnfragen',
  'verfuegbarkeitAnfragenBulk',
  'bestellen',
  'bestellstatusAbfragen',
  'vertragsdatenAbfragen',
  'ruecknahmeangebotAnfordern',
  'lieferavis',
  'retourenavis',
  'dokumentAbfragen',
];

const ServerSchema = Type.Object(
  {
    baseUrl: Type.String({ pattern: '^https?://', description: 'Base URL including the version segment.' }),
    paths: Type.Optional(
      Type.Object(
        Object.fromEntries(SERVICES.map((s) => [s, Type.Optional(Type.String({ minLength: 1 }))])),
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const WHOLESALER_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,47}$';

const EntrySchema = Type.Object(
  {
    id: Type.String({ pattern: WHOLESALER_ID_PATTERN }),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    version: Type.Union([Type.Literal(1), Type.Literal(2)]),
    live: Type.Optional(ServerSchema),
    test: Type.Optional(ServerSchema),
  },
  { additionalProperties: false },
);

const CatalogueSchema = Type.Object(
  {
    $comment: Type.Optional(Type.String()),
    wholesalers: Type.Array(EntrySchema),
  },
  { additionalProperties: false },
);

export type CatalogueServer = Static<typeof ServerSchema>;
export type CatalogueEntry = Static<typeof EntrySchema>;

export const DEFAULT_CATALOGUE_FILE = new URL('../../config/wholesalers.json', import.meta.url);

const checkCatalogue = Compile(CatalogueSchema);

class CatalogueError extends Error {
  override readonly name = 'CatalogueError';
}

/** Reads and checks a catalogue file; the error names the file and the offending entry. */
export function loadCatalogue(file: string | URL = DEFAULT_CATALOGUE_FILE): CatalogueEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new CatalogueError(
      `wholesaler catalogue ${String(file)} cannot be read: ${(cause as Error).message}`,
    );
  }
  return parseCatalogue(parsed, String(file));
}

export function parseCatalogue(value: unknown, source = 'catalogue'): CatalogueEntry[] {
  const error = checkCatalogue.Errors(value)[0];
  if (error !== undefined) {
    throw new CatalogueError(`wholesaler catalogue ${source}: ${error.instancePath || '/'} ${error.message}`);
  }
  const entries = (value as Static<typeof CatalogueSchema>).wholesalers;
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.id))
      throw new CatalogueError(`wholesaler catalogue ${source}: duplicate id ${entry.id}`);
    seen.add(entry.id);
  }
  return entries;
}
