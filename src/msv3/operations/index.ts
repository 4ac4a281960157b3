import type { Msv3Version } from '../envelope.js';
import { bestellen } from './bestellen.js';
import { bestellstatusAbfragen } from './bestellstatus-abfragen.js';
import { dokumentAbfragen } from './dokument-abfragen.js';
import { lieferavisAbfrageHist } from './lieferavis-abfrage-hist.js';
import { lieferavisAbfrageNeu } from './lieferavis-abfrage-neu.js';
import { lieferavisBestaetigen } from './lieferavis-bestaetigen.js';
import type { AnyMsv3Operation } from './operation.js';
import { retourenavisAnfragen } from './retourenavis-anfragen.js';
import { retourenavisAnkuendigen } from './retourenavis-ankuendigen.js';
import { ruecknahmeangebotAnfordern } from './ruecknahmeangebot-anfordern.js';
import { verbindungTesten } from './verbindung-testen.js';
import { verfuegbarkeitAnfragen } from './verfuegbarkeit-anfragen.js';
import { verfuegbarkeitAnfragenBulk } from './verfuegbarkeit-anfragen-bulk.js';
import { vertragsdatenAbfragen } from './vertragsdaten-abfragen.js';

/**
 * Every MSV3 operation codec. The mock dispatches on the body's root element: its local name is the
 * operation name (`operationByRequestName`), its namespace the version. Add new operations to the list;
 * the fuzz test and the lookup pick them up from here.
 */

export { bestellen, verfuegbarkeitAnfragen };

export const operations: readonly AnyMsv3Operation[] = [
  verfuegbarkeitAnfragen,
  verfuegbarkeitAnfragenBulk,
  bestellen,
  bestellstatusAbfragen,
  verbindungTesten,
  vertragsdatenAbfragen,
  ruecknahmeangebotAnfordern,
  lieferavisAbfrageNeu,
  lieferavisBestaetigen,
  lieferavisAbfrageHist,
  retourenavisAnfragen,
  retourenavisAnkuendigen,
  dokumentAbfragen,
];

const byRequestName = new Map(operations.map((op) => [op.name, op]));

/**
 * The operation whose request wrapper has this local name (e.g. `bestellen`), optionally only if it
 * exists in `version` (v2-only operations are undefined for v1).
 */
export function operationByRequestName(
  localName: string,
  version?: Msv3Version,
): AnyMsv3Operation | undefined {
  const op = byRequestName.get(localName);
  if (op === undefined || (version !== undefined && !op.versions.includes(version))) return undefined;
  return op;
}
