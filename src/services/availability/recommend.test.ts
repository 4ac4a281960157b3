import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { type Offer, recommend } from './recommend.js';

const time = fc
  .integer({ min: 6, max: 22 })
  .chain((hour) => fc.constantFrom(`2026-03-18T${String(hour).padStart(2, '0')}:30:00`, null));

/** Up to 10 wholesalers w0…w9 in preference order, each answering with some units or failing. */
const offersFor = (quantity: number) =>
  fc.integer({ min: 1, max: 10 }).chain((count) =>
    fc.tuple(
      ...Array.from({ length: count }, (_, i) =>
        fc.oneof(
          fc.record({
            wholesaler: fc.constant(`w${i}`),
            answered: fc.constant(true as const),
            units: fc.integer({ min: 0, max: quantity }),
            earliest: time,
          }),
          fc.record({
            wholesaler: fc.constant(`w${i}`),
            answered: fc.constant(false as const),
            timedOut: fc.boolean(),
          }),
        ),
      ),
    ),
  );

const cases = fc
  .integer({ min: 1, max: 20 })
  .chain((quantity) => fc.tuple(fc.constant(quantity), offersFor(quantity)));

const answered = (offers: readonly Offer[]) =>
  offers.filter((o): o is Extract<Offer, { answered: true }> => o.answered);

describe('recommend', () => {
  test.prop([cases])('never recommends a wholesaler that failed or timed out', ([quantity, offers]) => {
    const { wholesaler } = recommend(quantity, offers);
    if (wholesaler !== null) expect(answered(offers).map((o) => o.wholesaler)).toContain(wholesaler);
  });

  test.prop([cases])(
    'takes the first wholesaler in preference order that delivers all',
    ([quantity, offers]) => {
      const full = answered(offers).find((o) => o.units === quantity);
      fc.pre(full !== undefined);
      expect(recommend(quantity, offers)).toMatchObject({
        wholesaler: full!.wholesaler,
        units: quantity,
        delivers_all: true,
      });
    },
  );

  test.prop([cases])('else the most units, then the earliest, then the preferred', ([quantity, offers]) => {
    const replies = answered(offers);
    fc.pre(replies.every((o) => o.units < quantity));
    const pick = recommend(quantity, offers);
    const most = Math.max(0, ...replies.map((o) => o.units));
    if (most === 0) {
      expect(pick).toMatchObject({ wholesaler: null, units: 0, estimated_at: null, delivers_all: false });
      return;
    }
    const tied = replies.filter((o) => o.units === most);
    const times = tied.flatMap((o) => (o.earliest === null ? [] : [o.earliest])).sort();
    const soonest = times[0] ?? null;
    const expected = tied.find((o) => o.earliest === soonest)!;
    expect(pick).toMatchObject({ wholesaler: expected.wholesaler, units: most, estimated_at: soonest });
  });

  test.prop([cases])('says why in one sentence that names the pick', ([quantity, offers]) => {
    const { wholesaler, reason } = recommend(quantity, offers);
    expect(reason).toMatch(/^[A-Za-z].*\.$/);
    // A date such as 18.03. is no sentence end.
    expect(reason.replace(/\d\d\.\d\d\. /g, '')).not.toContain('. ');
    if (wholesaler !== null) expect(reason).toContain(wholesaler);
  });

  it('speaks as a pharmacist would read it', () => {
    const at = (wholesaler: string, units: number, earliest: string | null = null): Offer => ({
      wholesaler,
      answered: true,
      units,
      earliest,
    });
    expect(recommend(10, [at('phoenix', 0), at('alliance', 10, '2026-03-18T14:30:00')]).reason).toBe(
      'phoenix cannot deliver it; alliance delivers all 10 on 18.03. at 14:30.',
    );
    expect(
      recommend(10, [
        at('phoenix', 3),
        { wholesaler: 'noweda', answered: false, timedOut: true },
        at('sanacorp', 5, '2026-03-18T18:00:00'),
      ]).reason,
    ).toBe(
      'No wholesaler delivers all 10; sanacorp delivers the most, 5 of 10 on 18.03. at 18:00 (phoenix delivers only 3 of 10, noweda did not answer in time).',
    );
    expect(recommend(2, [{ wholesaler: 'noweda', answered: false, timedOut: false }]).reason).toBe(
      'No wholesaler answered (noweda answered with an error).',
    );
  });
});
