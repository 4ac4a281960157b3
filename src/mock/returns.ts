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
import { type BookedReturns, returnKey } from './state.js';
import { scheduleAt } from './supply.js';

/**
 * Returns (Retourenavis, docs/msv3.md "Returns") against the customer's delivery notes. Each position gets a
 * verdict, checked in this order: unknown note → LieferscheinnummerUnbekannt; PZN not on it →
 * PznInLieferscheinnummerNichtEnthalten; more than delivered (minus what was already accepted, plus
 * what other positions of the same request claim) → MengeUeberschritten, where the line's shortage
 * units (Fehlmenge) count only for BerechnetNichtGeliefert, never for goods sent back (`fits`); note
 * older than 14 days → RueckgabefristUeberschritten; otherwise a verdict by reason (`VERDICTS`).
 * Cold-chain articles are not taken back for ordering mistakes, short expiry or over-delivery
 * (KeineRuecknahme).
 *
 * The enquiry changes nothing. The announcement is binding: accepted units are booked (a later return
 * of the same units exceeds the quantity), positions are grouped into one portion per verdict, and
 * accepted portions get a reference (`GHReferenzID`), a return slip (`DokumentID`) and a pick-up with
 * the next tour. A repeated announcement with the same `@ID` gets the first answer.
 */

const RETURN_PERIOD_DAYS = 14;

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

function isAccepted(verdict: RetourenAnteilTyp): boolean {
  return verdict.startsWith('RetoureAkzeptiert');
}

/** The reason that claims units that were invoiced but never arrived, rather than sending goods back. */
const NOT_DELIVERED_REASON: RetoureGrund = 'BerechnetNichtGeliefert';

const NOTHING_BOOKED: BookedReturns = { goods: 0, claims: 0 };

function book(booked: BookedReturns, p: ReturnPosition): BookedReturns {
  return p.reason === NOT_DELIVERED_REASON
    ? { goods: booked.goods, claims: booked.claims + p.quantity }
    : { goods: booked.goods + p.quantity, claims: booked.claims };
}

/**
 * Whether `p` still fits the line after `booked`. Goods can only go back if they were delivered
 * (`Anteil/@MengeGeliefert`); a `Fehlmenge` unit was never delivered, so only a claim that it was
 * invoiced but not delivered (`BerechnetNichtGeliefert`, docs/msv3.md "Returns") may cover it, and such a claim
 * may also cover delivered units. Hence goods ≤ delivered and goods + claims ≤ delivered + shortage.
 */
function fits(
  units: { delivered: number; shortage: number },
  booked: BookedReturns,
  p: ReturnPosition,
): boolean {
  const after = book(booked, p);
  return after.goods <= units.delivered && after.goods + after.claims <= units.delivered + units.shortage;
}

/** Verdicts for positions in request order; `claimed` collects the units this request already accepted. */
function assess(ctx: RequestContext, positions: ReturnPosition[]): RetourenAnteilTyp[] {
  const { customer, env, now } = ctx;
  const claimed = new Map<string, BookedReturns>();
  return positions.map((p) => {
    const stored = customer.notices.get(p.deliveryNoteNumber);
    if (stored === undefined) return 'LieferscheinnummerUnbekannt';
    const lines = stored.notice.lines.filter((l) => l.pzn === p.pzn);
    if (lines.length === 0) return 'PznInLieferscheinnummerNichtEnthalten';
    const units = { delivered: 0, shortage: 0 };
    for (const line of lines) {
      for (const d of line.delivered) units.delivered += d.quantity;
      for (const s of line.shortages) units.shortage += s.quantity;
    }
    const key = returnKey(p.deliveryNoteNumber, p.pzn);
    const returned = customer.returnedUnits.get(key) ?? NOTHING_BOOKED;
    const inRequest = claimed.get(key) ?? NOTHING_BOOKED;
    const before = {
      goods: returned.goods + inRequest.goods,
      claims: returned.claims + inRequest.claims,
    };
    if (!fits(units, before, p)) return 'MengeUeberschritten';
    const deadline = env.calendar.epochOf(
      env.calendar.addDays(stored.notice.documentDate, RETURN_PERIOD_DAYS + 1),
      '00:00',
    );
    if (now >= deadline) return 'RueckgabefristUeberschritten';
    const verdict = (articleFor(p.pzn).tourDeviation ? COLD_CHAIN_VERDICTS : VERDICTS)[p.reason];
    if (isAccepted(verdict)) claimed.set(key, book(inRequest, p));
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
      customer.returnedUnits.set(key, book(customer.returnedUnits.get(key) ?? NOTHING_BOOKED, p));
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
