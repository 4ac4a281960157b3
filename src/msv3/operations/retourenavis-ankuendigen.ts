import { type Msv3Version, wrapEnvelope } from '../envelope.js';
import type { XmlElement } from '../xml/parse.js';
import {
  checkedPattern,
  checkNoText,
  dateTimeAttribute,
  isLieferscheinnummer,
  optionalAttr,
  optionalAttribute,
  readEach,
  readOptionalRequest,
  runOf,
  stringAttribute,
  writeOptionalClientSoftwareId,
} from './extra-fields.js';
import { attribute, checkAttributes, enumAttribute, expectEnd, uuidAttribute } from './fields.js';
import {
  defineReturnOperation,
  HEADER_ATTRIBUTES,
  RETOUREN_ANTEIL_TYPEN,
  type RetourenAnteilTyp,
  type ReturnHeader,
  type ReturnPosition,
  readHeader,
  readPosition,
  readPositions,
  writeHeader,
  writePosition,
} from './retourenavis.js';

/**
 * retourenavisAnkuendigen (docs/msv3.md "Return announcements", v2 only): the binding return announcement.
 * The answer splits the positions into portions (`RetourenAnteil`), each with one verdict and, once anything
 * is accepted, the wholesaler's reference, pick-up time or tour, and possibly a return slip to print.
 */

const MAX_RETURN_PORTIONS = 15;

/** `retourenavisAnkuendigungType`: the positions plus optional company details (0–100 characters each). */
export interface ReturnAnnouncement extends ReturnHeader {
  /** `Position`, 1..999. */
  positions: ReturnPosition[];
  /** `@Amtsgericht`: the registry court. */
  registryCourt?: string;
  /** `@Handelsregisternummer`. */
  commercialRegisterNumber?: string;
  /** `@UmsatzsteuerID`. */
  vatId?: string;
  /** `@Steuernummer`. */
  taxNumber?: string;
  /** `@Bankname`. */
  bankName?: string;
  /** `@BIC`. */
  bic?: string;
  /** `@IBAN`. */
  iban?: string;
}

export interface ReturnAnnouncementRequest {
  /** `clientSoftwareKennung`, optional here. */
  clientSoftwareId?: string;
  /** `retourenavisAnkuendigungType`, optional in the schema. */
  announcement?: ReturnAnnouncement;
}

/** `RetourenAnteil`: positions that share one verdict and one pick-up. */
export interface ReturnPortion {
  /** `@RetourenAnteilTyp`. */
  verdict: RetourenAnteilTyp;
  /** `@GHReferenzID`, 1–30 of `a-z A-Z 0-9 # + * / - _`; printed as DataMatrix; set once accepted. */
  wholesalerReference?: string;
  /** `@DokumentID`: a return slip to fetch with dokumentAbfragen and print. */
  documentId?: string;
  /** `@Abholzeitpunkt`, xs:dateTime as written. */
  pickupTime?: string;
  /** `@Tour`, 1–80 characters: the pick-up tour. */
  tour?: string;
  /** `Position`, 1..999. */
  positions: ReturnPosition[];
}

/** `return` (RetourenavisAnkuendigungAntwort). */
interface ReturnAnnouncementAnswer extends ReturnHeader {
  /** `RetourenAnteil`, 1..15. */
  portions: ReturnPortion[];
}

export interface ReturnAnnouncementResponse {
  /** `return`, optional in the schema. */
  answer?: ReturnAnnouncementAnswer;
}

const NAME = 'retourenavisAnkuendigen';
const COMPANY_ATTRIBUTES = [
  ['Amtsgericht', 'registryCourt'],
  ['Handelsregisternummer', 'commercialRegisterNumber'],
  ['UmsatzsteuerID', 'vatId'],
  ['Steuernummer', 'taxNumber'],
  ['Bankname', 'bankName'],
  ['BIC', 'bic'],
  ['IBAN', 'iban'],
] as const;
const ANNOUNCEMENT_ATTRIBUTES = [...HEADER_ATTRIBUTES, ...COMPANY_ATTRIBUTES.map(([name]) => name)];
const PORTION_ATTRIBUTES = ['GHReferenzID', 'DokumentID', 'Abholzeitpunkt', 'Tour', 'RetourenAnteilTyp'];
const companyText = stringAttribute(0, 100);
const tour = stringAttribute(1, 80);

function encodeRequest(version: Msv3Version, request: ReturnAnnouncementRequest): string {
  let s = `<m:${NAME}>${writeOptionalClientSoftwareId(request.clientSoftwareId)}`;
  const a = request.announcement;
  if (a !== undefined) {
    s += `<retourenavisAnkuendigungType ${writeHeader(a)}`;
    for (const [name, field] of COMPANY_ATTRIBUTES) s += optionalAttr(name, a[field]);
    s += '>';
    for (const p of a.positions) s += writePosition(p);
    s += '</retourenavisAnkuendigungType>';
  }
  return wrapEnvelope(version, `${s}</m:${NAME}>`);
}

function readAnnouncement(el: XmlElement, ns: string): ReturnAnnouncement {
  const announcement: ReturnAnnouncement = { ...readHeader(el, ANNOUNCEMENT_ATTRIBUTES), positions: [] };
  for (const [name, field] of COMPANY_ATTRIBUTES)
    announcement[field] = optionalAttribute(el, name, companyText);
  announcement.positions = readPositions(el, ns, readPosition);
  return announcement;
}

function readRequest(wrapper: XmlElement): ReturnAnnouncementRequest {
  return readOptionalRequest(wrapper, 'retourenavisAnkuendigungType', 'announcement', readAnnouncement);
}

function writePortion(p: ReturnPortion): string {
  let s =
    `<m:RetourenAnteil${optionalAttr('GHReferenzID', p.wholesalerReference)}${optionalAttr('DokumentID', p.documentId)}` +
    `${optionalAttr('Abholzeitpunkt', p.pickupTime)}${optionalAttr('Tour', p.tour)} RetourenAnteilTyp="${p.verdict}">`;
  for (const position of p.positions) s += writePosition(position);
  return `${s}</m:RetourenAnteil>`;
}

function writePortions(a: ReturnAnnouncementAnswer): string {
  let s = '';
  for (const p of a.portions) s += writePortion(p);
  return s;
}

function wholesalerReference(el: XmlElement, name: string): string {
  return checkedPattern(attribute(el, name), `@${name}`, isLieferscheinnummer, 'a wholesaler reference');
}

function readPortion(el: XmlElement, ns: string): ReturnPortion {
  checkAttributes(el, PORTION_ATTRIBUTES);
  checkNoText(el);
  return {
    verdict: enumAttribute(el, 'RetourenAnteilTyp', RETOUREN_ANTEIL_TYPEN),
    wholesalerReference: optionalAttribute(el, 'GHReferenzID', wholesalerReference),
    documentId: optionalAttribute(el, 'DokumentID', uuidAttribute),
    pickupTime: optionalAttribute(el, 'Abholzeitpunkt', dateTimeAttribute),
    tour: optionalAttribute(el, 'Tour', tour),
    positions: readPositions(el, ns, readPosition),
  };
}

function readAnswer(ret: XmlElement, ns: string): ReturnAnnouncementAnswer {
  const header = readHeader(ret);
  const c = ret.children;
  const count = runOf(c, 0, ns, 'RetourenAnteil', 1, MAX_RETURN_PORTIONS);
  expectEnd(c, count);
  return { ...header, portions: readEach(c, 0, count, 'RetourenAnteil', (p) => readPortion(p, ns)) };
}

export const retourenavisAnkuendigen = defineReturnOperation({
  name: NAME,
  encodeRequest,
  readRequest,
  writeAnswer: writePortions,
  readAnswer,
});
