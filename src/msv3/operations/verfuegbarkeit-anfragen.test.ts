import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { availabilityRequest, availabilityResponse } from '../test-support/arbitraries/ordering.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  itRefuses,
  soapEnvelope,
  V1,
} from '../test-support/codec-test-kit.js';
import { type AvailabilityResponse, verfuegbarkeitAnfragen } from './verfuegbarkeit-anfragen.js';

const ID = '3f2b8c1e-6a7d-4e0f-9b1a-2c3d4e5f6a7b';

const v2Answer: AvailabilityResponse = {
  id: ID,
  responseType: 'Spezifisch',
  articles: [
    {
      requestedQuantity: 3,
      requestedPzn: '04114918',
      parts: [
        {
          quantity: 3,
          type: 'Normal',
          deliveryTime: '2025-03-18T14:30:00+01:00',
          tour: 'Mittagstour',
          defectReason: 'KeineAngabe',
          tourDeviation: false,
        },
      ],
    },
    {
      requestedQuantity: 10,
      requestedPzn: '01234567',
      parts: [
        {
          quantity: 4,
          type: 'Verbund',
          deliveryTime: '2025-03-18T18:00:00+01:00',
          defectReason: 'KeineAngabe',
          tourDeviation: false,
        },
        {
          quantity: 6,
          type: 'Nachlieferung',
          deliveryTime: null,
          defectReason: 'FehltZurzeit',
          tourDeviation: false,
        },
      ],
    },
  ],
};

describeSamples(verfuegbarkeitAnfragen, {
  'decodes the v2 request with per-article Bedarf': {
    request: 'v2/verfuegbarkeitAnfragen.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      id: ID,
      articles: [
        { pzn: '04114918', quantity: 3, demand: 'direkt' },
        { pzn: '01234567', quantity: 10, demand: 'unspezifisch' },
      ],
    },
  },
  'decodes the v1 request with the request-level EinsAusNBedarf': {
    request: 'v1/verfuegbarkeitAnfragen.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      id: ID,
      oneOfMany: false,
      articles: [{ pzn: '04114918', quantity: 3 }],
    },
  },
  'decodes the v2 answer with a Verbund and a back-ordered part, keeping offsets and nil': {
    response: 'v2/verfuegbarkeitAnfragen.response.xml',
    decodesTo: v2Answer,
  },
  'decodes the v1 answer without Tourabweichung and with the v1 defect reason': {
    response: 'v1/verfuegbarkeitAnfragen.response.xml',
    expectedVersion: 1,
    decodesTo: {
      id: ID,
      responseType: 'Spezifisch',
      articles: [
        {
          requestedQuantity: 3,
          requestedPzn: '04114918',
          parts: [
            { quantity: 3, type: 'NichtLieferbar', deliveryTime: null, defectReason: 'NichtLieferbar' },
          ],
        },
      ],
    },
  },
  'turns the server fault sample into a fault outcome': {
    response: 'v2/fault.server.xml',
    outcome: {
      kind: 'fault',
      fault: {
        kind: 'ServerFault',
        soapCode: 'Receiver',
        reason: 'Interner Fehler beim Grosshandel',
        errorCode: 'S001',
        userText: 'Der Dienst ist voruebergehend nicht verfuegbar.',
        technicalText: 'backend timeout after 30s',
      },
    },
  },
});

describeRoundTrips(verfuegbarkeitAnfragen, {
  request: availabilityRequest,
  response: availabilityResponse,
  numRuns: 200,
  titles: { response: 'decodes every encoded answer to the same model' },
  more: (version) => {
    it('refuses an answer in the other version when a version is expected', () => {
      const xml = verfuegbarkeitAnfragen.encodeResponse(
        version,
        fc.sample(availabilityResponse(version), 1)[0]!,
      );
      expectInvalid(verfuegbarkeitAnfragen.decodeResponse(xml, version === 1 ? 2 : 1), `found v${version}`);
    });
  },
});

describe('verfuegbarkeitAnfragen encoders', () => {
  const article = { pzn: '04114918', quantity: 3 };

  it('write the qualification of docs/msv3.md "Element qualification": qualified wrapper, unqualified children, qualified below', () => {
    const xml = verfuegbarkeitAnfragen.encodeRequest(2, {
      clientSoftwareId: 'W',
      id: ID,
      articles: [{ ...article, demand: 'direkt' }],
    });
    expect(xml).toContain(
      `<m:verfuegbarkeitAnfragen><clientSoftwareKennung>W</clientSoftwareKennung><verfuegbarkeitsanfrage Id="${ID}"><m:Artikel Bedarf="direkt"><m:Pzn>4114918</m:Pzn><m:Menge>3</m:Menge></m:Artikel>`,
    );
  });

  it('derive v1 EinsAusNBedarf from the articles when it is not given', () => {
    const encode = (demands: ('einsAusN' | 'direkt')[]) =>
      verfuegbarkeitAnfragen.encodeRequest(1, {
        clientSoftwareId: 'W',
        id: ID,
        articles: demands.map((demand, i) => ({ pzn: `0000000${i + 1}`, quantity: 1, demand })),
      });
    expect(encode(['einsAusN', 'einsAusN'])).toContain('EinsAusNBedarf="true"');
    expect(encode(['einsAusN', 'direkt'])).toContain('EinsAusNBedarf="false"');
    expect(encode(['einsAusN'])).not.toContain('Bedarf="einsAusN"');
  });

  it('send Bedarf unspezifisch in v2 when an article has no demand', () => {
    const xml = verfuegbarkeitAnfragen.encodeRequest(2, {
      clientSoftwareId: 'W',
      id: ID,
      articles: [article],
    });
    expect(xml).toContain('<m:Artikel Bedarf="unspezifisch">');
  });

  it('write nil elements as xsi:nil and translate the manufacturer defect reason per version', () => {
    const response: AvailabilityResponse = {
      id: ID,
      responseType: 'Unspezifisch',
      articles: [
        {
          requestedQuantity: 2,
          requestedPzn: '00000042',
          parts: [
            { quantity: null, type: 'NichtLieferbar', deliveryTime: null, defectReason: 'NichtLieferbar' },
          ],
        },
      ],
    };
    const v2 = verfuegbarkeitAnfragen.encodeResponse(2, response);
    expect(v2).toContain(
      '<m:Anteile><m:Menge xsi:nil="true"/><m:Typ>NichtLieferbar</m:Typ><m:Lieferzeitpunkt xsi:nil="true"/><m:Grund>HerstellerNichtLieferbar</m:Grund><m:Tourabweichung>false</m:Tourabweichung></m:Anteile>',
    );
    expect(v2).toContain('<m:AnfragePzn>42</m:AnfragePzn>');
    const v1 = verfuegbarkeitAnfragen.encodeResponse(1, {
      ...response,
      articles: [
        {
          ...response.articles[0]!,
          parts: [{ ...response.articles[0]!.parts[0]!, defectReason: 'HerstellerNichtLieferbar' }],
        },
      ],
    });
    expect(v1).toContain('<m:Grund>NichtLieferbar</m:Grund></m:Anteile>');
  });

  it('name the soapAction after version and operation', () => {
    expect(verfuegbarkeitAnfragen.soapAction(1)).toBe('urn:msv3:v1:Msv3:verfuegbarkeitAnfragen');
    expect(verfuegbarkeitAnfragen.soapAction(2)).toBe('urn:msv3:v2:Msv3:verfuegbarkeitAnfragen');
  });
});

describeXsdValidity(verfuegbarkeitAnfragen, {
  title: 'accepts 150 generated v%i requests and 150 answers, and rejects broken ones',
  request: availabilityRequest,
  response: availabilityResponse,
  cases: (version, { responses }) => {
    // The largest allowed answer: 50 articles with 5 parts each.
    const largest = fc.sample(availabilityResponse(version), 1)[0]!;
    const article = fc.sample(availabilityResponse(version), 1)[0]!.articles[0]!;
    const full = {
      ...article,
      parts: [0, 1, 2, 3, 4].map((i) => ({ ...article.parts[0]!, quantity: i + 1 })),
    };
    const sample = responses[0]!;
    return {
      valid: [
        verfuegbarkeitAnfragen.encodeResponse(version, {
          ...largest,
          articles: Array.from({ length: 50 }, () => full),
        }),
      ],
      invalid: [
        // One article too many.
        verfuegbarkeitAnfragen.encodeResponse(version, {
          ...largest,
          articles: Array.from({ length: 51 }, () => full),
        }),
        // Quantity above the version's limit.
        sample.replace(/<m:AnfrageMenge>\d+</, `<m:AnfrageMenge>${version === 1 ? 10_000 : 100_000}<`),
        // v2 needs Tourabweichung; v1 forbids it.
        version === 2
          ? sample.replace(/<m:Tourabweichung>(true|false)<\/m:Tourabweichung>/, '')
          : sample.replace(
              '</m:Grund></m:Anteile>',
              '</m:Grund><m:Tourabweichung>false</m:Tourabweichung></m:Anteile>',
            ),
      ],
    };
  },
});

describe('verfuegbarkeitAnfragen decoders refuse what the schema refuses', () => {
  const article = '<m:Artikel Bedarf="direkt"><m:Pzn>4114918</m:Pzn><m:Menge>3</m:Menge></m:Artikel>';
  const request = (inner: string, attrs = `Id="${ID}"`, ns?: string) =>
    soapEnvelope(
      `<m:verfuegbarkeitAnfragen><clientSoftwareKennung>W</clientSoftwareKennung><verfuegbarkeitsanfrage ${attrs}>${inner}</verfuegbarkeitsanfrage></m:verfuegbarkeitAnfragen>`,
      ns,
    );
  const part = (inner: string) =>
    `<m:Anteile><m:Menge>1</m:Menge><m:Typ>Normal</m:Typ><m:Lieferzeitpunkt>2025-03-18T14:30:00+01:00</m:Lieferzeitpunkt>${inner}</m:Anteile>`;
  /** A v2 part that decodes; the answer refusals below vary it. */
  const validPart = part('<m:Grund>KeineAngabe</m:Grund><m:Tourabweichung>false</m:Tourabweichung>');
  const response = (parts: string, ns?: string) =>
    soapEnvelope(
      `<m:verfuegbarkeitAnfragenResponse><return Id="${ID}" RTyp="Spezifisch"><m:Artikel><m:AnfrageMenge>1</m:AnfrageMenge><m:AnfragePzn>4114918</m:AnfragePzn>${parts}</m:Artikel></return></m:verfuegbarkeitAnfragenResponse>`,
      ns,
    );

  it('accepts the hand-written envelopes the refusals below are variations of', () => {
    expect(verfuegbarkeitAnfragen.decodeRequest(request(article)).kind).toBe('ok');
    expect(verfuegbarkeitAnfragen.decodeResponse(response(validPart)).kind).toBe('ok');
  });

  it('reads any prefix, a default namespace and undeclared-default wrapper children', () => {
    const xml = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body><ns2:verfuegbarkeitAnfragen xmlns:ns2="urn:msv3:v2"><clientSoftwareKennung>W</clientSoftwareKennung><verfuegbarkeitsanfrage xmlns="" Id="${ID}"><Artikel xmlns="urn:msv3:v2" Bedarf="einsAusN"><Pzn> 4114918 </Pzn><Menge>3</Menge></Artikel></verfuegbarkeitsanfrage></ns2:verfuegbarkeitAnfragen></s:Body></s:Envelope>`;
    expect(verfuegbarkeitAnfragen.decodeRequest(xml)).toEqual({
      kind: 'ok',
      value: {
        version: 2,
        request: {
          clientSoftwareId: 'W',
          id: ID,
          articles: [{ pzn: '04114918', quantity: 3, demand: 'einsAusN' }],
        },
      },
    });
  });

  itRefuses(verfuegbarkeitAnfragen, {
    request: [
      [
        'a wrapper outside the MSV3 namespaces',
        request(article, undefined, 'urn:msv3:v3'),
        'not in an MSV3 namespace',
      ],
      ['another operation’s wrapper', soapEnvelope('<m:bestellen/>'), 'expected <verfuegbarkeitAnfragen>'],
      ['a missing Id', request(article, ''), 'verfuegbarkeitsanfrage/@Id: missing required attribute'],
      ['a malformed Id', request(article, 'Id="123"'), "@Id: '123' is not a uuid"],
      ['no article', request(''), 'verfuegbarkeitsanfrage/Artikel: missing required element'],
      ['51 articles', request(article.repeat(51)), 'Artikel: 51 elements, at most 50 allowed'],
      [
        'an unknown Bedarf',
        request(article.replace('direkt', 'sofort')),
        "Artikel[1]/@Bedarf: 'sofort' is not one of",
      ],
      [
        'a missing Bedarf in v2',
        request(article.replace(' Bedarf="direkt"', '')),
        'Artikel[1]/@Bedarf: missing',
      ],
      [
        'v2 Bedarf in a v1 request',
        request(article, `Id="${ID}" EinsAusNBedarf="true"`, V1),
        'Artikel[1]/@Bedarf: attribute not allowed',
      ],
      [
        'v1 EinsAusNBedarf in a v2 request',
        request(article, `Id="${ID}" EinsAusNBedarf="true"`),
        '@EinsAusNBedarf: attribute not allowed',
      ],
      [
        'a quantity of 0',
        request(article.replace('<m:Menge>3<', '<m:Menge>0<')),
        'Artikel[1]/Menge: 0 is outside 1..99999',
      ],
      [
        'a v1 quantity of 10000',
        request(
          article.replace(' Bedarf="direkt"', '').replace('<m:Menge>3<', '<m:Menge>10000<'),
          `Id="${ID}" EinsAusNBedarf="false"`,
          V1,
        ),
        'Menge: 10000 is outside 1..9999',
      ],
      [
        'a non-numeric PZN',
        request(article.replace('4114918', '41x4918')),
        "Artikel[1]/Pzn: '41x4918' is not a PZN",
      ],
      [
        'elements out of order',
        request('<m:Artikel Bedarf="direkt"><m:Menge>3</m:Menge><m:Pzn>4114918</m:Pzn></m:Artikel>'),
        'Artikel[1]/Pzn: missing required element (found <m:Menge>',
      ],
      [
        'an unqualified article',
        request('<Artikel Bedarf="direkt"><m:Pzn>1</m:Pzn><m:Menge>3</m:Menge></Artikel>'),
        'verfuegbarkeitsanfrage/Artikel: missing required element',
      ],
      [
        'a qualified clientSoftwareKennung',
        soapEnvelope(
          `<m:verfuegbarkeitAnfragen><m:clientSoftwareKennung>W</m:clientSoftwareKennung></m:verfuegbarkeitAnfragen>`,
        ),
        'clientSoftwareKennung: element in the wrong namespace: found <m:clientSoftwareKennung>',
      ],
      [
        'an empty clientSoftwareKennung',
        soapEnvelope(
          `<m:verfuegbarkeitAnfragen><clientSoftwareKennung></clientSoftwareKennung></m:verfuegbarkeitAnfragen>`,
        ),
        'clientSoftwareKennung: length 0 is outside 1..80',
      ],
      [
        'an extra element',
        request(`${article}<m:Extra/>`),
        'verfuegbarkeitsanfrage/Extra: unexpected element',
      ],
    ],
    response: [
      [
        'a v2 part without Tourabweichung',
        response(part('<m:Grund>KeineAngabe</m:Grund>')),
        'return/Artikel[1]/Anteile[1]/Tourabweichung: missing required element',
      ],
      [
        'a v1 part with Tourabweichung',
        response(validPart, V1),
        'Anteile[1]/Tourabweichung: unexpected element',
      ],
      [
        'the v1 reason NichtLieferbar in v2',
        response(part('<m:Grund>NichtLieferbar</m:Grund><m:Tourabweichung>false</m:Tourabweichung>')),
        "Anteile[1]/Grund: 'NichtLieferbar' is not one of",
      ],
      [
        'the v2 reason HerstellerNichtLieferbar in v1',
        response(part('<m:Grund>HerstellerNichtLieferbar</m:Grund>'), V1),
        "Grund: 'HerstellerNichtLieferbar' is not one of",
      ],
      [
        'an unknown Typ',
        response(validPart.replace('>Normal<', '>Sofort<')),
        "Anteile[1]/Typ: 'Sofort' is not one of",
      ],
      [
        'a malformed Lieferzeitpunkt',
        response(validPart.replace('2025-03-18T14:30', '2025-02-30T14:30')),
        "Lieferzeitpunkt: '2025-02-30T14:30:00+01:00' is not an xs:dateTime",
      ],
      [
        'a missing (rather than nil) Lieferzeitpunkt',
        response(
          '<m:Anteile><m:Menge>1</m:Menge><m:Typ>Normal</m:Typ><m:Grund>KeineAngabe</m:Grund><m:Tourabweichung>false</m:Tourabweichung></m:Anteile>',
        ),
        'Anteile[1]/Lieferzeitpunkt: missing required element (found <m:Grund>',
      ],
      ['six parts', response(validPart.repeat(6)), 'Artikel[1]/Anteile: 6 elements, at most 5 allowed'],
      [
        'a non-boolean Tourabweichung',
        response(part('<m:Grund>KeineAngabe</m:Grund><m:Tourabweichung>ja</m:Tourabweichung>')),
        "Tourabweichung: 'ja' is not a boolean",
      ],
      [
        'a Tour of 81 characters',
        response(
          part(
            `<m:Tour>${'x'.repeat(81)}</m:Tour><m:Grund>KeineAngabe</m:Grund><m:Tourabweichung>false</m:Tourabweichung>`,
          ),
        ),
        'Anteile[1]/Tour: length 81 is outside 1..80',
      ],
      [
        'a nil element with content',
        response(
          validPart.replace(
            '<m:Menge>1</m:Menge>',
            '<m:Menge xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="true">1</m:Menge>',
          ),
        ),
        'Anteile[1]/Menge: nil element with content',
      ],
      [
        'an unknown RTyp',
        response(validPart).replace('RTyp="Spezifisch"', 'RTyp="Genau"'),
        "return/@RTyp: 'Genau' is not one of",
      ],
      [
        'a descendant in the other version’s namespace',
        response(
          part(
            '<m:Grund>KeineAngabe</m:Grund><v1:Tourabweichung xmlns:v1="urn:msv3:v1">false</v1:Tourabweichung>',
          ),
        ),
        'Anteile[1]/Tourabweichung: element in the wrong namespace: found <v1:Tourabweichung> in urn:msv3:v1',
      ],
    ],
  });

  it('reads xsi:nil under any prefix as null', () => {
    const xml = response(
      part('<m:Grund>KeineAngabe</m:Grund><m:Tourabweichung>true</m:Tourabweichung>').replace(
        '<m:Menge>1</m:Menge>',
        '<m:Menge xmlns:i="http://www.w3.org/2001/XMLSchema-instance" i:nil="true"/>',
      ),
    );
    const result = verfuegbarkeitAnfragen.decodeResponse(xml);
    expect(result.kind === 'ok' && result.value.articles[0]!.parts[0]!.quantity).toBeNull();
  });
});
