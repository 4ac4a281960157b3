import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import { maxQuantity, type Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import { checkNoText, runOf } from './extra-fields.js';
import {
  checkAttributes,
  expectAt,
  expectEnd,
  pznToWireText,
  readInt,
  readPzn,
  readString,
  requestParts,
  responseReturn,
  rethrowWithin,
  uuidAttribute,
} from './fields.js';
import { defineOperation } from './operation.js';

/**
 * ruecknahmeangebotAnfordern (docs/msv3.md "Take-back offers"): ask the wholesaler to take articles back. The
 * answer is only a reference id to quote later; MSV3 has no price, credit or per-article verdict here.
 */

const MAX_TAKE_BACK_ARTICLES = 1000;

interface TakeBackArticle {
  pzn: Pzn;
  /** `Menge`, 1..9999 (v1) / 1..99999 (v2). */
  quantity: number;
}

export interface TakeBackOfferRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /** `ruecknahmeangebot/@Id`, a fresh uuid. */
  id: string;
  /** `Artikel`, 1..1000, no duplicate PZN (the duplicate rule is not checked by the codec). */
  articles: TakeBackArticle[];
}

export interface TakeBackOfferResponse {
  /** `return/@Id` (= the request's Id). */
  id: string;
  /** `ReferenzId`, 1–80 characters: the wholesaler's receipt to quote by phone, mail or fax. */
  referenceId: string;
}

const NONE: readonly string[] = [];
const ID_ONLY = ['Id'];

function encodeRequest(version: Msv3Version, request: TakeBackOfferRequest): string {
  let s = `<m:ruecknahmeangebotAnfordern><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>`;
  s += `<ruecknahmeangebot Id="${escapeAttr(request.id)}">`;
  for (const a of request.articles) {
    s += `<m:Artikel><m:Pzn>${pznToWireText(a.pzn)}</m:Pzn><m:Menge>${a.quantity}</m:Menge></m:Artikel>`;
  }
  return wrapEnvelope(version, `${s}</ruecknahmeangebot></m:ruecknahmeangebotAnfordern>`);
}

function readArticle(el: XmlElement, ns: string, max: number): TakeBackArticle {
  checkAttributes(el, NONE);
  checkNoText(el);
  const c = el.children;
  const pzn = readPzn(expectAt(c, 0, ns, 'Pzn'), 'Pzn');
  const quantity = readInt(expectAt(c, 1, ns, 'Menge'), 'Menge', 1, max);
  expectEnd(c, 2);
  return { pzn, quantity };
}

function readRequest(wrapper: XmlElement, version: Msv3Version): TakeBackOfferRequest {
  const ns = wrapper.ns;
  const { clientSoftwareId, payload } = requestParts(wrapper, 'ruecknahmeangebot');
  try {
    checkAttributes(payload, ID_ONLY);
    checkNoText(payload);
    const id = uuidAttribute(payload, 'Id');
    const c = payload.children;
    const count = runOf(c, 0, ns, 'Artikel', 1, MAX_TAKE_BACK_ARTICLES);
    expectEnd(c, count);
    const max = maxQuantity(version);
    const articles: TakeBackArticle[] = [];
    for (let k = 0; k < count; k++) {
      try {
        articles.push(readArticle(c[k]!, ns, max));
      } catch (error) {
        rethrowWithin(`Artikel[${k + 1}]`, error);
      }
    }
    return { clientSoftwareId, id, articles };
  } catch (error) {
    return rethrowWithin('ruecknahmeangebot', error);
  }
}

function encodeResponse(version: Msv3Version, response: TakeBackOfferResponse): string {
  return wrapEnvelope(
    version,
    `<m:ruecknahmeangebotAnfordernResponse><return Id="${escapeAttr(response.id)}">` +
      `<m:ReferenzId>${escapeText(response.referenceId)}</m:ReferenzId></return></m:ruecknahmeangebotAnfordernResponse>`,
  );
}

function readResponse(wrapper: XmlElement): TakeBackOfferResponse {
  const ret = responseReturn(wrapper);
  try {
    checkAttributes(ret, ID_ONLY);
    checkNoText(ret);
    const id = uuidAttribute(ret, 'Id');
    const c = ret.children;
    const referenceId = readString(expectAt(c, 0, wrapper.ns, 'ReferenzId'), 'ReferenzId', 1, 80);
    expectEnd(c, 1);
    return { id, referenceId };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

export const ruecknahmeangebotAnfordern = defineOperation({
  name: 'ruecknahmeangebotAnfordern',
  service: 'ruecknahmeangebotAnfordern',
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
});
