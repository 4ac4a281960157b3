import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { isLieferscheinnummer } from '../msv3/operations/extra-fields.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import type { RetoureGrund, ReturnPosition } from '../msv3/operations/retourenavis.js';
import { retourenavisAnfragen } from '../msv3/operations/retourenavis-anfragen.js';
import { retourenavisAnkuendigen } from '../msv3/operations/retourenavis-ankuendigen.js';
import { ruecknahmeangebotAnfordern } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { SCENARIO_PZNS } from './scenarios.js';
import {
  CLIENT_ID,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';

const clock = manualClock();
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock });
});
afterAll(() => sandbox.close());

let customerNo = 0;

/** A fresh customer who received 4 × 04114918 and 2 × the cold-chain article on one delivery note. */
async function customerWithDelivery(): Promise<{ user: string; note: string }> {
  const user = `apoRetoure${++customerNo}`;
  await sandbox.ok(
    bestellen,
    orderRequest(
      subOrder([
        ['04114918', 4],
        [SCENARIO_PZNS.TOUR_DEVIATION.pzn, 2],
      ]),
    ),
    { username: user },
  );
  const notices = (
    await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username: user })
  ).notices;
  // The cold-chain article travels with a later tour; the ordinary one is on the first note.
  return { user, note: notices[0]!.deliveryNoteNumber };
}

const SHORT = SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn;

/** A fresh customer whose note delivered 1 × the shortage article and reports 1 more as Fehlmenge. */
async function customerWithShortage(): Promise<{ user: string; note: string }> {
  const user = `apoFehlmenge${++customerNo}`;
  await sandbox.ok(bestellen, orderRequest(subOrder([[SHORT, 2]])), { username: user });
  const [notice] = (
    await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username: user })
  ).notices;
  const line = notice!.lines.find((l) => l.pzn === SHORT)!;
  expect(line.delivered.reduce((sum, d) => sum + d.quantity, 0)).toBe(1);
  expect(line.shortages.reduce((sum, d) => sum + d.quantity, 0)).toBe(1);
  return { user, note: notice!.deliveryNoteNumber };
}

const position = (
  positionRef: number,
  note: string,
  pzn: string,
  quantity: number,
  reason: RetoureGrund = 'Bestellfehler',
): ReturnPosition => ({ positionRef, deliveryNoteNumber: note, pzn, quantity, reason });

const enquire = (user: string, positions: ReturnPosition[]) =>
  sandbox.ok(
    retourenavisAnfragen,
    { clientSoftwareId: CLIENT_ID, enquiry: { id: uuid(), supportId: 816, positions } },
    { username: user },
  );
const announce = (user: string, positions: ReturnPosition[], id = uuid()) =>
  sandbox.ok(
    retourenavisAnkuendigen,
    { clientSoftwareId: CLIENT_ID, announcement: { id, supportId: 817, positions } },
    { username: user },
  );

describe('retourenavisAnfragen (non-binding enquiry)', () => {
  it('gives each position a verdict', async () => {
    const { user, note } = await customerWithDelivery();
    const answer = await enquire(user, [
      position(1, 'LS19990101999999', '04114918', 1),
      position(2, note, '01234567', 1),
      position(3, note, '04114918', 5),
      position(4, note, '04114918', 1, 'Bestellfehler'),
      position(5, note, '04114918', 1, 'VerfallZuKurz'),
      position(6, note, '04114918', 1, 'BerechnetNichtGeliefert'),
    ]);
    expect(answer.answer?.positions.map((p) => [p.positionRef, p.verdict])).toEqual([
      [1, 'LieferscheinnummerUnbekannt'],
      [2, 'PznInLieferscheinnummerNichtEnthalten'],
      [3, 'MengeUeberschritten'],
      [4, 'RetoureAkzeptiert'],
      [5, 'RetoureAkzeptiertRueckspracheNoetig'],
      [6, 'RetoureAkzeptiertKeineRuecksendungNoetig'],
    ]);
    expect(answer.answer).toMatchObject({ supportId: 816 });
  });

  it('counts the positions of one request together: 4 delivered, 3 + 2 claimed', async () => {
    const { user, note } = await customerWithDelivery();
    const answer = await enquire(user, [
      position(1, note, '04114918', 3),
      position(2, note, '04114918', 2, 'Beschaedigt'),
    ]);
    expect(answer.answer?.positions.map((p) => p.verdict)).toEqual([
      'RetoureAkzeptiert',
      'MengeUeberschritten',
    ]);
  });

  it('does not take cold-chain goods back for an ordering mistake', async () => {
    const { user } = await customerWithDelivery();
    const notes = (
      await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username: user })
    ).notices;
    const coldNote = notes.find((n) => n.lines.some((l) => l.pzn === SCENARIO_PZNS.TOUR_DEVIATION.pzn))!;
    const answer = await enquire(user, [
      position(1, coldNote.deliveryNoteNumber, SCENARIO_PZNS.TOUR_DEVIATION.pzn, 1, 'Bestellfehler'),
      position(2, coldNote.deliveryNoteNumber, SCENARIO_PZNS.TOUR_DEVIATION.pzn, 1, 'Beschaedigt'),
    ]);
    expect(answer.answer?.positions.map((p) => p.verdict)).toEqual([
      'KeineRuecknahme',
      'RetoureAkzeptiertRueckspracheNoetig',
    ]);
  });

  it('books nothing: the same enquiry twice gets the same verdicts', async () => {
    const { user, note } = await customerWithDelivery();
    const first = await enquire(user, [position(1, note, '04114918', 4)]);
    const second = await enquire(user, [position(1, note, '04114918', 4)]);
    expect(second.answer?.positions[0]?.verdict).toBe(first.answer?.positions[0]?.verdict);
    expect(first.answer?.positions[0]?.verdict).toBe('RetoureAkzeptiert');
  });

  it('refuses a return after the 14-day return period', async () => {
    const ownClock = manualClock();
    const own = await startSandbox({ clock: ownClock });
    try {
      await own.ok(bestellen, orderRequest(subOrder([['04114918', 2]])));
      const [notice] = (await own.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID })).notices;
      const ask = async () =>
        (
          await own.ok(retourenavisAnfragen, {
            clientSoftwareId: CLIENT_ID,
            enquiry: {
              id: uuid(),
              supportId: 1,
              positions: [position(1, notice!.deliveryNoteNumber, '04114918', 1)],
            },
          })
        ).answer?.positions[0]?.verdict;
      ownClock.advance(14 * 86_400_000);
      expect(await ask()).toBe('RetoureAkzeptiert');
      ownClock.advance(86_400_000);
      expect(await ask()).toBe('RueckgabefristUeberschritten');
    } finally {
      await own.close();
    }
  });

  it('answers duplicate PosRefIDs and an empty enquiry with a ValidationFault', async () => {
    const { user, note } = await customerWithDelivery();
    const duplicate = await sandbox.call(
      retourenavisAnfragen,
      {
        clientSoftwareId: CLIENT_ID,
        enquiry: {
          id: uuid(),
          supportId: 1,
          positions: [position(1, note, '04114918', 1), position(1, note, '04114918', 1)],
        },
      },
      { username: user },
    );
    expect(!duplicate.ok && duplicate.error).toMatchObject({ fault: { kind: 'ValidationFault' } });
    const empty = await sandbox.call(
      retourenavisAnfragen,
      { clientSoftwareId: CLIENT_ID },
      { username: user },
    );
    expect(!empty.ok && empty.error).toMatchObject({ fault: { kind: 'ValidationFault' } });
  });
});

describe('shortage units (Fehlmenge) are not returnable goods', () => {
  const GOODS_REASONS: RetoureGrund[] = ['Bestellfehler', 'Beschaedigt', 'VerfallZuKurz', 'ZuvielGeliefert'];

  it('answers an enquiry for more than the delivered units with MengeUeberschritten for every goods reason', async () => {
    const { user, note } = await customerWithShortage();
    for (const reason of GOODS_REASONS) {
      const answer = await enquire(user, [position(1, note, SHORT, 2, reason)]);
      expect([reason, answer.answer?.positions[0]?.verdict]).toEqual([reason, 'MengeUeberschritten']);
      const one = await enquire(user, [position(1, note, SHORT, 1, reason)]);
      expect([reason, one.answer?.positions[0]?.verdict]).toEqual([
        reason,
        expect.stringMatching(/^RetoureAkzeptiert/),
      ]);
    }
  });

  it('lets BerechnetNichtGeliefert (invoiced, not delivered) claim the shortage units, and no more', async () => {
    const { user, note } = await customerWithShortage();
    const answer = await enquire(user, [
      position(1, note, SHORT, 2, 'BerechnetNichtGeliefert'),
      position(2, note, SHORT, 1, 'BerechnetNichtGeliefert'),
    ]);
    expect(answer.answer?.positions.map((p) => p.verdict)).toEqual([
      'RetoureAkzeptiertKeineRuecksendungNoetig',
      'MengeUeberschritten',
    ]);
  });

  it('refuses an announcement of a shortage unit as damaged goods and books nothing for it', async () => {
    const { user, note } = await customerWithShortage();
    const refused = await announce(user, [position(1, note, SHORT, 2, 'Beschaedigt')]);
    expect(refused.answer?.portions.map((p) => [p.verdict, p.wholesalerReference])).toEqual([
      ['MengeUeberschritten', undefined],
    ]);
    const accepted = await announce(user, [position(1, note, SHORT, 1, 'Beschaedigt')]);
    expect(accepted.answer?.portions.map((p) => p.verdict)).toEqual(['RetoureAkzeptiert']);
  });

  it('keeps the cap across announcements: the delivered unit goes back once, the shortage unit is claimed once', async () => {
    const { user, note } = await customerWithShortage();
    expect(
      (await announce(user, [position(1, note, SHORT, 1, 'Beschaedigt')])).answer?.portions[0]?.verdict,
    ).toBe('RetoureAkzeptiert');
    expect(
      (await announce(user, [position(1, note, SHORT, 1, 'Bestellfehler')])).answer?.portions[0]?.verdict,
    ).toBe('MengeUeberschritten');
    // What is left is the shortage unit: only a not-delivered claim can take it.
    const left = await enquire(user, [
      position(1, note, SHORT, 1, 'ZuvielGeliefert'),
      position(2, note, SHORT, 1, 'BerechnetNichtGeliefert'),
    ]);
    expect(left.answer?.positions.map((p) => p.verdict)).toEqual([
      'MengeUeberschritten',
      'RetoureAkzeptiertKeineRuecksendungNoetig',
    ]);
    expect(
      (await announce(user, [position(1, note, SHORT, 1, 'BerechnetNichtGeliefert')])).answer?.portions[0]
        ?.verdict,
    ).toBe('RetoureAkzeptiertKeineRuecksendungNoetig');
    const nothingLeft = await enquire(user, [position(1, note, SHORT, 1, 'BerechnetNichtGeliefert')]);
    expect(nothingLeft.answer?.positions[0]?.verdict).toBe('MengeUeberschritten');
  });

  it('counts a not-delivered claim against the shortage first, so the delivered unit can still go back', async () => {
    const { user, note } = await customerWithShortage();
    const both = await announce(user, [
      position(1, note, SHORT, 1, 'BerechnetNichtGeliefert'),
      position(2, note, SHORT, 1, 'Beschaedigt'),
    ]);
    expect(both.answer?.portions.map((p) => [p.verdict, p.positions.map((x) => x.positionRef)])).toEqual([
      ['RetoureAkzeptiertKeineRuecksendungNoetig', [1]],
      ['RetoureAkzeptiert', [2]],
    ]);
    // Both units are now taken: neither reason fits another one.
    const after = await enquire(user, [
      position(1, note, SHORT, 1, 'BerechnetNichtGeliefert'),
      position(2, note, SHORT, 1, 'Beschaedigt'),
    ]);
    expect(after.answer?.positions.map((p) => p.verdict)).toEqual([
      'MengeUeberschritten',
      'MengeUeberschritten',
    ]);
  });

  it('refuses goods after a not-delivered claim has taken every unit, within one request', async () => {
    const { user, note } = await customerWithShortage();
    const answer = await enquire(user, [
      position(1, note, SHORT, 2, 'BerechnetNichtGeliefert'),
      position(2, note, SHORT, 1, 'Beschaedigt'),
    ]);
    expect(answer.answer?.positions.map((p) => p.verdict)).toEqual([
      'RetoureAkzeptiertKeineRuecksendungNoetig',
      'MengeUeberschritten',
    ]);
  });
});

describe('retourenavisAnkuendigen (binding announcement)', () => {
  it('splits the positions into one portion per verdict; accepted portions get a reference, a slip and a pick-up', async () => {
    const { user, note } = await customerWithDelivery();
    const response = await announce(user, [
      position(3, note, '04114918', 1, 'Beschaedigt'),
      position(1, note, '04114918', 1, 'Bestellfehler'),
      position(2, note, '01234567', 1),
      position(4, 'LS19990101999999', '04114918', 1),
      position(5, note, '04114918', 1, 'VerfallZuKurz'),
    ]);
    const portions = response.answer!.portions;
    expect(portions.map((p) => [p.verdict, p.positions.map((x) => x.positionRef)])).toEqual([
      ['RetoureAkzeptiert', [1, 3]],
      ['PznInLieferscheinnummerNichtEnthalten', [2]],
      ['LieferscheinnummerUnbekannt', [4]],
      ['RetoureAkzeptiertRueckspracheNoetig', [5]],
    ]);
    const [accepted, refused] = portions;
    expect(accepted).toMatchObject({
      wholesalerReference: expect.stringMatching(/^RET-\d{6}$/),
      documentId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      pickupTime: '2026-01-05T14:00:00+01:00',
      tour: 'Mittagstour',
    });
    expect(isLieferscheinnummer(accepted!.wholesalerReference!)).toBe(true);
    expect(portions[3]?.wholesalerReference).not.toBe(accepted?.wholesalerReference);
    for (const field of ['wholesalerReference', 'documentId', 'pickupTime', 'tour'] as const) {
      expect(refused?.[field]).toBeUndefined();
    }
  });

  it('books accepted units: a second announcement of the same units exceeds the delivered quantity', async () => {
    const { user, note } = await customerWithDelivery();
    await announce(user, [position(1, note, '04114918', 3)]);
    const again = await announce(user, [position(1, note, '04114918', 2)]);
    expect(again.answer?.portions.map((p) => p.verdict)).toEqual(['MengeUeberschritten']);
    const enquiry = await enquire(user, [position(1, note, '04114918', 1)]);
    expect(enquiry.answer?.positions[0]?.verdict).toBe('RetoureAkzeptiert');
  });

  it('answers a repeated announcement (same ID) with the first answer and books nothing twice', async () => {
    const { user, note } = await customerWithDelivery();
    const id = uuid();
    const first = await announce(user, [position(1, note, '04114918', 4)], id);
    const second = await announce(user, [position(1, note, '04114918', 4)], id);
    expect(second).toEqual(first);
    expect(first.answer?.portions[0]?.verdict).toBe('RetoureAkzeptiert');
  });
});

describe('ruecknahmeangebotAnfordern', () => {
  const offer = (
    username: string,
    articles: { pzn: string; quantity: number }[],
    id = uuid(),
    version: 1 | 2 = 2,
  ) =>
    sandbox.call(
      ruecknahmeangebotAnfordern,
      { clientSoftwareId: CLIENT_ID, id, articles },
      { username, version },
    );

  it('answers with a reference id, the same one for a repeated request', async () => {
    const id = uuid();
    const first = await offer('apoRna1', [{ pzn: '04114918', quantity: 3 }], id);
    expect(first).toMatchObject({
      ok: true,
      value: { id, referenceId: expect.stringMatching(/^RNA-2026-\d{6}$/) },
    });
    const again = await offer('apoRna1', [{ pzn: '04114918', quantity: 3 }], id);
    expect(again.ok && again.value).toEqual(first.ok && first.value);
    const v1 = await offer('apoRna1', [{ pzn: '04114918', quantity: 3 }], uuid(), 1);
    expect(v1.ok && v1.value.referenceId).not.toBe(first.ok && first.value.referenceId);
  });

  it('answers AuthorizationFaultInfo when take-back offers are not agreed (noreturns)', async () => {
    const result = await offer('apoRna2noreturns', [{ pzn: '04114918', quantity: 3 }]);
    expect(!result.ok && result.error).toMatchObject({
      fault: { kind: 'AuthorizationFault', errorCode: 'A001' },
    });
    const v1 = await offer('apoRna2noreturns', [{ pzn: '04114918', quantity: 3 }], uuid(), 1);
    expect(!v1.ok && v1.error).toMatchObject({ fault: { kind: 'AuthorizationFault' } });
  });

  it('answers duplicate PZNs with a ValidationFault', async () => {
    const result = await offer('apoRna3', [
      { pzn: '04114918', quantity: 3 },
      { pzn: '04114918', quantity: 1 },
    ]);
    expect(!result.ok && result.error).toMatchObject({ fault: { kind: 'ValidationFault' } });
  });
});
