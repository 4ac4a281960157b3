import PDFDocument from 'pdfkit';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';
import type { RetoureGrund, RetourenAnteilTyp } from '../msv3/operations/retourenavis.js';
import type { ReturnPortion } from '../msv3/operations/retourenavis-ankuendigen.js';
import { articleName } from './catalogue.js';

/**
 * Real PDF documents behind dokumentAbfragen: delivery notes (Lieferschein) and return slips
 * (Retourenschein), A4, German, with pdfkit's standard Helvetica (WinAnsi covers ä ö ü ß – °).
 * Rendering is deterministic for the same input (the creation date is passed in).
 */

export interface Letterhead {
  wholesalerName: string;
  /** The tenant path (`sandbox/phoenix`), '' for the default tenant. */
  tenant: string;
  customerId: string;
  /** The document's date, also written as the PDF's creation date. */
  createdAt: Date;
}

interface Column {
  title: string;
  width: number;
  align?: 'left' | 'right';
}

const MARGIN = 50;
const ROW_HEIGHT = 16;

function collect(doc: PDFKit.PDFDocument): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

function germanDate(isoDate: string): string {
  const [y, m, d] = isoDate.slice(0, 10).split('-');
  return `${d}.${m}.${y}`;
}

function germanDateTime(isoDateTime: string): string {
  return `${germanDate(isoDateTime)}, ${isoDateTime.slice(11, 16)} Uhr`;
}

function newDocument(title: string, head: Letterhead): PDFKit.PDFDocument {
  return new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: {
      Title: title,
      Author: head.wholesalerName,
      Creator: 'msv3-gateway mock',
      CreationDate: head.createdAt,
    },
  });
}

function letterhead(doc: PDFKit.PDFDocument, title: string, head: Letterhead): void {
  doc.font('Helvetica-Bold').fontSize(15).fillColor('black').text(head.wholesalerName, MARGIN, MARGIN);
  doc
    .font('Helvetica')
    .fontSize(8)
    .fillColor('#666666')
    .text(`Sandbox-Großhandel${head.tenant === '' ? '' : ` (Mandant ${head.tenant})`} – kein echter Beleg`);
  doc.moveDown(1.2).font('Helvetica-Bold').fontSize(20).fillColor('black').text(title);
  doc.moveDown(0.5);
}

function facts(doc: PDFKit.PDFDocument, rows: [string, string][]): void {
  for (const [label, value] of rows) {
    const y = doc.y;
    doc.font('Helvetica-Bold').fontSize(10).text(label, MARGIN, y, { width: 130 });
    doc.font('Helvetica').text(value, MARGIN + 130, y, { width: 365 });
  }
  doc.moveDown(1);
}

/** A simple table that starts a new page (with the header row again) when the page is full. */
function table(doc: PDFKit.PDFDocument, columns: Column[], rows: string[][]): void {
  const bottom = doc.page.height - MARGIN - ROW_HEIGHT;
  const headerRow = () => {
    doc.font('Helvetica-Bold').fontSize(8.5);
    drawRow(
      doc,
      columns,
      columns.map((c) => c.title),
    );
    const y = doc.y - 3;
    doc
      .moveTo(MARGIN, y)
      .lineTo(doc.page.width - MARGIN, y)
      .lineWidth(0.5)
      .stroke();
    doc.font('Helvetica').fontSize(8.5);
  };
  headerRow();
  for (const row of rows) {
    if (doc.y > bottom) {
      doc.addPage();
      headerRow();
    }
    drawRow(doc, columns, row);
  }
  doc.moveDown(1);
}

function drawRow(doc: PDFKit.PDFDocument, columns: Column[], cells: string[]): void {
  const y = doc.y;
  let x = MARGIN;
  columns.forEach((column, i) => {
    // One line per cell: text that does not fit is cut with an ellipsis (pdfkit needs a height for that).
    doc.text(cells[i] ?? '', x, y, {
      width: column.width - 4,
      height: ROW_HEIGHT - 4,
      align: column.align ?? 'left',
      ellipsis: true,
    });
    x += column.width;
  });
  doc.x = MARGIN;
  doc.y = y + ROW_HEIGHT;
}

const NOTE_COLUMNS: Column[] = [
  { title: 'Pos.', width: 25 },
  { title: 'PZN', width: 55 },
  { title: 'Artikelbezeichnung', width: 175 },
  { title: 'Menge', width: 40, align: 'right' },
  { title: 'Charge', width: 60 },
  { title: 'Verfall', width: 55 },
  { title: 'Packstück', width: 85 },
];

export function renderDeliveryNote(notice: DeliveryNotice, head: Letterhead): Promise<Buffer> {
  const doc = newDocument(`Lieferschein ${notice.deliveryNoteNumber}`, head);
  const done = collect(doc);
  letterhead(doc, 'Lieferschein', head);
  facts(doc, [
    ['Kunde', head.customerId],
    ['Lieferscheinnummer', notice.deliveryNoteNumber],
    ['Barcode-Referenz', notice.barcodeReference],
    ['Belegdatum', germanDate(notice.documentDate)],
    ['Auftrag', `${notice.orderType} / Kennung ${notice.orderLabel}`],
    [
      'Tour',
      `${notice.tour ?? '–'}${notice.deliveryTime ? `, Lieferung ${germanDateTime(notice.deliveryTime)}` : ''}`,
    ],
    ['Dokument-ID', notice.documentId ?? '–'],
  ]);
  const rows: string[][] = [];
  notice.lines.forEach((line, i) => {
    const name = line.articleName ?? articleName(line.pzn);
    for (const d of line.delivered) {
      rows.push([
        String(i + 1),
        line.pzn,
        name,
        String(d.quantity),
        d.batch ?? '',
        d.expiryDate ? germanDate(d.expiryDate) : '',
        d.parcelNumber ?? '',
      ]);
    }
    for (const s of line.shortages) {
      rows.push([String(i + 1), line.pzn, `Fehlmenge: ${name}`, `-${s.quantity}`, '', '', 'nicht geliefert']);
    }
  });
  table(doc, NOTE_COLUMNS, rows);
  doc
    .font('Helvetica')
    .fontSize(9)
    .text(
      notice.hasShortages
        ? 'Fehlmengen enthalten. Für Fehlmengen erfolgt keine automatische Nachlieferung; bitte bei Bedarf neu bestellen.'
        : 'Die Lieferung ist vollständig.',
    );
  doc.end();
  return done;
}

const REASONS: Record<RetoureGrund, string> = {
  Bestellfehler: 'Bestellfehler',
  BerechnetNichtGeliefert: 'Berechnet, nicht geliefert',
  Beschaedigt: 'Beschädigt',
  VerfallZuKurz: 'Verfall zu kurz',
  ZuvielGeliefert: 'Zu viel geliefert',
};

const VERDICTS: Partial<Record<RetourenAnteilTyp, string>> = {
  RetoureAkzeptiert: 'Retoure akzeptiert',
  RetoureAkzeptiertRueckspracheNoetig: 'Retoure akzeptiert – Rücksprache nötig',
  RetoureAkzeptiertKeineRuecksendungNoetig: 'Retoure akzeptiert – keine Rücksendung nötig',
};

const SLIP_COLUMNS: Column[] = [
  { title: 'Pos.', width: 25 },
  { title: 'Lieferschein', width: 95 },
  { title: 'PZN', width: 55 },
  { title: 'Artikelbezeichnung', width: 170 },
  { title: 'Menge', width: 35, align: 'right' },
  { title: 'Grund', width: 115 },
];

export interface ReturnSlip {
  announcementId: string;
  supportId: number;
  portion: ReturnPortion;
}

export function renderReturnSlip(slip: ReturnSlip, head: Letterhead): Promise<Buffer> {
  const { portion } = slip;
  const doc = newDocument(`Retourenschein ${portion.wholesalerReference ?? ''}`.trim(), head);
  const done = collect(doc);
  letterhead(doc, 'Retourenschein', head);
  facts(doc, [
    ['Kunde', head.customerId],
    ['GH-Referenz', portion.wholesalerReference ?? '–'],
    ['Entscheidung', VERDICTS[portion.verdict] ?? portion.verdict],
    [
      'Abholung',
      `${portion.tour ?? '–'}${portion.pickupTime ? `, ${germanDateTime(portion.pickupTime)}` : ''}`,
    ],
    ['Retouren-Support-ID', String(slip.supportId)],
    ['Ankündigung', slip.announcementId],
    ['Dokument-ID', portion.documentId ?? '–'],
  ]);
  const rows = [...portion.positions]
    .sort((a, b) => a.positionRef - b.positionRef)
    .map((p) => [
      String(p.positionRef),
      p.deliveryNoteNumber,
      p.pzn,
      articleName(p.pzn),
      String(p.quantity),
      REASONS[p.reason],
    ]);
  table(doc, SLIP_COLUMNS, rows);
  doc
    .font('Helvetica')
    .fontSize(9)
    .text('Bitte diesen Schein ausgedruckt der Ware beilegen und für die Abholung bereitstellen.');
  doc.end();
  return done;
}
