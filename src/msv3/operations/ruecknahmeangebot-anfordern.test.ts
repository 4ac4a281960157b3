import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Msv3Version } from '../envelope.js';
import { takeBackOfferRequest, takeBackOfferResponse } from '../test-support/arbitraries/documents.js';
import {
  expectInvalid,
  expectSchemaVerdicts,
  readSample,
  samplesUnavailableReason,
  xsdUnavailableReason,
} from '../test-support/codec-test-kit.js';
import { ruecknahmeangebotAnfordern, type TakeBackOfferRequest } from './ruecknahmeangebot-anfordern.js';

const versions: Msv3Version[] = [1, 2];
const ID = '4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a';

describe.skipIf(samplesUnavailableReason !== null)('ruecknahmeangebotAnfordern shared samples', () => {
  it('decodes the v2 request with its PZN re-padded to 8 digits', () => {
    expect(
      ruecknahmeangebotAnfordern.decodeRequest(readSample('v2/ruecknahmeangebotAnfordern.request.xml')),
    ).toEqual({
      kind: 'ok',
      value: {
        version: 2,
        request: {
          clientSoftwareId: 'ExampleWawi 1.4.2',
          id: ID,
          articles: [{ pzn: '04114918', quantity: 5 }],
        },
      },
    });
  });

  it('decodes the v2 response (a reference id only)', () => {
    expect(
      ruecknahmeangebotAnfordern.decodeResponse(readSample('v2/ruecknahmeangebotAnfordern.response.xml')),
    ).toEqual({
      kind: 'ok',
      value: { id: ID, referenceId: 'RNA-2025-000042' },
    });
  });
});

describe.each(versions)('ruecknahmeangebotAnfordern v%i round trips', (version) => {
  it('decodes every encoded request to the same model', () => {
    fc.assert(
      fc.property(takeBackOfferRequest(version), (request) => {
        const xml = ruecknahmeangebotAnfordern.encodeRequest(version, request);
        expect(ruecknahmeangebotAnfordern.decodeRequest(xml)).toEqual({
          kind: 'ok',
          value: { version, request },
        });
      }),
    );
  });

  it('decodes every encoded response to the same model', () => {
    fc.assert(
      fc.property(takeBackOfferResponse, (response) => {
        const xml = ruecknahmeangebotAnfordern.encodeResponse(version, response);
        expect(ruecknahmeangebotAnfordern.decodeResponse(xml, version)).toEqual({
          kind: 'ok',
          value: response,
        });
      }),
    );
  });
});

const thousandArticles = (version: Msv3Version): TakeBackOfferRequest => ({
  clientSoftwareId: 'Wawi',
  id: ID,
  articles: Array.from({ length: 1000 }, (_, k) => ({
    pzn: String(k + 1).padStart(8, '0'),
    quantity: version === 1 ? 9999 : 99999,
  })),
});

describe.skipIf(xsdUnavailableReason !== null)('ruecknahmeangebotAnfordern against the original XSD', () => {
  it.each(versions)(
    'accepts 150 generated v%i requests and responses, refuses v2 quantities in v1',
    async (version) => {
      const requests = fc
        .sample(takeBackOfferRequest(version), 150)
        .map((r) => ruecknahmeangebotAnfordern.encodeRequest(version, r));
      const responses = fc
        .sample(takeBackOfferResponse, 150)
        .map((r) => ruecknahmeangebotAnfordern.encodeResponse(version, r));
      const tooMany = ruecknahmeangebotAnfordern.encodeRequest(version, {
        ...thousandArticles(version),
        articles: [...thousandArticles(version).articles, { pzn: '99999999', quantity: 1 }],
      });
      const broken = [
        tooMany,
        ruecknahmeangebotAnfordern.encodeResponse(version, { id: ID, referenceId: '' }),
      ];
      if (version === 1) {
        broken.push(
          ruecknahmeangebotAnfordern.encodeRequest(1, {
            ...thousandArticles(1),
            articles: [{ pzn: '1', quantity: 10000 }],
          }),
        );
      }
      const largest = ruecknahmeangebotAnfordern.encodeRequest(version, thousandArticles(version));
      await expectSchemaVerdicts(version, [...requests, ...responses, largest], broken);
    },
  );
});

describe('ruecknahmeangebotAnfordern decoders refuse what the schema refuses', () => {
  const request = ruecknahmeangebotAnfordern.encodeRequest(2, {
    clientSoftwareId: 'Wawi',
    id: ID,
    articles: [{ pzn: '04114918', quantity: 5 }],
  });

  it('checks the quantity range per version', () => {
    expect(ruecknahmeangebotAnfordern.decodeRequest(request.replace('>5<', '>99999<')).kind).toBe('ok');
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(
        request.replace('>5<', '>99999<').replace('urn:msv3:v2', 'urn:msv3:v1'),
      ),
      'ruecknahmeangebot/Artikel[1]/Menge: 99999 is outside 1..9999',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(request.replace('>5<', '>0<')),
      'Artikel[1]/Menge: 0 is outside',
    );
  });

  it('refuses a bad id, PZN, article count and missing parts', () => {
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(request.replace(ID, 'not-a-uuid')),
      'ruecknahmeangebot/@Id',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(request.replace('>4114918<', '>41149-18<')),
      'Artikel[1]/Pzn',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(request.replace(/<m:Artikel>.*<\/m:Artikel>/, '')),
      'ruecknahmeangebot/Artikel: missing required element',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(
        ruecknahmeangebotAnfordern.encodeRequest(2, {
          ...thousandArticles(2),
          articles: [...thousandArticles(2).articles, { pzn: '1', quantity: 1 }],
        }),
      ),
      'ruecknahmeangebot/Artikel: 1001 elements, at most 1000',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeRequest(request.replace('<m:Menge>5</m:Menge>', '')),
      'Artikel[1]/Menge: missing required element',
    );
  });

  it('refuses an empty or too long reference id', () => {
    const response = ruecknahmeangebotAnfordern.encodeResponse(1, { id: ID, referenceId: 'R1' });
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeResponse(response.replace('>R1<', '><')),
      'return/ReferenzId: length 0',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeResponse(response.replace('>R1<', `>${'R'.repeat(81)}<`)),
      'return/ReferenzId: length 81',
    );
    expectInvalid(
      ruecknahmeangebotAnfordern.decodeResponse(response, 2),
      'expected an MSV3 v2 message, found v1',
    );
  });
});
