import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ordersOfPlan, planSplit, type WholesalerOffer } from './split-plan.js';

const WHOLESALERS = ['phoenix', 'alliance', 'sanacorp', 'noweda'];
const PZNS = ['04114918', '09990300', '09990317', '09990323', '01234562'];

const linesArb = fc.uniqueArray(
  fc.record({ pzn: fc.constantFrom(...PZNS), quantity: fc.integer({ min: 1, max: 50 }) }),
  { selector: (line) => line.pzn, minLength: 1, maxLength: PZNS.length },
);

const offersArb = fc.shuffledSubarray(WHOLESALERS, { minLength: 1 }).chain((preference) =>
  fc.tuple(
    ...preference.map((wholesaler) =>
      fc.record({
        wholesaler: fc.constant(wholesaler),
        units: fc.option(
          fc
            .array(fc.tuple(fc.constantFrom(...PZNS), fc.integer({ min: 0, max: 60 })))
            .map((entries) => new Map(entries)),
          { nil: null, freq: 5 },
        ),
      }),
    ),
  ),
) as fc.Arbitrary<WholesalerOffer[]>;

const unitsAt = (offer: WholesalerOffer, pzn: string) => offer.units?.get(pzn) ?? 0;

describe('planning a split order', () => {
  it('never allocates more than requested, and accounts for every unit', () => {
    fc.assert(
      fc.property(linesArb, offersArb, (lines, offers) => {
        for (const line of planSplit(lines, offers)) {
          const planned = line.allocations.reduce((sum, a) => sum + a.quantity, 0);
          expect(planned + line.undeliverable).toBe(line.quantity);
          expect(planned).toBeLessThanOrEqual(line.quantity);
          for (const a of line.allocations) expect(a.quantity).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('never gives a wholesaler more than it delivers, nor twice the same line', () => {
    fc.assert(
      fc.property(linesArb, offersArb, (lines, offers) => {
        for (const line of planSplit(lines, offers)) {
          const names = line.allocations.map((a) => a.wholesaler);
          expect(new Set(names).size).toBe(names.length);
          for (const a of line.allocations) {
            const offer = offers.find((o) => o.wholesaler === a.wholesaler)!;
            expect(a.quantity).toBeLessThanOrEqual(unitsAt(offer, line.pzn));
          }
        }
      }),
    );
  });

  it('gives the whole line to the first wholesaler, in preference order, that delivers all of it', () => {
    fc.assert(
      fc.property(linesArb, offersArb, (lines, offers) => {
        const plan = planSplit(lines, offers);
        lines.forEach((line, i) => {
          const whole = offers.find((o) => unitsAt(o, line.pzn) >= line.quantity);
          if (whole === undefined) return;
          expect(plan[i]!.allocations).toEqual([{ wholesaler: whole.wholesaler, quantity: line.quantity }]);
        });
      }),
    );
  });

  it('otherwise takes what each delivers in preference order, reporting only what nobody has', () => {
    fc.assert(
      fc.property(linesArb, offersArb, (lines, offers) => {
        const plan = planSplit(lines, offers);
        lines.forEach((line, i) => {
          if (offers.some((o) => unitsAt(o, line.pzn) >= line.quantity)) return;
          const total = offers.reduce((sum, o) => sum + unitsAt(o, line.pzn), 0);
          expect(plan[i]!.undeliverable).toBe(Math.max(0, line.quantity - total));
          // Allocations follow the preference order, each wholesaler giving all it has but the last.
          const order = plan[i]!.allocations.map((a) =>
            offers.findIndex((o) => o.wholesaler === a.wholesaler),
          );
          expect([...order].sort((a, b) => a - b)).toEqual(order);
          plan[i]!.allocations.slice(0, -1).forEach((a) => {
            const offer = offers.find((o) => o.wholesaler === a.wholesaler)!;
            expect(a.quantity).toBe(unitsAt(offer, line.pzn));
          });
        });
      }),
    );
  });

  it('gives the same plan for the same answers, and one order per wholesaler that got lines', () => {
    fc.assert(
      fc.property(linesArb, offersArb, (lines, offers) => {
        const plan = planSplit(lines, offers);
        expect(planSplit(lines, offers)).toEqual(plan);
        const preference = offers.map((o) => o.wholesaler);
        const orders = ordersOfPlan(plan, preference);
        const named = orders.map((o) => o.wholesaler);
        expect(preference.filter((w) => named.includes(w))).toEqual(named);
        const perOrder = orders.flatMap((o) => o.lines).reduce((sum, l) => sum + l.quantity, 0);
        const perLine = plan.flatMap((l) => l.allocations).reduce((sum, a) => sum + a.quantity, 0);
        expect(perOrder).toBe(perLine);
      }),
    );
  });

  it('splits the sandbox article short everywhere as the sandbox documents it', () => {
    const offers = [
      { wholesaler: 'phoenix', units: new Map([['09990323', 3]]) },
      { wholesaler: 'alliance', units: new Map([['09990323', 4]]) },
      { wholesaler: 'sanacorp', units: new Map([['09990323', 5]]) },
    ];
    expect(planSplit([{ pzn: '09990323', quantity: 10 }], offers)).toEqual([
      {
        pzn: '09990323',
        quantity: 10,
        allocations: [
          { wholesaler: 'phoenix', quantity: 3 },
          { wholesaler: 'alliance', quantity: 4 },
          { wholesaler: 'sanacorp', quantity: 3 },
        ],
        undeliverable: 0,
      },
    ]);
    expect(planSplit([{ pzn: '09990323', quantity: 20 }], offers)[0]!.undeliverable).toBe(8);
  });
});
