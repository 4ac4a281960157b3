import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeText } from '../xml/write.js';
import { checkAttributes, expectAt, expectEnd, leafText } from './fields.js';
import { defineDeliveryNoticesQuery } from './lieferavis.js';
/** lieferavisAbfrageNeu (docs/msv3.md "Delivery notices", v2 only): the delivery notices not yet confirmed. */

export interface NewDeliveryNoticesRequest {
  /** `clientSoftwareKennung` (plain xs:string in the v2-only operations). */
  clientSoftwareId: string;
}

const NAME = 'lieferavisAbfrageNeu';
const NONE: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: NewDeliveryNoticesRequest): string {
  return wrapEnvelope(
    version,
    `<m:${NAME}><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung></m:${NAME}>`,
  );
}

function readRequest(wrapper: XmlElement): NewDeliveryNoticesRequest {
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = leafText(expectAt(c, 0, '', 'clientSoftwareKennung'), 'clientSoftwareKennung');
  expectEnd(c, 1);
  return { clientSoftwareId };
}

export const lieferavisAbfrageNeu = defineDeliveryNoticesQuery({
  name: 'lieferavisAbfrageNeu',
  encodeRequest,
  readRequest,
});
