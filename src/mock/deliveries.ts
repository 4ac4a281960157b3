import type { OrderRequest, PositionAnswer, SubOrderAnswer } from '../msv3/operations/bestellen.js';
import type {
  DeliveryNotice,
  DeliveryNoticeLine,
  DeliveryNoticesResponse,
} from '../msv3/operations/lieferavis.js';
import { MAX_DELIVERY_NOTICES } from '../msv3/operations/lieferavis.js';
import type { DeliveryNoticeHistoryRequest } from '../msv3/operations/lieferavis-abfrage-hist.js';
import type { ConfirmDeliveryNoticesRequest } from '../msv3/operations/lieferavis-bestaetigen.js';
import { articleName, batchFor, expiryFor } from './catalogue.js';
import type { RequestContext } from './context.js';
import { unknownDeliveryNoteFault, validationFault } from './faults.js';
import type { MockEnvironment } from './options.js';
import { SCENARIO_PZNS } from './scenarios.js';
import type { CustomerState, TenantState } from './state.js';

/**
 * Delivery notices (Lieferavis, docs/msv3.md "Delivery notices"), created when an order is processed: one
 * notice per sub-order and tour (TourId), listing what goes with that tour (Normal and Verbund parts; back
 * orders and special procurement are not delivered yet). They are visible at once, not only when the tour
 * leaves, so a sandbox user sees them right after ordering.
 *
 * Decisions: `lieferavisBestaetigen` is atomic and idempotent — confirming a number twice is fine, but a
 * number this customer never received is a ValidationFault and nothing is confirmed. `lieferavisAbfrageHist`
 * needs a number or a barcode (neither → ValidationFault); with both they must name the same notice.
 */

function noteNumber(tenant: TenantState, date: string): string {
  tenant.counters.deliveryNote++;
  return `LS${date.replaceAll('-', '')}${String(tenant.counters.deliveryNote).padStart(6, '0')}`;
}

/**
 * Which lines come up short: `scenario` (half of each DELIVERY_SHORTAGE line, rounded up: an order's own
 * notices), `none` or `half` (half of every line, rounded up: a notice asked for through the control
 * surface, `control.ts`).
 */
export type ShortageRule = 'scenario' | 'none' | 'half';

function shortageOf(position: PositionAnswer, quantity: number, rule: ShortageRule): number {
  const short =
    rule === 'half' || (rule === 'scenario' && position.pzn === SCENARIO_PZNS.DELIVERY_SHORTAGE.pzn);
  return short ? Math.ceil(quantity / 2) : 0;
}

interface TourGroup {
  tourId: string;
  tour?: string;
  deliveryTime: string;
  lines: { position: PositionAnswer; quantity: number }[];
}

/** Normal and Verbund parts of a sub-order, grouped by the tour that carries them. */
function groupByTour(answer: SubOrderAnswer): TourGroup[] {
  const groups = new Map<string, TourGroup>();
  for (const position of answer.positions) {
    for (const part of position.parts) {
      if ((part.type !== 'Normal' && part.type !== 'Verbund') || part.tourId === undefined) continue;
      if (part.deliveryTime === null || part.quantity === null) continue;
      let group = groups.get(part.tourId);
      if (group === undefined) {
        group = { tourId: part.tourId, tour: part.tour, deliveryTime: part.deliveryTime, lines: [] };
        groups.set(part.tourId, group);
      }
      const line = group.lines.find((l) => l.position === position);
      if (line === undefined) group.lines.push({ position, quantity: part.quantity });
      else line.quantity += part.quantity;
    }
  }
  return [...groups.values()];
}

export function issueDeliveryNotices(
  env: MockEnvironment,
  tenant: TenantState,
  customer: CustomerState,
  request: OrderRequest,
  answers: SubOrderAnswer[],
  at: number,
  shortages: ShortageRule = 'scenario',
): DeliveryNotice[] {
  const issued: DeliveryNotice[] = [];
  for (const answer of answers) {
    if (answer.error !== undefined) continue;
    const containerId = request.subOrders.find((s) => s.id === answer.id)?.containerId;
    for (const group of groupByTour(answer)) {
      for (const lines of splitNotes(group.lines)) {
        const date = group.deliveryTime.slice(0, 10);
        const number = noteNumber(tenant, date);
        tenant.counters.parcel++;
        const parcelNumber = `WANNE${String(tenant.counters.parcel).padStart(6, '0')}`;
        const noticeLines = lines.map(({ position, quantity }) =>
          noticeLine(position, quantity, { answer, containerId, parcelNumber, date, shortages }),
        );
        const documentId = env.newId();
        const notice: DeliveryNotice = {
          deliveryNoteNumber: number,
          barcodeReference: `0#${number}`,
          orderType: answer.orderType,
          orderLabel: answer.orderLabel,
          documentDate: date,
          deliveryTime: group.deliveryTime,
          ...(group.tour === undefined ? {} : { tour: group.tour }),
          hasShortages: noticeLines.some((l) => l.shortages.length > 0),
          lines: noticeLines,
          documentId,
        };
        customer.notices.set(number, { notice, createdAt: at, confirmed: false });
        customer.documents.set(documentId, { kind: 'delivery-note', deliveryNoteNumber: number });
        issued.push(notice);
      }
    }
  }
  return issued;
}

type NoteLine = TourGroup['lines'][number];

/**
 * The notes a tour's lines are printed on: one, unless a SPLIT_DELIVERY line is among them; then its
 * first half (rounded up) goes with the others and the rest on a second note.
 */
function splitNotes(lines: NoteLine[]): NoteLine[][] {
  const split = lines.find((l) => l.position.pzn === SCENARIO_PZNS.SPLIT_DELIVERY.pzn && l.quantity > 1);
  if (split === undefined) return [lines];
  const first = Math.ceil(split.quantity / 2);
  return [
    lines.map((l) => (l === split ? { ...l, quantity: first } : l)),
    [{ ...split, quantity: split.quantity - first }],
  ];
}

function noticeLine(
  position: PositionAnswer,
  quantity: number,
  note: {
    answer: SubOrderAnswer;
    containerId: string | undefined;
    parcelNumber: string;
    date: string;
    shortages: ShortageRule;
  },
): DeliveryNoticeLine {
  const pzn =
    position.substitution !== undefined && position.substitution.reason !== 'Vorschlag'
      ? position.substitution.deliveredPzn
      : position.pzn;
  const shortage = shortageOf(position, quantity, note.shortages);
  const delivered = quantity - shortage;
  return {
    pzn,
    articleName: articleName(pzn),
    ...(note.containerId === undefined ? {} : { containerId: note.containerId }),
    delivered:
      delivered > 0
        ? [
            {
              orderId: note.answer.id,
              quantity: delivered,
              parcelNumber: note.parcelNumber,
              batch: batchFor(pzn, note.date),
              expiryDate: expiryFor(pzn, note.date),
            },
          ]
        : [],
    shortages: shortage > 0 ? [{ orderId: note.answer.id, quantity: shortage }] : [],
  };
}

export function newDeliveryNotices(ctx: RequestContext): DeliveryNoticesResponse {
  const notices: DeliveryNotice[] = [];
  for (const stored of ctx.customer.notices.values()) {
    if (stored.confirmed) continue;
    notices.push(stored.notice);
    if (notices.length === MAX_DELIVERY_NOTICES) break;
  }
  return { notices };
}

export function confirmDeliveryNotices(
  ctx: RequestContext,
  request: ConfirmDeliveryNoticesRequest,
): Record<string, never> {
  const { notices } = ctx.customer;
  const unknown = request.deliveryNoteNumbers.filter((n) => !notices.has(n));
  if (unknown.length > 0) {
    throw validationFault(
      `unknown Lieferscheinnummer: ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''}; nothing was confirmed`,
      'Unbekannte Lieferscheinnummer; es wurde nichts bestätigt.',
    );
  }
  for (const n of request.deliveryNoteNumbers) notices.set(n, { ...notices.get(n)!, confirmed: true });
  return {};
}

export function deliveryNoticeHistory(
  ctx: RequestContext,
  request: DeliveryNoticeHistoryRequest,
): DeliveryNoticesResponse {
  const { deliveryNoteNumber, barcodeReference } = request;
  if (deliveryNoteNumber === undefined && barcodeReference === undefined) {
    throw validationFault(
      'lieferavisAbfrageHistAbfrage needs @Lieferscheinnummer or @BarcodeReferenz',
      'Bitte Lieferscheinnummer oder Barcode angeben.',
    );
  }
  const found =
    deliveryNoteNumber !== undefined
      ? ctx.customer.notices.get(deliveryNoteNumber)
      : [...ctx.customer.notices.values()].find((s) => s.notice.barcodeReference === barcodeReference);
  if (
    found === undefined ||
    (barcodeReference !== undefined && found.notice.barcodeReference !== barcodeReference)
  ) {
    const what = [
      deliveryNoteNumber === undefined ? '' : `Lieferscheinnummer ${deliveryNoteNumber}`,
      barcodeReference === undefined ? '' : `BarcodeReferenz ${barcodeReference}`,
    ]
      .filter(Boolean)
      .join(' and ');
    throw unknownDeliveryNoteFault(what);
  }
  return { notices: [found.notice] };
}
