import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_PDFTOTEXT, pdfText } from '../../test/pdf.js';
import { manualClock } from '../lib/clock.js';
import { bestellen } from '../msv3/operations/bestellen.js';
import { dokumentAbfragen } from '../msv3/operations/dokument-abfragen.js';
import { lieferavisAbfrageNeu } from '../msv3/operations/lieferavis-abfrage-neu.js';
import { retourenavisAnkuendigen } from '../msv3/operations/retourenavis-ankuendigen.js';
import { SCENARIO_PZNS } from './scenarios.js';
import {
  CLIENT_ID,
  CUSTOMER,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock: manualClock(), wholesalerName: 'Großhandel Süd' });
});
afterAll(async () => {
  await sandbox.close();
});

const fetchDocument = (documentId: string | undefined, username = CUSTOMER) =>
  sandbox.call(
    dokumentAbfragen,
    { clientSoftwareId: CLIENT_ID, ...(documentId ? { documentId } : {}) },
    { username },
  );

describe('dokumentAbfragen', () => {
  it('delivers a real PDF delivery note for a notice’s DokumentId', async () => {
    await sandbox.ok(
      bestellen,
      orderRequest(
        subOrder([
          ['04114918', 3],
          [SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn, 4],
        ]),
      ),
    );
    const [notice] = (await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID })).notices;
    const result = await fetchDocument(notice!.documentId);
    expect(result.ok).toBe(true);
    const document = result.ok ? result.value.document! : undefined;
    expect(document?.documentId).toBe(notice!.documentId);
    expect(document?.data.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(document?.data.length).toBeLessThan(2 * 1024 * 1024);
    // The same document twice is byte-for-byte the same.
    const again = await fetchDocument(notice!.documentId);
    expect(again.ok && again.value.document?.data.equals(document!.data)).toBe(true);

    if (!HAVE_PDFTOTEXT) return;
    const text = pdfText(document!.data)!;
    expect(text).toContain('Lieferschein');
    expect(text).toContain(notice!.deliveryNoteNumber);
    expect(text).toContain(notice!.barcodeReference);
    expect(text).toContain('Großhandel Süd');
    expect(text).toContain(CUSTOMER);
    expect(text).toContain('04114918');
    expect(text).toContain(notice!.lines[0]!.delivered[0]!.batch!);
    expect(text).toContain('Fehlmenge');
    expect(text).toContain('Packstück');
  });

  it('delivers a real PDF return slip for an accepted portion’s DokumentID', async () => {
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 3]])), { username: 'apoSlip' });
    const [notice] = (
      await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username: 'apoSlip' })
    ).notices;
    const answer = await sandbox.ok(
      retourenavisAnkuendigen,
      {
        clientSoftwareId: CLIENT_ID,
        announcement: {
          id: uuid(),
          supportId: 42,
          positions: [
            {
              positionRef: 2,
              deliveryNoteNumber: notice!.deliveryNoteNumber,
              pzn: '04114918',
              quantity: 1,
              reason: 'Beschaedigt',
            },
            {
              positionRef: 1,
              deliveryNoteNumber: notice!.deliveryNoteNumber,
              pzn: '04114918',
              quantity: 1,
              reason: 'Bestellfehler',
            },
          ],
        },
      },
      { username: 'apoSlip' },
    );
    const portion = answer.answer!.portions[0]!;
    const result = await fetchDocument(portion.documentId, 'apoSlip');
    const data = result.ok ? result.value.document!.data : Buffer.alloc(0);
    expect(data.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    if (!HAVE_PDFTOTEXT) return;
    const text = pdfText(data)!;
    expect(text).toContain('Retourenschein');
    expect(text).toContain(portion.wholesalerReference!);
    expect(text).toContain('Beschädigt');
    expect(text).toContain('Mittagstour');
    expect(text.indexOf('Bestellfehler')).toBeLessThan(text.indexOf('Beschädigt'));
  });

  it('answers an unknown id, another customer’s id and a request without id with a ValidationFault', async () => {
    await sandbox.ok(bestellen, orderRequest(subOrder([['04114918', 1]])), { username: 'apoDoc' });
    const [notice] = (
      await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username: 'apoDoc' })
    ).notices;
    for (const [id, user] of [
      [uuid(), 'apoDoc'],
      [notice!.documentId!, 'apoOther'],
      [undefined, 'apoDoc'],
    ] as const) {
      const result = await fetchDocument(id, user);
      expect(!result.ok && result.error).toMatchObject({
        reason: 'soap_fault',
        fault: { kind: 'ValidationFault' },
      });
    }
  });

  it('renders long delivery notes over several pages', async () => {
    const lines = Array.from({ length: 120 }, (_, i): [string, number] => [
      String(1_000_000 + i * 7).padStart(8, '0'),
      1,
    ]);
    await sandbox.ok(bestellen, orderRequest(subOrder(lines)), { username: 'apoLong' });
    const [notice] = (
      await sandbox.ok(lieferavisAbfrageNeu, { clientSoftwareId: CLIENT_ID }, { username: 'apoLong' })
    ).notices;
    const result = await fetchDocument(notice!.documentId, 'apoLong');
    const data = result.ok ? result.value.document!.data : Buffer.alloc(0);
    expect(data.toString('latin1').match(/\/Type \/Page\b/g)?.length).toBeGreaterThan(1);
    if (!HAVE_PDFTOTEXT) return;
    expect(pdfText(data)!).toContain(lines.at(-1)![0]);
  });
});
