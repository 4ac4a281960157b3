import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  checkAttributes,
  checkCount,
  countRun,
  expectEnd,
  isAt,
  pznToWireText,
  readPzn,
  requestParts,
  responseReturn,
  rethrowAtIndex,
  rethrowWithin,
  uuidAttribute,
} from './fields.js';
import { defineOperation } from './operation.js';

/** verfuegbarkeitAnfragenBulk (docs/msv3.md "Bulk availability"): yes/no availability for many PZNs. */

export const MAX_BULK_PZNS = 10_000;

/** Either an explicit list (`m:Pzn` ×1..10000, no duplicates) or one 100 000-PZN block (`m:PznBlock`). */
type BulkAvailabilityQuery = { kind: 'list'; pzns: Pzn[] } | { kind: 'block'; firstPzn: Pzn };

export interface BulkAvailabilityRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /** `verfuegbarkeitsanfrageBulk/@Id`. */
  id: string;
  /** The block start must end in 00000 (not checked by the codec). */
  query: BulkAvailabilityQuery;
}

export interface BulkAvailabilityResponse {
  /** `return/@Id`. */
  id: string;
  /** Only the available PZNs (0..10000); unavailable = requested minus these. */
  availablePzns: Pzn[];
}

const ID_ONLY = ['Id'];

function encodeRequest(version: Msv3Version, request: BulkAvailabilityRequest): string {
  let s = `<m:verfuegbarkeitAnfragenBulk><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>`;
  s += `<verfuegbarkeitsanfrageBulk Id="${escapeAttr(request.id)}">`;
  const q = request.query;
  if (q.kind === 'block') s += `<m:PznBlock>${pznToWireText(q.firstPzn)}</m:PznBlock>`;
  else for (const pzn of q.pzns) s += `<m:Pzn>${pznToWireText(pzn)}</m:Pzn>`;
  return wrapEnvelope(version, `${s}</verfuegbarkeitsanfrageBulk></m:verfuegbarkeitAnfragenBulk>`);
}

function readPznRun(c: XmlElement[], ns: string, min: number): Pzn[] {
  const count = countRun(c, 0, ns, 'Pzn');
  checkCount('Pzn', count, min, MAX_BULK_PZNS);
  expectEnd(c, count);
  const pzns: Pzn[] = [];
  for (let k = 0; k < count; k++) {
    try {
      pzns.push(readPzn(c[k]!, 'Pzn'));
    } catch (error) {
      rethrowAtIndex('Pzn', k, error);
    }
  }
  return pzns;
}

function readRequest(wrapper: XmlElement): BulkAvailabilityRequest {
  const ns = wrapper.ns;
  const { clientSoftwareId, payload } = requestParts(wrapper, 'verfuegbarkeitsanfrageBulk');
  try {
    checkAttributes(payload, ID_ONLY);
    const id = uuidAttribute(payload, 'Id');
    const c = payload.children;
    if (isAt(c, 0, ns, 'PznBlock')) {
      expectEnd(c, 1);
      return { clientSoftwareId, id, query: { kind: 'block', firstPzn: readPzn(c[0]!, 'PznBlock') } };
    }
    return { clientSoftwareId, id, query: { kind: 'list', pzns: readPznRun(c, ns, 1) } };
  } catch (error) {
    return rethrowWithin('verfuegbarkeitsanfrageBulk', error);
  }
}

function encodeResponse(version: Msv3Version, response: BulkAvailabilityResponse): string {
  let s = `<m:verfuegbarkeitAnfragenBulkResponse><return Id="${escapeAttr(response.id)}">`;
  for (const pzn of response.availablePzns) s += `<m:Pzn>${pznToWireText(pzn)}</m:Pzn>`;
  return wrapEnvelope(version, `${s}</return></m:verfuegbarkeitAnfragenBulkResponse>`);
}

function readResponse(wrapper: XmlElement): BulkAvailabilityResponse {
  const ret = responseReturn(wrapper);
  try {
    checkAttributes(ret, ID_ONLY);
    const id = uuidAttribute(ret, 'Id');
    return { id, availablePzns: readPznRun(ret.children, wrapper.ns, 0) };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

export const verfuegbarkeitAnfragenBulk = defineOperation({
  name: 'verfuegbarkeitAnfragenBulk',
  service: 'verfuegbarkeitAnfragenBulk',
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
});
