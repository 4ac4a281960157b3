import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import { takeBackOfferRequest, takeBackOfferResponse } from '../test-support/arbitraries/documents.js';
import {
  describeRoundTrips,
  describeSamples,
  describeXsdValidity,
  expectInvalid,
  expectRefusedVariations,
} from '../test-support/codec-test-kit.js';
import { ruecknahmeangebotAnfordern, type TakeBackOfferRequest } from './ruecknahmeangebot-anfordern.js';

const ID = '4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a';

describeSamples(ruecknahmeangebotAnfordern, {
  'decodes the v2 request with its PZN re-padded to 8 digits': {
    request: 'v2/ruecknahmeangebotAnfordern.request.xml',
    decodesTo: {
      clientSoftwareId: 'ExampleWawi 1.4.2',
      id: ID,
      articles: [{ pzn: '04114918', quantity: 5 }],
    },
  },
  'decodes the v2 response (a reference id only)': {
    response: 'v2/ruecknahmeangebotAnfordern.response.xml',
    decodesTo: { id: ID, referenceId: 'RNA-2025-000042' },
  },
});

describeRoundTrips(ruecknahmeangebotAnfordern, {
  request: takeBackOfferRequest,
  response: takeBackOfferResponse,
});

const thousandArticles = (version: Msv3Version): TakeBackOfferRequest => ({
  clientSoftwareId: 'Wawi',
  id: ID,
  articles: Array.from({ length: 1000 }, (_, k) => ({
    pzn: String(k + 1).padStart(8, '0'),
    quantity: version === 1 ? 9999 : 99999,
  })),
});

describeXsdValidity(ruecknahmeangebotAnfordern, {
  title: 'accepts 150 generated v%i requests and responses, refuses v2 quantities in v1',
  request: takeBackOfferRequest,
  response: takeBackOfferResponse,
  cases: (version) => {
    const tooMany = ruecknahmeangebotAnfordern.encodeRequest(version, {
      ...thousandArticles(version),
      articles: [...thousandArticles(version).articles, { pzn: '99999999', quantity: 1 }],
    });
    const broken = [tooMany, ruecknahmeangebotAnfordern.encodeResponse(version, { id: ID, referenceId: '' })];
    if (version === 1) {
      broken.push(
        ruecknahmeangebotAnfordern.encodeRequest(1, {
          ...thousandArticles(1),
          articles: [{ pzn: '1', quantity: 10000 }],
        }),
      );
    }
    return {
      valid: [ruecknahmeangebotAnfordern.encodeRequest(version, thousandArticles(version))],
      invalid: broken,
    };
  },
});

describe('ruecknahmeangebotAnfordern decoders refuse what the schema refuses', () => {
  const request = ruecknahmeangebotAnfordern.encodeRequest(2, {
    clientSoftwareId: 'Wawi',
    id: ID,
    articles: [{ pzn: '04114918', quantity: 5 }],
  });

  const decode = (xml: string) => ruecknahmeangebotAnfordern.decodeRequest(xml);

  it('checks the quantity range per version', () => {
    expect(decode(request.replace('>5<', '>99999<')).kind).toBe('ok');
    expectInvalid(
      decode(request.replace('>5<', '>99999<').replace('urn:msv3:v2', 'urn:msv3:v1')),
      'ruecknahmeangebot/Artikel[1]/Menge: 99999 is outside 1..9999',
    );
    expectInvalid(decode(request.replace('>5<', '>0<')), 'Artikel[1]/Menge: 0 is outside');
  });

  it('refuses a bad id, PZN, article count and missing parts', () => {
    expectRefusedVariations(decode, request, [
      [ID, 'not-a-uuid', 'ruecknahmeangebot/@Id'],
      ['>4114918<', '>41149-18<', 'Artikel[1]/Pzn'],
      [/<m:Artikel>.*<\/m:Artikel>/, '', 'ruecknahmeangebot/Artikel: missing required element'],
      ['<m:Menge>5</m:Menge>', '', 'Artikel[1]/Menge: missing required element'],
    ]);
    expectInvalid(
      decode(
        ruecknahmeangebotAnfordern.encodeRequest(2, {
          ...thousandArticles(2),
          articles: [...thousandArticles(2).articles, { pzn: '1', quantity: 1 }],
        }),
      ),
      'ruecknahmeangebot/Artikel: 1001 elements, at most 1000',
    );
  });

  it('refuses an empty or too long reference id', () => {
    const response = ruecknahmeangebotAnfordern.encodeResponse(1, { id: ID, referenceId: 'R1' });
    expectRefusedVariations((xml) => ruecknahmeangebotAnfordern.decodeResponse(xml), response, [
      ['>R1<', '><', 'return/ReferenzId: length 0'],
      ['>R1<', `>${'R'.repeat(81)}<`, 'return/ReferenzId: length 81'],
    ]);
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeResponse(response, 2),
      'expected an MSV3 v2 message, found v1',
    );
  });
});
