import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import { escapeAttr, escapeText } from '../xml/write.js';
import {
  checkedPattern,
  checkNoContent,
  checkNoText,
  dateAttribute,
  isKundenKennung,
  readEach,
  readZeit,
  runOf,
} from './extra-fields.js';
import {
  attribute,
  booleanAttribute,
  checkAttributes,
  expectAt,
  expectEnd,
  intAttribute,
  isAt,
  readBoolean,
  readClientSoftwareId,
  readEnum,
  responseReturn,
  rethrowWithin,
} from './fields.js';
import { defineOperation } from './operation.js';

/**
 * vertragsdatenAbfragen (docs/msv3.md "Contract data"): the pharmacy's contract terms. v1 carries `@GueltigAb` and
 * optional main order times; v2 adds `manuelleAbfrage` / `@AutomatischerAbruf`, makes the main order time
 * mandatory, caps windows at 999 and adds special days (`Sondertag`).
 */

export const VERTRAGSDATEN_TAGE = ['Mo', 'Di', 'Mi', 'Do', 'Fr', 'Sa', 'So'] as const;
/** VertragsdatenTag: Monday (`Mo`) … Sunday (`So`). */
export type VertragsdatenTag = (typeof VERTRAGSDATEN_TAGE)[number];

const MAX_ORDER_WINDOWS_V2 = 999;
const MAX_SPECIAL_DAYS = 99;
const MAX_SPECIAL_DAY_WINDOWS = 99;
const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

export interface ContractDataRequest {
  /** `clientSoftwareKennung`, 1–80 characters. */
  clientSoftwareId: string;
  /**
   * v2 `manuelleAbfrage`, required there: true when a user asked, false for the automatic daily fetch.
   * Not sent in v1 (undefined when decoded from v1).
   */
  manualQuery?: boolean;
}

/** `Hauptbestellzeit`: the recommended time for the main order of a window. */
interface MainOrderTime {
  day: VertragsdatenTag;
  /** `Zeitpunkt`, `hh:mm:00`. */
  time: string;
}

/** `Bestellfenster`: an order window of the regular week. */
export interface OrderWindow {
  /** `Tag`. */
  day: VertragsdatenTag;
  /** `Endezeit`, `hh:mm:00`: the order cut-off. */
  cutoff: string;
  /** Mandatory in v2, optional in v1. */
  mainOrderTime?: MainOrderTime;
}

/** `Sondertag/Bestellfenster`: a window on a special day. */
interface SpecialDayWindow {
  /** `Endezeit`, `hh:mm:00`. */
  cutoff: string;
  /** `Hauptbestellzeit`, `hh:mm:00` (a plain time here, not a day and time). */
  mainOrderTime: string;
}

/** v2 `Sondertag`: the windows of one calendar date; none means no order cut-off that day. */
export interface SpecialDay {
  /** `@Datum`, xs:date as written. */
  date: string;
  /** 0..99. */
  windows: SpecialDayWindow[];
}

interface OrderTypeTerms {
  /** `@MaxAnzahlFreieAuftragskennungen` (xs:int). */
  maxFreeOrderLabels: number;
}

interface AgreedOrderTypeTerms extends OrderTypeTerms {
  /** `@Vereinbart`. */
  agreed: boolean;
}

export interface ContractDataResponse {
  /** `@KundenKennung`: the MSV3 customer id (= the Basic-auth user name). */
  customerId: string;
  /** v1 `@GueltigAb` (xs:date), required there; undefined in v2. */
  validFrom?: string;
  /** v2 `@AutomatischerAbruf`, required there; undefined in v1. */
  automaticRetrieval?: boolean;
  /** `Bestellfenster`: v1 1..∞, v2 1..999. */
  orderWindows: OrderWindow[];
  /** `AuftragsartNormal` … `AuftragsartVersand`; NORMAL is always agreed. */
  orderTypes: {
    NORMAL: OrderTypeTerms;
    STAPEL: AgreedOrderTypeTerms;
    SONDER: AgreedOrderTypeTerms;
    VERSAND: AgreedOrderTypeTerms & {
      /** `@NurKompletteGebinde`. */
      completeContainersOnly: boolean;
    };
  };
  /** `Substitutionsvereinbarung`. */
  substitutionAgreed: boolean;
  /** `VerfuegbarkeitEinzelnSpezifischeRueckmeldungVereinbart`. */
  specificAvailabilityAgreed: boolean;
  /** `VerfuegbarkeitBulkVereinbart`. */
  bulkAvailabilityAgreed: boolean;
  /** `RuecknahmeangebotVereinbart`. */
  takeBackOffersAgreed: boolean;
  /** v2 `Sondertag`, 0..99; always empty for v1 (the v1 encoder ignores it). */
  specialDays: SpecialDay[];
}

const NONE: readonly string[] = [];
const RETURN_ATTRIBUTES: Record<Msv3Version, readonly string[]> = {
  1: ['GueltigAb', 'KundenKennung'],
  2: ['AutomatischerAbruf', 'KundenKennung'],
};
const NORMAL_ATTRIBUTES = ['MaxAnzahlFreieAuftragskennungen'];
const AGREED_ATTRIBUTES = ['MaxAnzahlFreieAuftragskennungen', 'Vereinbart'];
const VERSAND_ATTRIBUTES = ['MaxAnzahlFreieAuftragskennungen', 'Vereinbart', 'NurKompletteGebinde'];
const FLAGS = [
  ['Substitutionsvereinbarung', 'substitutionAgreed'],
  ['VerfuegbarkeitEinzelnSpezifischeRueckmeldungVereinbart', 'specificAvailabilityAgreed'],
  ['VerfuegbarkeitBulkVereinbart', 'bulkAvailabilityAgreed'],
  ['RuecknahmeangebotVereinbart', 'takeBackOffersAgreed'],
] as const;

function missing(field: string, version: Msv3Version): never {
  throw new TypeError(`vertragsdatenAbfragen v${version} requires ${field}`);
}

/** @throws TypeError when a field the version requires is missing (v2 `manualQuery`). */
function encodeRequest(version: Msv3Version, request: ContractDataRequest): string {
  let s = `<m:vertragsdatenAbfragen><clientSoftwareKennung>${escapeText(request.clientSoftwareId)}</clientSoftwareKennung>`;
  if (version === 2) {
    const manual = request.manualQuery ?? missing('manualQuery', version);
    s += `<manuelleAbfrage>${manual}</manuelleAbfrage>`;
  }
  return wrapEnvelope(version, `${s}</m:vertragsdatenAbfragen>`);
}

function readRequest(wrapper: XmlElement, version: Msv3Version): ContractDataRequest {
  checkAttributes(wrapper, NONE);
  const c = wrapper.children;
  const clientSoftwareId = readClientSoftwareId(c);
  if (version === 1) {
    expectEnd(c, 1);
    return { clientSoftwareId };
  }
  const manualQuery = readBoolean(expectAt(c, 1, '', 'manuelleAbfrage'), 'manuelleAbfrage');
  expectEnd(c, 2);
  return { clientSoftwareId, manualQuery };
}

function writeOrderWindow(w: OrderWindow, version: Msv3Version): string {
  let s = `<m:Bestellfenster><m:Tag>${w.day}</m:Tag><m:Endezeit>${w.cutoff}</m:Endezeit>`;
  const main =
    w.mainOrderTime ?? (version === 2 ? missing('mainOrderTime in every order window', version) : undefined);
  if (main !== undefined) {
    s += `<m:Hauptbestellzeit><m:Tag>${main.day}</m:Tag><m:Zeitpunkt>${main.time}</m:Zeitpunkt></m:Hauptbestellzeit>`;
  }
  return `${s}</m:Bestellfenster>`;
}

function writeSpecialDay(d: SpecialDay): string {
  if (d.windows.length === 0) return `<m:Sondertag Datum="${escapeAttr(d.date)}"/>`;
  let s = `<m:Sondertag Datum="${escapeAttr(d.date)}">`;
  for (const w of d.windows) {
    s += `<m:Bestellfenster><m:Endezeit>${w.cutoff}</m:Endezeit><m:Hauptbestellzeit>${w.mainOrderTime}</m:Hauptbestellzeit></m:Bestellfenster>`;
  }
  return `${s}</m:Sondertag>`;
}

/** @throws TypeError when v1 lacks `validFrom`, or v2 lacks `automaticRetrieval` or a `mainOrderTime`. */
function encodeResponse(version: Msv3Version, r: ContractDataResponse): string {
  const head =
    version === 1
      ? `GueltigAb="${escapeAttr(r.validFrom ?? missing('validFrom', version))}"`
      : `AutomatischerAbruf="${r.automaticRetrieval ?? missing('automaticRetrieval', version)}"`;
  let s = `<m:vertragsdatenAbfragenResponse><return ${head} KundenKennung="${escapeAttr(r.customerId)}">`;
  for (const w of r.orderWindows) s += writeOrderWindow(w, version);
  const t = r.orderTypes;
  s += `<m:AuftragsartNormal MaxAnzahlFreieAuftragskennungen="${t.NORMAL.maxFreeOrderLabels}"/>`;
  s += `<m:AuftragsartStapel MaxAnzahlFreieAuftragskennungen="${t.STAPEL.maxFreeOrderLabels}" Vereinbart="${t.STAPEL.agreed}"/>`;
  s += `<m:AuftragsartSonder MaxAnzahlFreieAuftragskennungen="${t.SONDER.maxFreeOrderLabels}" Vereinbart="${t.SONDER.agreed}"/>`;
  s += `<m:AuftragsartVersand MaxAnzahlFreieAuftragskennungen="${t.VERSAND.maxFreeOrderLabels}" Vereinbart="${t.VERSAND.agreed}" NurKompletteGebinde="${t.VERSAND.completeContainersOnly}"/>`;
  for (const [element, field] of FLAGS) s += `<m:${element}>${r[field]}</m:${element}>`;
  if (version === 2) for (const d of r.specialDays) s += writeSpecialDay(d);
  return wrapEnvelope(version, `${s}</return></m:vertragsdatenAbfragenResponse>`);
}

function readMainOrderTime(el: XmlElement, ns: string): MainOrderTime {
  checkAttributes(el, NONE);
  checkNoText(el);
  const c = el.children;
  const day = readEnum(expectAt(c, 0, ns, 'Tag'), 'Tag', VERTRAGSDATEN_TAGE);
  const time = readZeit(expectAt(c, 1, ns, 'Zeitpunkt'), 'Zeitpunkt');
  expectEnd(c, 2);
  return { day, time };
}

function readOrderWindow(el: XmlElement, ns: string, version: Msv3Version): OrderWindow {
  checkAttributes(el, NONE);
  checkNoText(el);
  const c = el.children;
  const day = readEnum(expectAt(c, 0, ns, 'Tag'), 'Tag', VERTRAGSDATEN_TAGE);
  const cutoff = readZeit(expectAt(c, 1, ns, 'Endezeit'), 'Endezeit');
  let mainOrderTime: MainOrderTime | undefined;
  if (version === 2 || isAt(c, 2, ns, 'Hauptbestellzeit')) {
    const main = expectAt(c, 2, ns, 'Hauptbestellzeit');
    try {
      mainOrderTime = readMainOrderTime(main, ns);
    } catch (error) {
      rethrowWithin('Hauptbestellzeit', error);
    }
  }
  expectEnd(c, mainOrderTime === undefined ? 2 : 3);
  return { day, cutoff, mainOrderTime };
}

function readSpecialDayWindow(el: XmlElement, ns: string): SpecialDayWindow {
  checkAttributes(el, NONE);
  checkNoText(el);
  const c = el.children;
  const cutoff = readZeit(expectAt(c, 0, ns, 'Endezeit'), 'Endezeit');
  const mainOrderTime = readZeit(expectAt(c, 1, ns, 'Hauptbestellzeit'), 'Hauptbestellzeit');
  expectEnd(c, 2);
  return { cutoff, mainOrderTime };
}

function readSpecialDay(el: XmlElement, ns: string): SpecialDay {
  checkAttributes(el, ['Datum']);
  checkNoText(el);
  const date = dateAttribute(el, 'Datum');
  const c = el.children;
  const count = runOf(c, 0, ns, 'Bestellfenster', 0, MAX_SPECIAL_DAY_WINDOWS);
  expectEnd(c, count);
  return { date, windows: readEach(c, 0, count, 'Bestellfenster', (w) => readSpecialDayWindow(w, ns)) };
}

/** An `Auftragsart…` element: attributes only; failures are prefixed with its name. */
function readOrderType<T>(
  el: XmlElement,
  local: string,
  allowed: readonly string[],
  read: (el: XmlElement) => T,
): T {
  try {
    checkAttributes(el, allowed);
    checkNoContent(el);
    return read(el);
  } catch (error) {
    return rethrowWithin(local, error);
  }
}

const maxFree = (el: XmlElement): number =>
  intAttribute(el, 'MaxAnzahlFreieAuftragskennungen', INT_MIN, INT_MAX);
const agreedTerms = (el: XmlElement): AgreedOrderTypeTerms => ({
  maxFreeOrderLabels: maxFree(el),
  agreed: booleanAttribute(el, 'Vereinbart'),
});

/** `ns` is the wrapper's namespace: `return` itself is unqualified, everything below it qualified. */
function readReturn(ret: XmlElement, ns: string, version: Msv3Version): ContractDataResponse {
  checkAttributes(ret, RETURN_ATTRIBUTES[version]);
  checkNoText(ret);
  const customerId = checkedPattern(
    attribute(ret, 'KundenKennung'),
    '@KundenKennung',
    isKundenKennung,
    'a customer id (([a-zA-Z0-9]+\\)?[a-zA-Z0-9]+, 1–80)',
  );
  const validFrom = version === 1 ? dateAttribute(ret, 'GueltigAb') : undefined;
  const automaticRetrieval = version === 2 ? booleanAttribute(ret, 'AutomatischerAbruf') : undefined;
  const c = ret.children;
  const maxWindows = version === 1 ? Number.POSITIVE_INFINITY : MAX_ORDER_WINDOWS_V2;
  const windowCount = runOf(c, 0, ns, 'Bestellfenster', 1, maxWindows);
  const orderWindows = readEach(c, 0, windowCount, 'Bestellfenster', (w) => readOrderWindow(w, ns, version));
  let i = windowCount;
  const orderTypes: ContractDataResponse['orderTypes'] = {
    NORMAL: readOrderType(
      expectAt(c, i++, ns, 'AuftragsartNormal'),
      'AuftragsartNormal',
      NORMAL_ATTRIBUTES,
      (el) => ({
        maxFreeOrderLabels: maxFree(el),
      }),
    ),
    STAPEL: readOrderType(
      expectAt(c, i++, ns, 'AuftragsartStapel'),
      'AuftragsartStapel',
      AGREED_ATTRIBUTES,
      agreedTerms,
    ),
    SONDER: readOrderType(
      expectAt(c, i++, ns, 'AuftragsartSonder'),
      'AuftragsartSonder',
      AGREED_ATTRIBUTES,
      agreedTerms,
    ),
    VERSAND: readOrderType(
      expectAt(c, i++, ns, 'AuftragsartVersand'),
      'AuftragsartVersand',
      VERSAND_ATTRIBUTES,
      (el) => ({
        ...agreedTerms(el),
        completeContainersOnly: booleanAttribute(el, 'NurKompletteGebinde'),
      }),
    ),
  };
  const flags = {} as Record<(typeof FLAGS)[number][1], boolean>;
  for (const [element, field] of FLAGS) flags[field] = readBoolean(expectAt(c, i++, ns, element), element);
  let specialDays: SpecialDay[] = [];
  if (version === 2) {
    const count = runOf(c, i, ns, 'Sondertag', 0, MAX_SPECIAL_DAYS);
    specialDays = readEach(c, i, count, 'Sondertag', (d) => readSpecialDay(d, ns));
    i += count;
  }
  expectEnd(c, i);
  return {
    customerId,
    validFrom,
    automaticRetrieval,
    orderWindows,
    orderTypes,
    ...flags,
    specialDays,
  };
}

function readResponse(wrapper: XmlElement, version: Msv3Version): ContractDataResponse {
  const ret = responseReturn(wrapper);
  try {
    return readReturn(ret, wrapper.ns, version);
  } catch (error) {
    return rethrowWithin('return', error);
  }
}

export const vertragsdatenAbfragen = defineOperation({
  name: 'vertragsdatenAbfragen',
  service: 'vertragsdatenAbfragen',
  encodeRequest,
  readRequest,
  encodeResponse,
  readResponse,
});
