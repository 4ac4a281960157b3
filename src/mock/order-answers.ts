import type { BestellungTyp, Liefervorgabe, Msv3Version } from '../msv3/model.js';
import type { OrderPart } from '../msv3/operations/anteile.js';
import type {
  OrderPosition,
  PositionAnswer,
  SubOrder,
  SubOrderAnswer,
} from '../msv3/operations/bestellen.js';
import type { Calendar } from './calendar.js';
import { articleFor } from './catalogue.js';
import { type Contract, orderTypeAgreed } from './contract.js';
import { SCENARIO_PZNS } from './scenarios.js';
import {
  type Allocation,
  blockedReason,
  departureFor,
  forVersion,
  planSupply,
  type Schedule,
  type SupplyPlan,
  substitutionForVersion,
} from './supply.js';

/**
 * The answer to each sub-order of an order (PROTOCOL.md §2.4): positions with up to 9 parts (each Typ
 * once, quantities adding up, TourId on every Normal part), or an in-band `Auftragsfehler`. The
 * Liefervorgabe caps how far the wholesaler may go; a portion beyond it becomes a
 * `KeineLieferungAber…Moeglich` part (nothing delivered, although it would have been possible).
 */

export interface OrderTerms {
  version: Msv3Version;
  contract: Contract;
  schedule: Schedule;
  calendar: Calendar;
}

const INSTRUCTION_LEVEL: Record<Liefervorgabe, number> = {
  Normal: 0,
  MaxVerbund: 1,
  MaxNachlieferung: 2,
  MaxDispo: 3,
};

const TYPE_LEVEL: Record<Allocation['type'], number> = { Normal: 0, Verbund: 1, Nachlieferung: 2, Dispo: 3 };

const BLOCKED: Record<Exclude<Allocation['type'], 'Normal'>, BestellungTyp> = {
  Verbund: 'KeineLieferungAberVerbundMoeglich',
  Nachlieferung: 'KeineLieferungAberNachlieferungMoeglich',
  Dispo: 'KeineLieferungAberDispoMoeglich',
};

function deliveredPart(a: Allocation, plan: SupplyPlan, terms: OrderTerms): OrderPart {
  const { version, schedule, calendar } = terms;
  const v2 = version === 2;
  switch (a.type) {
    case 'Normal':
    case 'Verbund': {
      const departure = departureFor(a.type, plan.article, schedule);
      return {
        quantity: a.quantity,
        type: a.type,
        deliveryTime: calendar.dateTime(departure.arrivalAt),
        tour: departure.tour.name,
        defectReason: 'KeineAngabe',
        tourId: departure.tour.id,
        tourDeviation: v2 ? plan.article.tourDeviation : undefined,
      };
    }
    case 'Nachlieferung':
      return {
        quantity: a.quantity,
        type: a.type,
        deliveryTime: null,
        defectReason: 'FehltZurzeit',
        tourDeviation: v2 ? false : undefined,
      };
    case 'Dispo':
      return {
        quantity: a.quantity,
        type: a.type,
        deliveryTime: calendar.dateTime(schedule.specialProcurement.arrivalAt),
        defectReason: forVersion(plan.article.shortfallReason, version),
        tourDeviation: v2 ? false : undefined,
      };
  }
}

export function answerPosition(position: OrderPosition, terms: OrderTerms): PositionAnswer {
  const { version, contract } = terms;
  const plan = planSupply(articleFor(position.pzn), position.quantity, contract);
  const level = INSTRUCTION_LEVEL[position.deliveryInstruction];
  const noDelivery = (
    type: BestellungTyp,
    quantity: number,
    reason: OrderPart['defectReason'],
  ): OrderPart => ({
    quantity,
    type,
    deliveryTime: null,
    defectReason: forVersion(reason, version),
    tourDeviation: version === 2 ? false : undefined,
  });
  const parts: OrderPart[] = plan.allocations.map((a) =>
    a.type === 'Normal' || TYPE_LEVEL[a.type] <= level
      ? deliveredPart(a, plan, terms)
      : noDelivery(BLOCKED[a.type], a.quantity, blockedReason(a.type, plan.article)),
  );
  if (plan.shortfall > 0) parts.push(noDelivery('NichtLieferbar', plan.shortfall, plan.shortfallReason));
  const substitution = substitutionForVersion(plan.substitution, version);
  return {
    pzn: position.pzn,
    quantity: position.quantity,
    deliveryInstruction: position.deliveryInstruction,
    ...(substitution ? { substitution } : {}),
    parts,
  };
}

export function answerSubOrder(sub: SubOrder, terms: OrderTerms): SubOrderAnswer {
  const header = {
    id: sub.id,
    orderType: sub.orderType,
    orderLabel: sub.orderLabel,
    ...(sub.containerId === undefined ? {} : { containerId: sub.containerId }),
    supportId: sub.supportId,
  };
  if (!orderTypeAgreed(terms.contract, sub.orderType)) {
    return {
      ...header,
      positions: [],
      error: {
        errorCode: 'A17',
        userText: `Auftragsart ${sub.orderType} ist nicht vereinbart.`,
        technicalText: `order type ${sub.orderType} not agreed for customer`,
      },
    };
  }
  const rejected = SCENARIO_PZNS.ORDER_REJECTED.pzn;
  if (sub.positions.some((p) => p.pzn === rejected)) {
    return {
      ...header,
      positions: [],
      error: {
        errorCode: 'A20',
        userText: `Der Auftrag wurde abgelehnt: Lieferstopp für PZN ${rejected}.`,
        technicalText: 'sandbox scenario ORDER_REJECTED: sub-order refused',
      },
    };
  }
  return { ...header, positions: sub.positions.map((p) => answerPosition(p, terms)) };
}
