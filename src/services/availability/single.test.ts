import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validPzns } from '../../../test/pzns.js';
import { ApiError } from '../../core/errors.js';
import type { Msv3Client } from '../../msv3/client.js';
import type {
  AvailabilityArticle,
  AvailabilityRequest,
} from '../../msv3/operations/verfuegbarkeit-anfragen.js';
import type { UpstreamDeps } from '../../wholesalers/call.js';
import type { ResolvedWholesaler } from '../../wholesalers/registry.js';
import { availabilityAt, uniquePzns } from './single.js';

const WHOLESALER: ResolvedWholesaler = {
  id: 'own-order',
  name: 'Own order',
  version: 2,
  route: 'live',
  endpoint: { baseUrl: 'http://127.0.0.1:9/msv3/v2.0', version: 2 },
  custom: null,
} as unknown as ResolvedWholesaler;

/** Deps whose wholesaler answers the asked articles through `reorder` (each with its quantity in stock). */
function depsAnswering(reorder: (asked: AvailabilityArticle[]) => AvailabilityArticle[]): UpstreamDeps {
  const client: Msv3Client = {
    async call(_operation, _endpoint, _credentials, request) {
      const asked = (request as AvailabilityRequest).articles.map(
        (article): AvailabilityArticle => ({
          requestedPzn: article.pzn,
          requestedQuantity: article.quantity,
          parts: [
            {
              quantity: article.quantity,
              type: 'Normal',
              deliveryTime: '2026-11-30T08:00:00+01:00',
              tour: 'T1',
              defectReason: 'KeineAngabe',
              tourDeviation: false,
            },
          ],
        }),
      );
      const value = { id: 'x', responseType: 'Spezifisch', articles: reorder(asked) };
      return { ok: true, value, latencyMs: 1, status: 200 } as never;
    },
  };
  return { client, customClient: client, clientSoftwareId: 'test', registry: {} } as unknown as UpstreamDeps;
}

// PZNs with a right check digit, and one with a wrong one, which is not asked.
const PZNS = validPzns(5);
const EXTRA = PZNS[4]!;
const WRONG = `${PZNS[3]!.slice(0, 7)}${(Number(PZNS[3]![7]) + 1) % 10}`;
const input = (pzns: string[]) => ({
  wholesaler: WHOLESALER.id,
  items: pzns.map((pzn, i) => ({ pzn, quantity: i + 1 })),
});
const ask = (deps: UpstreamDeps, pzns: string[]) =>
  availabilityAt(deps, WHOLESALER, { username: 'u', password: 'p' }, input(pzns), pzns);

describe('availabilityAt', () => {
  it('answers in request order when the wholesaler answers in its own order', async () => {
    const pzns = [PZNS[0]!, WRONG, PZNS[1]!, PZNS[2]!, PZNS[3]!];
    for (const reorder of [
      (a: AvailabilityArticle[]) => a,
      (a: AvailabilityArticle[]) => [...a].reverse(),
      (a: AvailabilityArticle[]) => [a[2]!, a[0]!, a[3]!, a[1]!],
    ]) {
      const result = await ask(depsAnswering(reorder), pzns);
      expect(result.items.map((item) => [item.pzn, item.quantity_requested])).toEqual(
        pzns.map((pzn, i) => [pzn, i + 1]),
      );
      expect(result.items.map((item) => item.deliveries[0]?.quantity ?? null)).toEqual([1, null, 3, 4, 5]);
      expect(result.items[1]!.invalid_pzn).not.toBeNull();
    }
  });

  it('takes the last entry of a PZN the wholesaler lists twice, and ignores entries not asked for', async () => {
    const deps = depsAnswering((a) => [
      { ...a[0]!, requestedQuantity: 99 },
      a[1]!,
      { ...a[1]!, requestedPzn: EXTRA },
      a[0]!,
    ]);
    const result = await ask(deps, [PZNS[0]!, PZNS[1]!]);
    expect(result.items.map((item) => item.quantity_requested)).toEqual([1, 2]);
  });

  it('refuses an answer that has no entry for an asked PZN, naming the item', async () => {
    const deps = depsAnswering((a) => [a[0]!, { ...a[1]!, requestedPzn: EXTRA }]);
    await expect(ask(deps, [PZNS[0]!, PZNS[1]!])).rejects.toMatchObject({
      kind: 'wholesaler_bad_response',
      message: expect.stringContaining(`items[1].pzn ${PZNS[1]}`),
    });
  });
});

describe('PZNs asked once', () => {
  const pznText = fc.oneof(
    fc.stringMatching(/^[0-9]{1,8}$/),
    fc.constantFrom('123', '00000123', '0000123', '04114918', '4114918', '1e3', '00001000', ' 12', '12'),
    fc.stringMatching(/^[0-9]{9,20}$/),
  );

  it('refuses exactly the lists in which two padded PZNs are the same text, naming the first repeat', () => {
    fc.assert(
      fc.property(fc.array(pznText, { maxLength: 60 }), (raw) => {
        const padded = raw.map((text) => text.padStart(8, '0'));
        const repeatAt = padded.findIndex((pzn, i) => padded.indexOf(pzn) < i);
        let refused: ApiError | undefined;
        try {
          expect(uniquePzns(raw, 'items', '.pzn', 'w')).toEqual(padded);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          refused = error;
        }
        if (repeatAt === -1) expect(refused).toBeUndefined();
        else {
          const earlier = padded.indexOf(padded[repeatAt]!);
          expect(refused?.message).toContain(`items[${repeatAt}].pzn repeats items[${earlier}].pzn`);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
