import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DeviationName } from './deviations.js';
import { encodeFault, type Msv3Version, msv3Namespace, SOAP12_NS } from './envelope.js';
import { bestellen } from './operations/bestellen.js';
import { bestellstatusAbfragen } from './operations/bestellstatus-abfragen.js';
import { dokumentAbfragen } from './operations/dokument-abfragen.js';
import { lieferavisAbfrageNeu } from './operations/lieferavis-abfrage-neu.js';
import type { AnyMsv3Operation } from './operations/operation.js';
import { retourenavisAnfragen } from './operations/retourenavis-anfragen.js';
import { retourenavisAnkuendigen } from './operations/retourenavis-ankuendigen.js';
import { ruecknahmeangebotAnfordern } from './operations/ruecknahmeangebot-anfordern.js';
import { verfuegbarkeitAnfragen } from './operations/verfuegbarkeit-anfragen.js';
import { verfuegbarkeitAnfragenBulk } from './operations/verfuegbarkeit-anfragen-bulk.js';
import { vertragsdatenAbfragen } from './operations/vertragsdaten-abfragen.js';
import {
  contractDataResponse,
  deliveryNoticesResponse,
  documentResponse,
  returnAnnouncementResponse,
  returnEnquiryResponse,
  takeBackOfferResponse,
} from './test-support/arbitraries/documents.js';
import {
  availabilityResponse,
  bulkAvailabilityResponse,
  orderResponse,
  orderStatusResponse,
} from './test-support/arbitraries/ordering.js';
import { XSI_NS } from './xml/read.js';

/**
 * The deviations a tolerant decoder accepts (docs/msv3.md "Tolerated deviations"): written into any
 * answer of every operation, they are read to exactly the value of the answer without them and named;
 * a strict decoder refuses them with words that say what is wrong and where. What is not tolerated
 * stays refused either way.
 */

const TOLERANT = { tolerate: true };

interface Subject {
  operation: AnyMsv3Operation;
  answer: (version: Msv3Version) => fc.Arbitrary<unknown>;
  versions: readonly Msv3Version[];
}

const BOTH: readonly Msv3Version[] = [1, 2];
const V2: readonly Msv3Version[] = [2];
const same =
  <T>(a: fc.Arbitrary<T>) =>
  () =>
    a;

const subjects: Subject[] = [
  { operation: verfuegbarkeitAnfragen, answer: availabilityResponse, versions: BOTH },
  { operation: verfuegbarkeitAnfragenBulk, answer: same(bulkAvailabilityResponse), versions: BOTH },
  { operation: bestellen, answer: orderResponse, versions: BOTH },
  { operation: bestellstatusAbfragen, answer: orderStatusResponse, versions: BOTH },
  { operation: vertragsdatenAbfragen, answer: contractDataResponse, versions: BOTH },
  { operation: ruecknahmeangebotAnfordern, answer: same(takeBackOfferResponse), versions: BOTH },
  { operation: lieferavisAbfrageNeu, answer: same(deliveryNoticesResponse), versions: V2 },
  { operation: retourenavisAnfragen, answer: same(returnEnquiryResponse), versions: V2 },
  { operation: retourenavisAnkuendigen, answer: same(returnAnnouncementResponse), versions: V2 },
  { operation: dokumentAbfragen, answer: same(documentResponse), versions: V2 },
];

const XSI_DECLARATION = ` xmlns:xsi="${XSI_NS}"`;

/** Ways SOAP stacks deviate, as rewrites of an answer our encoder wrote (`m` bound on the Envelope). */
const DEVIATING_FORMS: Record<string, (xml: string, version: Msv3Version) => string> = {
  // node-soap: the wrapper declares the version namespace as its default, which `return` falls into.
  'the wrapper declares a default namespace': (xml, version) =>
    xml
      .replace(/<m:(\w+Response)>/, `<$1 xmlns="${msv3Namespace(version)}">`)
      .replace(/<\/m:(\w+Response)>/, '</$1>'),
  'return with the version prefix': (xml) =>
    xml.replace('<return', '<m:return').replace('</return>', '</m:return>'),
  // node-soap again: `xsi:nil="true"` written without declaring xsi.
  'no declaration of the xsi prefix': (xml) => xml.replace(XSI_DECLARATION, ''),
  'both, as node-soap writes them': (xml, version) =>
    DEVIATING_FORMS['the wrapper declares a default namespace']!(xml, version).replace(XSI_DECLARATION, ''),
};

/** What a form changed in `original` (an answer without `return` or nils has nothing to change). */
function deviationsIn(form: string, original: string): DeviationName[] {
  const found: DeviationName[] = [];
  if (!form.startsWith('no declaration') && original.includes('<return')) found.push('qualified_return');
  if (!form.startsWith('return') && !form.startsWith('the wrapper') && original.includes('xsi:nil'))
    found.push('undeclared_xsi_prefix');
  return found;
}

/** The strict decoder's words for the first deviation it meets. */
const STRICT_WORDS: Record<DeviationName, RegExp> = {
  qualified_return:
    /^return: element in the wrong namespace: found <(m:)?return> in urn:msv3:v[12], the XSD has it unqualified/,
  undeclared_xsi_prefix: /\/@xsi:nil: undeclared namespace prefix xsi \(no xmlns:xsi in scope\)$/,
};

describe.each(subjects)('$operation.name answers with a deviation', ({ operation, answer, versions }) => {
  it('are read by a tolerant decoder to the value of the answer without it, naming the deviation', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...versions).chain((v) => fc.tuple(fc.constant(v), answer(v))),
        fc.constantFrom(...Object.keys(DEVIATING_FORMS)),
        ([version, value], form) => {
          const original = operation.encodeResponse(version, value);
          const reference = operation.decodeResponse(original, version);
          expect(reference.kind).toBe('ok');
          const xml = DEVIATING_FORMS[form]!(original, version);
          const deviations = deviationsIn(form, original);
          const tolerant = operation.decodeResponse(xml, version, TOLERANT);
          const strict = operation.decodeResponse(xml, version);
          if (deviations.length === 0) {
            expect(tolerant).toStrictEqual(reference);
            expect(strict).toStrictEqual(reference);
            return;
          }
          expect(tolerant).toStrictEqual({ ...reference, deviations });
          expect(strict.kind).toBe('invalid');
          if (strict.kind === 'invalid') expect(strict.error.message).toMatch(STRICT_WORDS[deviations[0]!]);
          // The general path decides: the fast path, where there is one, gives up on every deviation.
          expect(operation.decodeResponse(xml, version, { plain: false })).toStrictEqual(strict);
        },
      ),
      { numRuns: 60 },
    );
  });
});

/** A v2 availability answer with one part whose quantity and delivery time are nil. */
function availabilityAnswer(): string {
  return verfuegbarkeitAnfragen.encodeResponse(2, {
    id: '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b',
    responseType: 'Spezifisch',
    articles: [
      {
        requestedQuantity: 2,
        requestedPzn: '04114918',
        parts: [
          {
            quantity: null,
            type: 'Normal',
            deliveryTime: null,
            defectReason: 'KeineAngabe',
            tourDeviation: false,
          },
        ],
      },
    ],
  });
}

describe('deviations that are not tolerated', () => {
  const xml = availabilityAnswer();

  it('refuses an undeclared xsi:nil on an element the XSD does not mark nillable, naming its path', () => {
    const nilType = xml
      .replace(XSI_DECLARATION, '')
      .replace('<m:Typ>Normal</m:Typ>', '<m:Typ xsi:nil="true"/>');
    // The nils of the nillable Menge and Lieferzeitpunkt before it are tolerated; the one of Typ is not.
    for (const [options, at] of [
      [undefined, 'Menge'],
      [TOLERANT, 'Typ'],
    ] as const) {
      expect(verfuegbarkeitAnfragen.decodeResponse(nilType, 2, options)).toStrictEqual({
        kind: 'invalid',
        error: {
          message: `return/Artikel[1]/Anteile[1]/${at}/@xsi:nil: undeclared namespace prefix xsi (no xmlns:xsi in scope)`,
        },
      });
    }
  });

  it('refuses a nil whose xsi prefix is bound to another namespace, and other undeclared prefixes', () => {
    const otherXsi = xml.replace(XSI_DECLARATION, ' xmlns:xsi="urn:not-xsi"');
    const otherPrefix = xml.replace(XSI_DECLARATION, '').replace(/xsi:nil/g, 'i:nil');
    for (const options of [undefined, TOLERANT]) {
      expect(verfuegbarkeitAnfragen.decodeResponse(otherXsi, 2, options)).toMatchObject({
        kind: 'invalid',
        error: {
          message:
            'return/Artikel[1]/Anteile[1]/Menge/@xsi:nil: attribute in namespace urn:not-xsi not allowed here',
        },
      });
      expect(verfuegbarkeitAnfragen.decodeResponse(otherPrefix, 2, options)).toMatchObject({
        kind: 'invalid',
        error: {
          message:
            'return/Artikel[1]/Anteile[1]/Menge/@i:nil: undeclared namespace prefix i (no xmlns:i in scope)',
        },
      });
    }
  });

  it('refuses a SOAP 1.1 envelope, saying so', () => {
    const soap11 = xml.replace(SOAP12_NS, 'http://schemas.xmlsoap.org/soap/envelope/');
    for (const options of [undefined, TOLERANT]) {
      expect(verfuegbarkeitAnfragen.decodeResponse(soap11, 2, options)).toStrictEqual({
        kind: 'invalid',
        error: {
          message:
            "a SOAP 1.1 envelope: <env:Envelope> is in http://schemas.xmlsoap.org/soap/envelope/, but MSV3 is SOAP 1.2 only (http://www.w3.org/2003/05/soap-envelope); the wholesaler's SOAP stack must answer SOAP 1.2",
        },
      });
    }
  });

  it('names an undeclared element prefix with the path of the element', () => {
    const undeclared = xml.replace('<m:Artikel>', '<ns2:Artikel>').replace('</m:Artikel>', '</ns2:Artikel>');
    for (const options of [undefined, TOLERANT]) {
      expect(verfuegbarkeitAnfragen.decodeResponse(undeclared, 2, options)).toStrictEqual({
        kind: 'invalid',
        error: {
          message:
            'malformed XML: undeclared namespace prefix ns2: <ns2:Artikel> at env:Envelope/env:Body/m:verfuegbarkeitAnfragenResponse/return/ns2:Artikel uses it, but no xmlns:ns2 is in scope',
        },
      });
    }
  });

  it('keeps a fault whose bean is outside the MSV3 namespace Unknown, saying where the bean is', () => {
    const fault = encodeFault(2, {
      kind: 'ValidationFault',
      errorCode: 'V1',
      userText: 'Menge fehlt',
      technicalText: 'Menge missing',
    });
    // node-soap writes the bean and its fields in the SOAP namespace.
    const inSoap = fault.replace(/<(\/?)m:/g, '<$1env:');
    for (const options of [undefined, TOLERANT]) {
      expect(verfuegbarkeitAnfragen.decodeResponse(inSoap, 2, options)).toStrictEqual({
        kind: 'fault',
        fault: {
          kind: 'Unknown',
          soapCode: 'Sender',
          reason: 'Menge fehlt',
          beanProblem:
            'the fault bean env:Envelope/env:Body/env:Fault/env:Detail/env:ValidationFault is in http://www.w3.org/2003/05/soap-envelope, not in urn:msv3:v2 (or urn:msv3:v1)',
        },
      });
    }
    const unknownBean = fault.replace(/m:ValidationFault>/g, 'm:Kaputt>');
    expect(verfuegbarkeitAnfragen.decodeResponse(unknownBean, 2)).toMatchObject({
      kind: 'fault',
      fault: {
        kind: 'Unknown',
        beanProblem: 'env:Envelope/env:Body/env:Fault/env:Detail/m:Kaputt is no MSV3 fault bean',
      },
    });
  });
});
