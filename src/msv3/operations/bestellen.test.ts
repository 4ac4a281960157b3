import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  orderRequest,
  orderResponse,
  positionAnswer,
  subOrder,
} from '../test-support/arbitraries/ordering.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  itRefuses,
  soapEnvelope,
  V1,
} from '../test-support/codec-test-kit.js';
import {
  bestellen,
  matchOrderAnswer,
  type OrderRequest,
  type OrderResponse,
  type PositionAnswer,
  type SubOrder,
  type SubOrderAnswer,
} from './bestellen.js';

const ORDER_ID = '9d7e6f50-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
const SUB_ID = '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f';
const HEADER = { id: SUB_ID, orderType: 'NORMAL', orderLabel: 'K1', supportId: 4712 } as const;

const v2DayAnswer: OrderResponse = {
  id: ORDER_ID,
  supportId: 4711,
  nightMode: false,
  subOrders: [
    {
      ...HEADER,
      positions: [
        {
          pzn: '04114918',
          quantity: 3,
          deliveryInstruction: 'Normal',
          parts: [
            {
              quantity: 3,
              type: 'Normal',
              deliveryTime: '2025-03-18T14:30:00+01:00',
              tour: 'Mittagstour',
              defectReason: 'KeineAngabe',
              tourId: 'T12',
              tourDeviation: false,
            },
          ],
        },
        {
          pzn: '01234567',
          quantity: 10,
          deliveryInstruction: 'MaxNachlieferung',
          parts: [
            {
              quantity: 4,
              type: 'Normal',
              deliveryTime: '2025-03-18T14:30:00+01:00',
              defectReason: 'KeineAngabe',
              tourId: 'T12',
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
    },
  ],
};

describeSamples(bestellen, {
  'decodes the v2 request': {
    request: 'v2/bestellen.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      id: ORDER_ID,
      supportId: 4711,
      subOrders: [
        {
          ...HEADER,
          positions: [
            { pzn: '04114918', quantity: 3, deliveryInstruction: 'Normal' },
            { pzn: '01234567', quantity: 10, deliveryInstruction: 'MaxNachlieferung' },
          ],
        },
      ],
    },
  },
  'decodes the v2 day-mode answer': {
    response: 'v2/bestellen.response.xml',
    expectedVersion: 2,
    decodesTo: v2DayAnswer,
  },
  'decodes the night-mode answer as accepted without sub-orders': {
    response: 'v2/bestellen.response.nachtbetrieb.xml',
    decodesTo: { id: ORDER_ID, supportId: 4711, nightMode: true, subOrders: [] },
  },
  'decodes an in-band Auftragsfehler as a rejected sub-order without positions': {
    response: 'v2/bestellen.response.auftragsfehler.xml',
    decodesTo: {
      id: ORDER_ID,
      supportId: 4711,
      nightMode: false,
      subOrders: [
        {
          ...HEADER,
          orderType: 'SONDER',
          positions: [],
          error: {
            errorCode: 'A17',
            userText: 'Auftragsart SONDER ist nicht vereinbart.',
            technicalText: 'order type SONDER not agreed for customer',
          },
        },
      ],
    },
  },
  'decodes the v1 answer without Tourabweichung': {
    response: 'v1/bestellen.response.xml',
    expectedVersion: 1,
    decodesTo: {
      id: ORDER_ID,
      supportId: 4711,
      nightMode: false,
      subOrders: [
        {
          ...HEADER,
          positions: [
            {
              pzn: '04114918',
              quantity: 3,
              deliveryInstruction: 'Normal',
              parts: [
                {
                  quantity: 3,
                  type: 'Normal',
                  deliveryTime: '2025-03-18T14:30:00+01:00',
                  defectReason: 'KeineAngabe',
                  tourId: 'T12',
                },
              ],
            },
          ],
        },
      ],
    },
  },
  'turns the server fault sample into a fault outcome': {
    response: 'v2/fault.server.xml',
    faultLike: { kind: 'ServerFault', errorCode: 'S001' },
  },
});

describeRoundTrips(bestellen, {
  request: orderRequest,
  response: orderResponse,
  numRuns: 150,
  titles: {
    response:
      'decodes every encoded answer (day and night mode, with and without Auftragsfehler) to the same model',
  },
});

describe('bestellen encoders', () => {
  it('write sub-order attributes unqualified and GebindeId only when given', () => {
    const xml = bestellen.encodeRequest(2, {
      clientSoftwareId: 'W',
      id: ORDER_ID,
      supportId: 1,
      subOrders: [
        {
          ...HEADER,
          orderType: 'VERSAND',
          containerId: 'G-1',
          positions: [{ pzn: '00000001', quantity: 1, deliveryInstruction: 'MaxDispo' }],
        },
      ],
    });
    expect(xml).toContain(
      `<bestellung Id="${ORDER_ID}" BestellSupportId="1"><m:Auftraege Id="${SUB_ID}" Auftragsart="VERSAND" Auftragskennung="K1" GebindeId="G-1" AuftragsSupportID="4712"><m:Positionen><m:Pzn>1</m:Pzn>`,
    );
  });

  it('write a night-mode answer as an empty return element', () => {
    const xml = bestellen.encodeResponse(2, { id: ORDER_ID, supportId: 7, nightMode: true, subOrders: [] });
    expect(xml).toContain(`<return Id="${ORDER_ID}" BestellSupportId="7" NachtBetrieb="true"/>`);
  });
});

describeXsdValidity(bestellen, {
  title: 'accepts 150 generated v%i requests and 150 answers, and rejects broken ones',
  request: orderRequest,
  response: orderResponse,
  cases: (version) => {
    // 1000 positions in one sub-order, each answered with the maximum of 9 parts.
    const sub = fc.sample(subOrder(version, 1), 1)[0]!;
    const position = fc.sample(positionAnswer(version), 1)[0]!;
    const ninePart = { ...position, parts: Array.from({ length: 9 }, () => position.parts[0]!) };
    const big: OrderRequest = {
      clientSoftwareId: 'W',
      id: ORDER_ID,
      supportId: 999_999,
      subOrders: [{ ...sub, positions: Array.from({ length: 1000 }, () => sub.positions[0]!) }],
    };
    const bigAnswer: OrderResponse = {
      id: ORDER_ID,
      supportId: 999_999,
      nightMode: false,
      subOrders: [{ ...sub, positions: Array.from({ length: 1000 }, () => ninePart) }],
    };
    const tenParts = {
      ...bigAnswer,
      subOrders: [{ ...sub, positions: [{ ...position, parts: [...ninePart.parts, position.parts[0]!] }] }],
    };
    return {
      valid: [bestellen.encodeRequest(version, big), bestellen.encodeResponse(version, bigAnswer)],
      invalid: [
        bestellen.encodeResponse(version, tenParts),
        bestellen.encodeRequest(version, { ...big, supportId: 1_000_000 }),
        bestellen.encodeRequest(version, { ...big, subOrders: [{ ...sub, positions: [] }] }),
      ],
    };
  },
});

describe('bestellen decoders refuse what the schema refuses', () => {
  const position =
    '<m:Positionen><m:Pzn>4114918</m:Pzn><m:Menge>3</m:Menge><m:Liefervorgabe>Normal</m:Liefervorgabe></m:Positionen>';
  const subOrderXml = (
    inner: string,
    attrs = `Id="${SUB_ID}" Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="4712"`,
  ) => `<m:Auftraege ${attrs}>${inner}</m:Auftraege>`;
  const request = (inner: string, ns?: string) =>
    soapEnvelope(
      `<m:bestellen><clientSoftwareKennung>W</clientSoftwareKennung><bestellung Id="${ORDER_ID}" BestellSupportId="4711">${inner}</bestellung></m:bestellen>`,
      ns,
    );
  const part =
    '<m:Anteile><m:Menge>3</m:Menge><m:Typ>Normal</m:Typ><m:Lieferzeitpunkt>2025-03-18T14:30:00Z</m:Lieferzeitpunkt><m:Grund>KeineAngabe</m:Grund><m:TourId>T1</m:TourId><m:Tourabweichung>false</m:Tourabweichung></m:Anteile>';
  const answered = (parts: string) =>
    `<m:Positionen><m:BestellPzn>4114918</m:BestellPzn><m:BestellMenge>3</m:BestellMenge><m:BestellLiefervorgabe>Normal</m:BestellLiefervorgabe>${parts}</m:Positionen>`;
  const response = (inner: string, attrs = `Id="${ORDER_ID}" BestellSupportId="4711" NachtBetrieb="false"`) =>
    soapEnvelope(`<m:bestellenResponse><return ${attrs}>${inner}</return></m:bestellenResponse>`);

  it('accepts the hand-written envelopes the refusals are variations of', () => {
    expect(bestellen.decodeRequest(request(subOrderXml(position))).kind).toBe('ok');
    expect(bestellen.decodeResponse(response(subOrderXml(answered(part)))).kind).toBe('ok');
  });

  itRefuses(bestellen, {
    request: [
      ['no sub-order', request(''), 'bestellung/Auftraege: missing required element'],
      [
        'a sub-order without positions',
        request(subOrderXml('')),
        'bestellung/Auftraege[1]/Positionen: missing required element',
      ],
      [
        'an unknown Auftragsart',
        request(
          subOrderXml(
            position,
            `Id="${SUB_ID}" Auftragsart="EILIG" Auftragskennung="K1" AuftragsSupportID="1"`,
          ),
        ),
        "Auftraege[1]/@Auftragsart: 'EILIG' is not one of",
      ],
      [
        'a missing sub-order Id',
        request(subOrderXml(position, 'Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="1"')),
        'Auftraege[1]/@Id: missing required attribute',
      ],
      [
        'a lower-case Auftragskennung',
        request(
          subOrderXml(
            position,
            `Id="${SUB_ID}" Auftragsart="NORMAL" Auftragskennung="k1" AuftragsSupportID="1"`,
          ),
        ),
        "@Auftragskennung: 'k1' is not a printable id",
      ],
      [
        'a support id of 1 000 000',
        request(
          subOrderXml(
            position,
            `Id="${SUB_ID}" Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="1000000"`,
          ),
        ),
        '@AuftragsSupportID: 1000000 is outside 1..999999',
      ],
      [
        'an unknown Liefervorgabe',
        request(subOrderXml(position.replace('>Normal<', '>Sofort<'))),
        "Positionen[1]/Liefervorgabe: 'Sofort' is not one of",
      ],
      [
        'a v1 quantity above 9999',
        request(subOrderXml(position.replace('<m:Menge>3<', '<m:Menge>10000<')), V1),
        'Positionen[1]/Menge: 10000 is outside 1..9999',
      ],
      [
        '1001 positions in one sub-order',
        request(subOrderXml(position.repeat(1001))),
        'Auftraege[1]/Positionen: 1001 elements, at most 1000 allowed',
      ],
      [
        '1001 positions across two sub-orders',
        request(subOrderXml(position.repeat(600)) + subOrderXml(position.repeat(401))),
        'bestellung/Auftraege: 1001 positions in all, at most 1000',
      ],
      [
        'an unknown attribute',
        request(
          subOrderXml(
            position,
            `Id="${SUB_ID}" Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="1" Prio="1"`,
          ),
        ),
        'Auftraege[1]/@Prio: attribute not allowed',
      ],
    ],
    response: [
      [
        'a missing NachtBetrieb',
        response('', `Id="${ORDER_ID}" BestellSupportId="4711"`),
        'return/@NachtBetrieb: missing required attribute',
      ],
      [
        'a position without parts',
        response(subOrderXml(answered(''))),
        'return/Auftraege[1]/Positionen[1]/Anteile: missing required element',
      ],
      [
        'ten parts',
        response(subOrderXml(answered(part.repeat(10)))),
        'Positionen[1]/Anteile: 10 elements, at most 9 allowed',
      ],
      [
        'the availability-only reason Teildefekt',
        response(subOrderXml(answered(part.replace('KeineAngabe', 'Teildefekt')))),
        "Anteile[1]/Grund: 'Teildefekt' is not one of",
      ],
      [
        'a malformed TourId',
        response(subOrderXml(answered(part.replace('>T1<', '>t 1<')))),
        "Anteile[1]/TourId: 't 1' is not a printable id",
      ],
      [
        'an Auftragsfehler before the positions',
        response(
          subOrderXml(
            `<m:Auftragsfehler><m:ErrorCode>1</m:ErrorCode><m:EndanwenderFehlertext>x</m:EndanwenderFehlertext><m:TechnischerFehlertext>y</m:TechnischerFehlertext></m:Auftragsfehler>${answered(part)}`,
          ),
        ),
        'Auftraege[1]/Positionen: unexpected element',
      ],
      [
        'an ErrorCode of six characters',
        response(
          subOrderXml(
            '<m:Auftragsfehler><m:ErrorCode>123456</m:ErrorCode><m:EndanwenderFehlertext>x</m:EndanwenderFehlertext><m:TechnischerFehlertext>y</m:TechnischerFehlertext></m:Auftragsfehler>',
          ),
        ),
        'Auftraege[1]/Auftragsfehler/ErrorCode: length 6 is outside 1..5',
      ],
      [
        'a v2 part without Tourabweichung',
        response(subOrderXml(answered(part.replace('<m:Tourabweichung>false</m:Tourabweichung>', '')))),
        'Anteile[1]/Tourabweichung: missing required element',
      ],
    ],
  });
});

// ---------------------------------------------------------------------------------------------------

function answerFor(sub: SubOrder, seed: PositionAnswer): SubOrderAnswer {
  return {
    id: sub.id,
    orderType: sub.orderType,
    orderLabel: sub.orderLabel,
    containerId: sub.containerId,
    supportId: sub.supportId,
    positions: sub.positions.map((p) => ({
      ...seed,
      pzn: p.pzn,
      quantity: p.quantity,
      deliveryInstruction: p.deliveryInstruction,
    })),
    error: undefined,
  };
}

/** Requests whose PZNs are unique per sub-order and whose sub-order ids are unique (as MSV3 demands). */
const wellFormedRequest = orderRequest(2).filter(
  (r) =>
    new Set(r.subOrders.map((s) => s.id)).size === r.subOrders.length &&
    r.subOrders.every((s) => new Set(s.positions.map((p) => p.pzn)).size === s.positions.length),
);

describe('matchOrderAnswer', () => {
  it('pairs every position by sub-order Id and PZN however the answer is shuffled', () => {
    fc.assert(
      fc.property(
        wellFormedRequest,
        positionAnswer(2),
        fc.infiniteStream(fc.nat()),
        (request, seed, randomness) => {
          const numbers = randomness[Symbol.iterator]();
          const shuffle = <T>(items: T[]): T[] => {
            const out = [...items];
            for (let i = out.length - 1; i > 0; i--) {
              const j = numbers.next().value! % (i + 1);
              [out[i], out[j]] = [out[j]!, out[i]!];
            }
            return out;
          };
          const answers = shuffle(request.subOrders.map((s) => answerFor(s, seed))).map((a) => ({
            ...a,
            positions: shuffle(a.positions),
          }));
          const match = matchOrderAnswer(request, { subOrders: answers });
          const total = request.subOrders.reduce((n, s) => n + s.positions.length, 0);
          expect(match.matched).toHaveLength(total);
          for (const m of match.matched) {
            expect(m.answered.pzn).toBe(m.requested.pzn);
            expect(m.answered.quantity).toBe(m.requested.quantity);
            const sub = request.subOrders.find((s) => s.id === m.subOrderId)!;
            expect(sub.positions).toContain(m.requested);
          }
          expect(match.unanswered).toEqual([]);
          expect(match.unexpectedPositions).toEqual([]);
          expect(match.unexpectedSubOrders).toEqual([]);
          expect(match.missingSubOrders).toEqual([]);
          expect(match.rejected).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  const positions = [
    { pzn: '00000001', quantity: 1, deliveryInstruction: 'Normal' as const },
    { pzn: '00000002', quantity: 2, deliveryInstruction: 'Normal' as const },
  ];
  const subA: SubOrder = { ...HEADER, id: '00000000-0000-4000-8000-00000000000a', positions };
  const subB: SubOrder = { ...HEADER, id: '00000000-0000-4000-8000-00000000000b', positions };
  const seed: PositionAnswer = {
    pzn: '',
    quantity: 1,
    deliveryInstruction: 'Normal',
    parts: [{ quantity: 1, type: 'Normal', deliveryTime: null, defectReason: 'KeineAngabe' }],
  };

  it('reports a rejected sub-order with its Auftragsfehler instead of its positions', () => {
    const error = { errorCode: 'A17', userText: 'nein', technicalText: 'not agreed' };
    const match = matchOrderAnswer(
      { subOrders: [subA, subB] },
      { subOrders: [answerFor(subB, seed), { ...answerFor(subA, seed), positions: [], error }] },
    );
    expect(match.rejected).toEqual([{ subOrder: subA, error }]);
    expect(match.matched.map((m) => `${m.subOrderId.slice(-1)}:${m.requested.pzn}`)).toEqual([
      'b:00000001',
      'b:00000002',
    ]);
    expect(match.unanswered).toEqual([]);
  });

  it('reports unknown and repeated sub-orders, unrequested PZNs and unanswered positions', () => {
    const stranger: SubOrderAnswer = { ...answerFor(subA, seed), id: '00000000-0000-4000-8000-0000000000ff' };
    const partial = answerFor(subA, seed);
    partial.positions = [partial.positions[1]!, { ...partial.positions[1]!, pzn: '00000099' }];
    const match = matchOrderAnswer(
      { subOrders: [subA, subB] },
      { subOrders: [stranger, partial, answerFor(subA, seed)] },
    );
    expect(match.unexpectedSubOrders.map((s) => s.id)).toEqual([stranger.id, subA.id]);
    expect(match.unexpectedPositions).toEqual([{ subOrderId: subA.id, position: partial.positions[1] }]);
    expect(match.matched).toEqual([
      { subOrderId: subA.id, requested: positions[1], answered: partial.positions[0] },
    ]);
    expect(match.unanswered).toEqual([
      { subOrderId: subA.id, position: positions[0] },
      { subOrderId: subB.id, position: positions[0] },
      { subOrderId: subB.id, position: positions[1] },
    ]);
    expect(match.missingSubOrders).toEqual([subB]);
  });

  it('leaves every position unanswered in night mode', () => {
    const match = matchOrderAnswer({ subOrders: [subA] }, { subOrders: [] });
    expect(match.missingSubOrders).toEqual([subA]);
    expect(match.unanswered).toHaveLength(2);
    expect(match.matched).toEqual([]);
  });
});
