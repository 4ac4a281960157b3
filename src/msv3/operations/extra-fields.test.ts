import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  barcodeReferenz,
  kundenKennung,
  lieferscheinnummer,
  vertragsdatenZeit,
  xsdDate,
} from '../test-support/arbitraries/document-values.js';
import { validateEnvelopes, xsdUnavailableReason } from '../test-support/xsd.js';
import {
  isBarcodeReferenz,
  isDate,
  isKundenKennung,
  isLieferscheinnummer,
  isVertragsdatenZeit,
} from './extra-fields.js';
import { lieferavisAbfrageHist } from './lieferavis-abfrage-hist.js';
import { retourenavisAnfragen } from './retourenavis-anfragen.js';
import { vertragsdatenAbfragen } from './vertragsdaten-abfragen.js';

/**
 * The decoders' checks of dates, contract times and the pattern types must give the XSD's verdict, in
 * both directions: each candidate (valid ones and near misses) is put into an envelope our encoders
 * write (they do not validate) and judged by xmllint and by the check.
 */

const contract = {
  customerId: 'apo1',
  automaticRetrieval: true,
  orderWindows: [
    { day: 'Mo' as const, cutoff: '10:00:00', mainOrderTime: { day: 'Mo' as const, time: '09:00:00' } },
  ],
  orderTypes: {
    NORMAL: { maxFreeOrderLabels: 1 },
    STAPEL: { maxFreeOrderLabels: 1, agreed: true },
    SONDER: { maxFreeOrderLabels: 1, agreed: true },
    VERSAND: { maxFreeOrderLabels: 1, agreed: true, completeContainersOnly: true },
  },
  substitutionAgreed: true,
  specificAvailabilityAgreed: true,
  bulkAvailabilityAgreed: true,
  takeBackOffersAgreed: true,
  specialDays: [],
};

interface Case {
  name: string;
  check: (v: string) => boolean;
  candidates: fc.Arbitrary<string>;
  envelope: (v: string) => string;
}

const cases: Case[] = [
  {
    name: 'xs:date',
    check: isDate,
    candidates: fc.oneof(
      xsdDate,
      fc.stringMatching(
        /^-?[0-9]{1,6}-[0-9]{1,2}-[0-9]{1,2}(Z|[+-][0-9]{2}:[0-9]{2}|[+-][0-9]:[0-9]{2}|T)?$/,
      ),
    ),
    envelope: (v) =>
      retourenavisAnfragen.encodeRequest(2, {
        enquiry: {
          id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          supportId: 1,
          positions: [
            {
              positionRef: 1,
              deliveryNoteNumber: 'L',
              pzn: '1',
              quantity: 1,
              reason: 'Beschaedigt',
              expiryDate: v,
            },
          ],
        },
      }),
  },
  {
    name: 'VertragsdatenZeit',
    check: isVertragsdatenZeit,
    candidates: fc.oneof(vertragsdatenZeit, fc.stringMatching(/^[0-9]{1,3}:[0-9]{1,2}:[0-9]{2}(Z|\.0)?$/)),
    envelope: (v) =>
      vertragsdatenAbfragen.encodeResponse(2, {
        ...contract,
        orderWindows: [{ ...contract.orderWindows[0]!, cutoff: v }],
      }),
  },
  {
    name: 'LieferscheinnummerType',
    check: isLieferscheinnummer,
    candidates: fc.oneof(lieferscheinnummer, fc.stringMatching(/^[a-zA-Z0-9#+*/\-_?. ]{0,32}$/)),
    envelope: (v) => lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: '', deliveryNoteNumber: v }),
  },
  {
    name: 'BarcodeReferenzType',
    check: isBarcodeReferenz,
    candidates: fc.oneof(barcodeReferenz, fc.stringMatching(/^[0-9]{0,4}[a-zA-Z0-9#+*/\-_?. ]{0,30}$/)),
    envelope: (v) => lieferavisAbfrageHist.encodeRequest(2, { clientSoftwareId: '', barcodeReference: v }),
  },
  {
    name: 'KundenKennung',
    check: isKundenKennung,
    candidates: fc.oneof(kundenKennung, fc.stringMatching(/^[a-zA-Z0-9\\-]{0,84}$/)),
    envelope: (v) => vertragsdatenAbfragen.encodeResponse(2, { ...contract, customerId: v }),
  },
];

describe.skipIf(xsdUnavailableReason !== null)('lexical checks agree with the XSD', () => {
  it.each(cases)(
    '$name: 200 valid values and near misses get the same verdict as xmllint',
    async ({ check, candidates, envelope }) => {
      const values = [...new Set(fc.sample(candidates, 200))];
      const results = await validateEnvelopes(2, values.map(envelope));
      const disagreements = values.filter((v, i) => check(v) !== results[i]!.valid);
      expect(disagreements).toEqual([]);
      // Both verdicts must occur, or the comparison proves nothing.
      expect(new Set(results.map((r) => r.valid)).size).toBe(2);
    },
  );
});
