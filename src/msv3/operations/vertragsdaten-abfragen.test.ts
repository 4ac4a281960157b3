import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import { contractDataRequest, contractDataResponse } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedVariations,
} from '../test-support/codec-test-kit.js';
import { type ContractDataResponse, vertragsdatenAbfragen } from './vertragsdaten-abfragen.js';

const terms = {
  NORMAL: { maxFreeOrderLabels: 5 },
  STAPEL: { maxFreeOrderLabels: 1, agreed: true },
  SONDER: { maxFreeOrderLabels: 1, agreed: false },
  VERSAND: { maxFreeOrderLabels: 0, agreed: false, completeContainersOnly: false },
};

const v2Contract: ContractDataResponse = {
  customerId: 'NL01\\apo4711',
  automaticRetrieval: true,
  orderWindows: [{ day: 'Mo', cutoff: '10:30:00', mainOrderTime: { day: 'Mo', time: '10:00:00' } }],
  orderTypes: terms,
  substitutionAgreed: true,
  specificAvailabilityAgreed: true,
  bulkAvailabilityAgreed: false,
  takeBackOffersAgreed: false,
  specialDays: [{ date: '2025-12-24', windows: [{ cutoff: '11:00:00', mainOrderTime: '10:30:00' }] }],
};

const v1Contract: ContractDataResponse = {
  ...v2Contract,
  automaticRetrieval: undefined,
  validFrom: '2025-01-01',
  orderWindows: [{ day: 'Mo', cutoff: '10:30:00' }],
  specialDays: [],
};

describeSamples(vertragsdatenAbfragen, {
  'decodes the v1 request (no manuelleAbfrage)': {
    request: 'v1/vertragsdatenAbfragen.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2' },
  },
  'decodes the v2 request': {
    request: 'v2/vertragsdatenAbfragen.request.xml',
    decodesTo: { clientSoftwareId: 'ExampleWawi 1.4.2', manualQuery: false },
  },
  'decodes the v1 response with GueltigAb and a window without main order time': {
    response: 'v1/vertragsdatenAbfragen.response.xml',
    decodesTo: {
      customerId: 'apo4711',
      validFrom: '2025-01-01',
      orderWindows: [{ day: 'Mo', cutoff: '10:30:00' }],
      orderTypes: terms,
      substitutionAgreed: false,
      specificAvailabilityAgreed: true,
      bulkAvailabilityAgreed: false,
      takeBackOffersAgreed: false,
      specialDays: [],
    },
  },
  'decodes the v2 response with AutomatischerAbruf and special days': {
    response: 'v2/vertragsdatenAbfragen.response.xml',
    decodesTo: {
      customerId: 'NL01\\apo4711',
      automaticRetrieval: true,
      orderWindows: [
        { day: 'Mo', cutoff: '10:30:00', mainOrderTime: { day: 'Mo', time: '10:00:00' } },
        { day: 'Mo', cutoff: '17:45:00', mainOrderTime: { day: 'Mo', time: '17:30:00' } },
      ],
      orderTypes: { ...terms, SONDER: { maxFreeOrderLabels: 1, agreed: true } },
      substitutionAgreed: true,
      specificAvailabilityAgreed: true,
      bulkAvailabilityAgreed: false,
      takeBackOffersAgreed: false,
      specialDays: [
        { date: '2025-12-24', windows: [{ cutoff: '11:00:00', mainOrderTime: '10:30:00' }] },
        { date: '2025-12-25', windows: [] },
      ],
    },
  },
});

describeRoundTrips(vertragsdatenAbfragen, {
  request: contractDataRequest,
  response: contractDataResponse,
});

/** The largest lists the schema allows: v2 999 windows and 99 special days of 99 windows; v1 is unbounded. */
function largest(version: Msv3Version): ContractDataResponse {
  const base = version === 1 ? v1Contract : v2Contract;
  const window = base.orderWindows[0]!;
  return {
    ...base,
    orderWindows: Array.from({ length: version === 1 ? 1200 : 999 }, () => window),
    specialDays:
      version === 1
        ? []
        : Array.from({ length: 99 }, () => ({
            date: '2025-12-24',
            windows: Array.from({ length: 99 }, () => ({ cutoff: '11:00:00', mainOrderTime: '10:30:00' })),
          })),
  };
}

describeXsdValidity(vertragsdatenAbfragen, {
  title: 'accepts 150 generated v%i requests and responses plus the largest lists',
  request: contractDataRequest,
  response: contractDataResponse,
  cases: (version) => {
    const fixed = vertragsdatenAbfragen.encodeResponse(version, version === 1 ? v1Contract : v2Contract);
    return {
      valid: [vertragsdatenAbfragen.encodeResponse(version, largest(version))],
      invalid: [
        fixed.replace('<m:Tag>Mo</m:Tag>', '<m:Tag>Mon</m:Tag>'),
        fixed.replace('10:30:00', '10:30:15'),
        fixed.replace('KundenKennung="', 'KundenKennung="a\\'),
      ],
    };
  },
});

describe('vertragsdatenAbfragen limits', () => {
  it('accepts the largest lists and refuses one more v2 window or special day', () => {
    expect(
      vertragsdatenAbfragen.decodeResponse(vertragsdatenAbfragen.encodeResponse(2, largest(2))).kind,
    ).toBe('ok');
    expect(
      vertragsdatenAbfragen.decodeResponse(vertragsdatenAbfragen.encodeResponse(1, largest(1))).kind,
    ).toBe('ok');
    const big = largest(2);
    expectInvalid(
      vertragsdatenAbfragen.decodeResponse(
        vertragsdatenAbfragen.encodeResponse(2, {
          ...big,
          orderWindows: [...big.orderWindows, big.orderWindows[0]!],
        }),
      ),
      'return/Bestellfenster: 1000 elements, at most 999',
    );
    expectInvalid(
      vertragsdatenAbfragen.decodeResponse(
        vertragsdatenAbfragen.encodeResponse(2, {
          ...big,
          specialDays: [...big.specialDays, big.specialDays[0]!],
        }),
      ),
      'return/Sondertag: 100 elements, at most 99',
    );
  });
});

describe('vertragsdatenAbfragen decoders refuse what the schema refuses', () => {
  const v2Xml = vertragsdatenAbfragen.encodeResponse(2, v2Contract);
  const v1Xml = vertragsdatenAbfragen.encodeResponse(1, v1Contract);
  const decode = (xml: string) => vertragsdatenAbfragen.decodeResponse(xml);

  it('checks manuelleAbfrage per version', () => {
    const v2Request = vertragsdatenAbfragen.encodeRequest(2, { clientSoftwareId: 'a', manualQuery: true });
    expectRefusedVariations((xml) => vertragsdatenAbfragen.decodeRequest(xml), v2Request, [
      ['urn:msv3:v2', 'urn:msv3:v1', 'manuelleAbfrage: unexpected element'],
      ['<manuelleAbfrage>true</manuelleAbfrage>', '', 'manuelleAbfrage: missing required element'],
      ['>true<', '>yes<', "manuelleAbfrage: 'yes' is not a boolean"],
    ]);
  });

  it('requires the v2 main order time and the version’s attributes', () => {
    expectRefusedVariations(decode, v2Xml, [
      [
        /<m:Hauptbestellzeit><m:Tag>.*?<\/m:Hauptbestellzeit>/,
        '',
        'return/Bestellfenster[1]/Hauptbestellzeit: missing required element',
      ],
      ['AutomatischerAbruf="true"', 'GueltigAb="2025-01-01"', '@GueltigAb: attribute not allowed'],
    ]);
    expectRefusedVariations(decode, v1Xml, [
      ['GueltigAb="2025-01-01" ', '', 'return/@GueltigAb: missing required attribute'],
      ['2025-01-01', '2025-02-30', "return/@GueltigAb: '2025-02-30' is not an xs:date"],
    ]);
  });

  it('refuses special days in v1 and wrong-version descendants', () => {
    const v1WithSpecialDay = v1Xml.replace('</return>', '<m:Sondertag Datum="2025-12-24"/></return>');
    expectInvalid(decode(v1WithSpecialDay), 'return/Sondertag: unexpected element');
    expectInvalid(
      decode(
        v2Xml
          .replace('<m:Bestellfenster>', '<x:Bestellfenster xmlns:x="urn:msv3:v1">')
          .replace('</m:Bestellfenster>', '</x:Bestellfenster>'),
      ),
      'return/Bestellfenster: element in the wrong namespace: found <x:Bestellfenster> in urn:msv3:v1',
    );
  });

  it('refuses bad days, times, customer ids and numbers', () => {
    expectRefusedVariations(decode, v2Xml, [
      ['<m:Tag>Mo</m:Tag>', '<m:Tag>Mon</m:Tag>', "return/Bestellfenster[1]/Tag: 'Mon' is not one of"],
      ['10:30:00', '10:30:15', "Endezeit: '10:30:15' is not a contract time"],
      ['10:00:00', '25:00:00', 'Hauptbestellzeit/Zeitpunkt'],
      ['NL01\\apo4711', 'NL01\\apo\\4711', 'return/@KundenKennung'],
      ['NL01\\apo4711', 'apo-4711', 'return/@KundenKennung'],
      [
        'MaxAnzahlFreieAuftragskennungen="5"',
        'MaxAnzahlFreieAuftragskennungen="2147483648"',
        'return/AuftragsartNormal/@MaxAnzahlFreieAuftragskennungen: 2147483648 is outside',
      ],
      [' NurKompletteGebinde="false"', '', 'return/AuftragsartVersand/@NurKompletteGebinde: missing'],
      ['Datum="2025-12-24"', 'Datum="24.12.2025"', 'return/Sondertag[1]/@Datum'],
    ]);
  });

  it('refuses elements out of sequence order', () => {
    const stapel = v2Xml.match(/<m:AuftragsartStapel[^>]*\/>/)![0];
    const sonder = v2Xml.match(/<m:AuftragsartSonder[^>]*\/>/)![0];
    const swapped = v2Xml.replace(stapel, 'STAPEL').replace(sonder, stapel).replace('STAPEL', sonder);
    expectInvalid(
      decode(swapped),
      'return/AuftragsartStapel: missing required element (found <m:AuftragsartSonder>',
    );
  });
});

describe('vertragsdatenAbfragen encoders', () => {
  it('refuse models that lack a field the version requires', () => {
    expect(() => vertragsdatenAbfragen.encodeRequest(2, { clientSoftwareId: 'a' })).toThrow(/manualQuery/);
    expect(() => vertragsdatenAbfragen.encodeResponse(1, v2Contract)).toThrow(/validFrom/);
    expect(() => vertragsdatenAbfragen.encodeResponse(2, v1Contract)).toThrow(/automaticRetrieval/);
    expect(() =>
      vertragsdatenAbfragen.encodeResponse(2, { ...v1Contract, automaticRetrieval: false }),
    ).toThrow(/mainOrderTime/);
  });

  it('leave out what v1 cannot express (special days, AutomatischerAbruf)', () => {
    const xml = vertragsdatenAbfragen.encodeResponse(1, { ...v2Contract, validFrom: '2025-01-01' });
    expect(xml).not.toContain('Sondertag');
    expect(xml).not.toContain('AutomatischerAbruf');
  });
});
