import type { RetoureGrund, RetourenAnteilTyp, ReturnPosition } from '../msv3/operations/retourenavis.js';
import type {
  ReturnEnquiryRequest,
  ReturnEnquiryResponse,
} from '../msv3/operations/retourenavis-anfragen.js';
import type {
  ReturnAnnouncementRequest,
  ReturnAnnouncementResponse,
  ReturnPortion,
} from '../msv3/operations/retourenavis-ankuendigen.js';
import { rejectDuplicates } from './business-rules.js';
import { articleFor } from './catalogue.js';
import type { RequestContext } from './context.js';
import { validationFault } from './faults.js';
import { returnKey } from './state.js';
import { scheduleAt } from './supply.js';

/**
 * Returns (Retourenavis, PROTOCOL.md §2.9) against the customer's delivery notes. Each position gets a
 * verdict, checked in this order: unknown note → LieferscheinnummerUnbekannt; PZN not on it →
 * PznInLieferscheinnummerNichtEnthalten; more than delivered (minus what was already accepted, plus
 * what other positions of the same request claim) → MengeUeberschritten; note older than 14 days →
 * RueckgabefristUeberschritten; otherwise a verdict by reason (`VERDICTS`). Cold-chain articles are not
 * taken back for ordering mistakes, short expiry or over-delivery (KeineRuecknahme).
 *
 * The enquiry changes nothing. The announcement is binding: accepted units are booked (a later return
 * of the same units exceeds the quantity), positions are grouped into one portion per verdict, and
 * accepted portions get a reference (`GHReferenzID`), a return slip (`DokumentID`) and a pick-up with
 * the next tour. A repeated announcement with the same `@ID` gets the first answer.
 */

export const RETURN_PERIOD_DAYS = 14;

const VERDICTS: Record<RetoureGrund, RetourenAnteilTyp> = {
  Bestellfehler: 'RetoureAkzeptiert',
  Beschaedigt: 'RetoureAkzeptiert',
  ZuvielGeliefert: 'RetoureAkzeptiert',
  VerfallZuKurz: 'RetoureAkzeptiertRueckspracheNoetig',
  BerechnetNichtGeliefert: 'RetoureAkzeptiertKeineRuecksendungNoetig',
};

const COLD_CHAIN_VERDICTS: Record<RetoureGrund, RetourenAnteilTyp> = {
  Bestellfehler: 'KeineRuecknahme',
  ZuvielGeliefert: 'KeineRuecknahme',
  VerfallZuKurz: 'KeineRuecknahme',
  Beschaedigt: 'RetoureAkzeptiertRueckspracheNoetig',
  BerechnetNichtGeliefert: 'RetoureAkzeptiertKeineRuecksendungNoetig',
};

export function isAccepted(verdict: RetourenAnteilTyp): boolean {
  return verdict.startsWith('RetoureAkzeptiert');
}

/** Verdicts for positions in request order; `claimed` collects the units this request already accepted. */
function assess(ctx: RequestContext, positions: ReturnPosition[]): RetourenAnteilTyp[] {
  const { customer, env, now } = ctx;
  const claimed = new Map<string, number>();
  return positions.map((p) => {
    const stored = customer.notices.get(p.deliveryNoteNumber);
    if (stored === undefined) return 'LieferscheinnummerUnbekannt';
    const lines = stored.notice.lines.filter((l) => l.pzn === p.pzn);
    if (lines.length === 0) return 'PznInLieferscheinnummerNichtEnthalten';
    let units = 0;
    for (const line of lines) {
      for (const d of line.delivered) units += d.quantity;
      for (const s of line.shortages) units += s.quantity;
    }
    const key = returnKey(p.deliveryNoteNumber, p.pzn);
    const before = (customer.returnedUnits.get(key) ?? 0) + (claimed.get(key) ?? 0);
    if (before + p.quantity > units) return 'MengeUeberschritten';
    const deadline = env.calendar.epochOf(
      env.calendar.addDays(stored.notice.documentDate, RETURN_PERIOD_DAYS + 1),
      '00:00',
    );
    if (now >= deadline) return 'RueckgabefristUeberschritten';
    const verdict = (articleFor(p.pzn).tourDeviation ? COLD_CHAIN_VERDICTS : VERDICTS)[p.reason];
    if (isAccepted(verdict)) claimed.set(key, (claimed.get(key) ?? 0) + p.quantity);
    return verdict;
  });
}

function checkPositions(positions: ReturnPosition[]): void {
  rejectDuplicates(
    positions.map((p) => String(p.positionRef)),
    'PosRefID',
  );
}

export function answerReturnEnquiry(
  ctx: RequestContext,
  request: ReturnEnquiryRequest,
): ReturnEnquiryResponse {
  const enquiry = request.enquiry;
  if (enquiry === undefined)
    throw validationFault('retourenavisAnfrageType is missing', 'Die Retourenanfrage ist leer.');
  checkPositions(enquiry.positions);
  const verdicts = assess(ctx, enquiry.positions);
  return {
    answer: {
      id: enquiry.id,
      supportId: enquiry.supportId,
      positions: enquiry.positions.map((p, i) => ({ ...p, verdict: verdicts[i]! })),
    },
  };
}

export function announceReturn(
  ctx: RequestContext,
  request: ReturnAnnouncementRequest,
): ReturnAnnouncementResponse {
  const announcement = request.announcement;
  if (announcement === undefined) {
    throw validationFault('retourenavisAnkuendigungType is missing', 'Die Retourenankündigung ist leer.');
  }
  const { customer, tenant, env, now } = ctx;
  const known = customer.announcements.get(announcement.id);
  if (known !== undefined) return known.response;
  checkPositions(announcement.positions);
  const verdicts = assess(ctx, announcement.positions);

  const byVerdict = new Map<RetourenAnteilTyp, ReturnPosition[]>();
  announcement.positions.forEach((p, i) => {
    const verdict = verdicts[i]!;
    byVerdict.set(verdict, [...(byVerdict.get(verdict) ?? []), p]);
    if (isAccepted(verdict)) {
      const key = returnKey(p.deliveryNoteNumber, p.pzn);
      customer.returnedUnits.set(key, (customer.returnedUnits.get(key) ?? 0) + p.quantity);
    }
  });
  const pickup = scheduleAt(now, env.calendar).next;
  const portions: ReturnPortion[] = [...byVerdict].map(([verdict, positions], index) => {
    const sorted = [...positions].sort((a, b) => a.positionRef - b.positionRef);
    if (!isAccepted(verdict)) return { verdict, positions: sorted };
    tenant.counters.returnReference++;
    const documentId = env.newId();
    customer.documents.set(documentId, {
      kind: 'return-slip',
      announcementId: announcement.id,
      portion: index,
    });
    return {
      verdict,
      wholesalerReference: `RET-${String(tenant.counters.returnReference).padStart(6, '0')}`,
      documentId,
      pickupTime: env.calendar.dateTime(pickup.arrivalAt),
      tour: pickup.tour.name,
      positions: sorted,
    };
  });
  const response: ReturnAnnouncementResponse = {
    answer: { id: announcement.id, supportId: announcement.supportId, portions },
  };
  customer.announcements.set(announcement.id, { response, announcedAt: now });
  return response;
}
