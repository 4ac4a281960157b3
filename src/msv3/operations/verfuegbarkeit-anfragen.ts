import { closePlainEnvelope, type Msv3Version, openPlainEnvelope, wrapEnvelope } from '../envelope.js';
import type { Pzn } from '../model.js';
import type { XmlElement } from '../xml/parse.js';
import {
  PlainShape,
  type PlainTags,
  patternsPerTable,
  plainPattern,
  plainProlog,
  plainTags,
  tagIndex,
  tryPlain,
} from '../xml/plain.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  type AvailabilityPart,
  itemPatterns,
  PLAIN_PART_NAMES,
  readParts,
  readPlainItem,
  readSubstitution,
  type Substitution,
  writePart,
  writeSubstitution,
} from './anteile.js';
import {
  booleanAttribute,
  checkAttributes,
  checkCount,
  countRun,
  decodingContext,
  enumAttribute,
  enumValue,
  expectAt,
  expectEnd,
  intValue,
  isAt,
  isUuid,
  pznToWireText,
  pznValue,
  readInt,
  readPzn,
  requestParts,
  responseReturn,
  rethrowWithin,
  uuidAttribute,
  type WireContext,
  wireContext,
} from './fields.js';
import { defineOperation, type OperationCodec } from './operation.js';

/** verfuegbarkeitAnfragen (docs/msv3.md "Availability"): availability of up to 50 articles. */

export type { AvailabilityPart } from './anteile.js';

export const BEDARF_WERTE = ['direkt', 'einsAusN', 'unspezifisch'] as const;
/** v2 `@Bedarf` per article. */
export type Bedarf = (typeof BEDARF_WERTE)[number];

export const ANTWORT_TYPEN = ['Spezifisch', 'Unspezifisch'] as const;
/** `@RTyp`: whether the answer is specific (contract item). */
type AntwortTyp = (typeof ANTWORT_TYPEN)[number];

const MAX_ARTICLES = 50;

interface AvailabilityRequestArticle {
  pzn: Pzn;
  /** `Menge`, 1..9999 (v1) / 1..99999 (v2). */
  quantity: number;
  /** v2 `@Bedarf` (encoded as `unspezifisch` when undefined); undefined when decoded from v1. */
  demand?: Bedarf;
}

export interface AvailabilityRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /** `verfuegbarkeitsanfrage/@Id`, a fresh uuid per request. */
  id: string;
  /**
   * v1 `@EinsAusNBedarf`: only one of the articles is really needed. When undefined, the v1 encoder
   * sends true iff every article's `demand` is `einsAusN`. Undefined when decoded from v2.
   */
  oneOfMany?: boolean;
  /** 1..50 articles, no duplicate PZN (the duplicate rule is not checked by the codec). */
  articles: AvailabilityRequestArticle[];
}

export interface AvailabilityArticle {
  /** `AnfrageMenge`. */
  requestedQuantity: number;
  /** `AnfragePzn`. */
  requestedPzn: Pzn;
  substitution?: Substitution;
  /** `Anteile`, 1..5. */
  parts: AvailabilityPart[];
}

export interface AvailabilityResponse {
  /** `return/@Id` (= the request's Id). */
  id: string;
  /** `@RTyp`. */
  responseType: AntwortTyp;
  /** 1..50 articles. */
  articles: AvailabilityArticle[];
}

const REQUEST_ATTRIBUTES: Record<Msv3Version, readonly string[]> = { 1: ['Id', 'EinsAusNBedarf'], 2: ['Id'] };
const ARTICLE_ATTRIBUTES: Record<Msv3Version, readonly string[]> = { 1: [], 2: ['Bedarf'] };
const RETURN_ATTRIBUTES = ['Id', 'RTyp'];
const NO_ATTRIBUTES: readonly string[] = [];

function encodeRequest(version: Msv3Version, request: AvailabilityRequest): string {
  let s = `<m:verfuegbarkeitAnfragen><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>`;
  s += `<verfuegbarkeitsanfrage Id="${escapeAttr(request.id)}"`;
  if (version === 1) {
    const oneOfMany = request.oneOfMany ?? request.articles.every((a) => a.demand === 'einsAusN');
    s += ` EinsAusNBedarf="${oneOfMany}">`;
    for (const a of request.articles) {
      s += `<m:Artikel><m:Pzn>${pznToWireText(a.pzn)}</m:Pzn><m:Menge>${a.quantity}</m:Menge></m:Artikel>`;
    }
  } else {
    s += '>';
    for (const a of request.articles) {
      s += `${articleStart(a.demand)}${pznToWireText(a.pzn)}</m:Pzn><m:Menge>${a.quantity}</m:Menge></m:Artikel>`;
    }
  }
  return wrapEnvelope(version, `${s}</verfuegbarkeitsanfrage></m:verfuegbarkeitAnfragen>`);
}

/**
 * A v2 article's start tag with its demand and the PZN's start tag, as one constant: the request is a
 * rope that Node flattens to send, and each piece less saves a concatenation and a step of the
 * flattening (docs/performance.md "Smaller steps").
 */
function articleStart(demand: Bedarf | undefined): string {
  switch (demand) {
    case 'direkt':
      return '<m:Artikel Bedarf="direkt"><m:Pzn>';
    case 'einsAusN':
      return '<m:Artikel Bedarf="einsAusN"><m:Pzn>';
    default:
      return '<m:Artikel Bedarf="unspezifisch"><m:Pzn>';
  }
}

function readRequestArticle(el: XmlElement, ctx: WireContext): AvailabilityRequestArticle {
  checkAttributes(el, ARTICLE_ATTRIBUTES[ctx.version]);
  const demand = ctx.version === 2 ? enumAttribute(el, 'Bedarf', BEDARF_WERTE) : undefined;
  const c = el.children;
  const pzn = readPzn(expectAt(c, 0, ctx.ns, 'Pzn'), 'Pzn');
  const quantity = readInt(expectAt(c, 1, ctx.ns, 'Menge'), 'Menge', 1, ctx.maxQuantity);
  expectEnd(c, 2);
  return { pzn, quantity, demand };
}

function readRequest(wrapper: XmlElement, version: Msv3Version): AvailabilityRequest {
  const ctx = decodingContext(wrapper, version);
  const { clientSoftwareId, payload } = requestParts(wrapper, 'verfuegbarkeitsanfrage');
  try {
    checkAttributes(payload, REQUEST_ATTRIBUTES[version]);
    const id = uuidAttribute(payload, 'Id');
    const oneOfMany = version === 1 ? booleanAttribute(payload, 'EinsAusNBedarf') : undefined;
    const c = payload.children;
    const count = countRun(c, 0, ctx.ns, 'Artikel');
    checkCount('Artikel', count, 1, MAX_ARTICLES);
    expectEnd(c, count);
    const articles: AvailabilityRequestArticle[] = [];
    for (let k = 0; k < count; k++) {
      try {
        articles.push(readRequestArticle(c[k]!, ctx));
      } catch (error) {
        rethrowWithin(`Artikel[${k + 1}]`, error);
      }
    }
    return { clientSoftwareId, id, oneOfMany, articles };
  } catch (error) {
    return rethrowWithin('verfuegbarkeitsanfrage', error);
  }
}

function encodeResponse(version: Msv3Version, response: AvailabilityResponse): string {
  const ctx = wireContext(version);
  let s = `<m:verfuegbarkeitAnfragenResponse><return Id="${escapeAttr(response.id)}" RTyp="${response.responseType}">`;
  for (const a of response.articles) {
    s += `<m:Artikel><m:AnfrageMenge>${a.requestedQuantity}</m:AnfrageMenge><m:AnfragePzn>${pznToWireText(a.requestedPzn)}</m:AnfragePzn>`;
    if (a.substitution !== undefined) s += writeSubstitution(a.substitution, ctx);
    for (const p of a.parts) s += writePart(p, ctx, false);
    s += '</m:Artikel>';
  }
  return wrapEnvelope(version, `${s}</return></m:verfuegbarkeitAnfragenResponse>`);
}

function readArticle(el: XmlElement, ctx: WireContext): AvailabilityArticle {
  if (el.attrs !== null) checkAttributes(el, NO_ATTRIBUTES);
  const ns = ctx.ns;
  const c = el.children;
  const requestedQuantity = readInt(expectAt(c, 0, ns, 'AnfrageMenge'), 'AnfrageMenge', 1, ctx.maxQuantity);
  const requestedPzn = readPzn(expectAt(c, 1, ns, 'AnfragePzn'), 'AnfragePzn');
  let i = 2;
  let substitution: Substitution | undefined;
  if (isAt(c, i, ns, 'Substitution')) substitution = readSubstitution(c[i++]!, ctx, false);
  const parts = readParts(c, i, ctx, false, 5) as AvailabilityPart[];
  expectEnd(c, i + parts.length);
  return { requestedQuantity, requestedPzn, substitution, parts };
}

function readResponse(wrapper: XmlElement, version: Msv3Version): AvailabilityResponse {
  const ctx = decodingContext(wrapper, version);
  const ret = responseReturn(wrapper);
  try {
    checkAttributes(ret, RETURN_ATTRIBUTES);
    const id = uuidAttribute(ret, 'Id');
    const responseType = enumAttribute(ret, 'RTyp', ANTWORT_TYPEN);
    const c = ret.children;
    const count = countRun(c, 0, ctx.ns, 'Artikel');
    checkCount('Artikel', count, 1, MAX_ARTICLES);
    expectEnd(c, count);
    const articles: AvailabilityArticle[] = [];
    for (let k = 0; k < count; k++) {
      try {
        articles.push(readArticle(c[k]!, ctx));
      } catch (error) {
        rethrowWithin(`Artikel[${k + 1}]`, error);
      }
    }
    return { id, responseType, articles };
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

// ---------------------------------------------------------------------------------------------------
// Fast path: the answer in its plain form (xml/plain.ts), read straight from the text with the same
// lexical readers; anything else (or anything wrong) is left to parseXml and readResponse.

const PLAIN_NAMES = [...PLAIN_PART_NAMES, 'Artikel', 'AnfrageMenge', 'AnfragePzn'];
const ARTIKEL = tagIndex(PLAIN_NAMES, 'Artikel');
const ANFRAGE_MENGE = tagIndex(PLAIN_NAMES, 'AnfrageMenge');
const ANFRAGE_PZN = tagIndex(PLAIN_NAMES, 'AnfragePzn');

/** An article's patterns (`itemPatterns`): its two leaves come before its substitution and parts. */
const articlePatterns = patternsPerTable((t) =>
  itemPatterns(
    t,
    t[ARTIKEL]!,
    [
      plainPattern.leaf(t[ANFRAGE_MENGE]!, t[ANFRAGE_MENGE + 1]!),
      plainPattern.leaf(t[ANFRAGE_PZN]!, t[ANFRAGE_PZN + 1]!),
    ],
    t[ARTIKEL + 1]!,
    false,
  ),
);

/** The next article, or undefined when no article comes next. */
function readPlainArticle(
  shape: PlainShape,
  t: PlainTags,
  ctx: WireContext,
): AvailabilityArticle | undefined {
  const item = readPlainItem(shape, t, articlePatterns(t), ctx, false, 5);
  if (item === undefined) return undefined;
  return {
    requestedQuantity: intValue(item.head[1]!, 'AnfrageMenge', 1, ctx.maxQuantity),
    requestedPzn: pznValue(item.head[2]!, 'AnfragePzn'),
    substitution: item.substitution,
    parts: item.parts as AvailabilityPart[],
  };
}

function readPlainResponse(xml: string, expectedVersion: Msv3Version | undefined): AvailabilityResponse {
  const shape = plainProlog(xml);
  const head = openPlainEnvelope(shape, 'verfuegbarkeitAnfragenResponse');
  if (expectedVersion !== undefined && head.version !== expectedVersion) PlainShape.giveUp();
  const ctx = wireContext(head.version);
  const t = plainTags('verfuegbarkeitAnfragen', PLAIN_NAMES, head.prefix, head.xsiPrefix);
  const ret = shape.startTag();
  const a = ret.attrs;
  if (ret.qname !== 'return' || ret.selfClosing || ret.declares !== null || a === null || a.length !== 4)
    PlainShape.giveUp();
  const idAt = a[0] === 'Id' ? 1 : 3;
  const typeAt = a[0] === 'RTyp' ? 1 : 3;
  if (a[idAt - 1] !== 'Id' || a[typeAt - 1] !== 'RTyp' || !isUuid(a[idAt]!)) PlainShape.giveUp();
  const id = a[idAt]!;
  const responseType = enumValue(a[typeAt]!, ANTWORT_TYPEN, '@RTyp');
  const articles: AvailabilityArticle[] = [];
  for (let article = readPlainArticle(shape, t, ctx); article !== undefined; ) {
    if (articles.length === MAX_ARTICLES) PlainShape.giveUp();
    articles.push(article);
    article = readPlainArticle(shape, t, ctx);
  }
  if (articles.length === 0) PlainShape.giveUp();
  shape.expect('</return>');
  closePlainEnvelope(shape, head);
  return { id, responseType, articles };
}

function readResponsePlain(xml: string, expectedVersion: Msv3Version | undefined) {
  return tryPlain(() => readPlainResponse(xml, expectedVersion));
}

/** The codec of `verfuegbarkeitAnfragen` (exported so that tests can run it without the fast path). */
export const verfuegbarkeitAnfragenCodec: OperationCodec<AvailabilityRequest, AvailabilityResponse> = {
  name: 'verfuegbarkeitAnfragen',
  service: 'verfuegbarkeitAnfragen',
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
  readResponsePlain,
};

export const verfuegbarkeitAnfragen = defineOperation(verfuegbarkeitAnfragenCodec);
