import type { BestellungTyp, Liefervorgabe } from '../msv3/model.js';
import type { OrderPart } from '../msv3/operations/anteile.js';
import type {
  OrderPosition,
  PositionAnswer,
  SubOrder,
  SubOrderAnswer,
} from '../msv3/operations/bestellen.js';
import { articleFor } from './catalogue.js';
import { orderTypeAgreed } from './contract.js';
import { SCENARIO_PZNS } from './scenarios.js';
import {
  type Allocation,
  blockedReason,
  partWithoutDelivery,
  planSupply,
  type SupplyTerms,
  substitutionForVersion,
  suppliedPart,
} from './supply.js';

/**
 * The answer to each sub-order of an order (docs/msv3.md "Order answers"): positions with up to 9 parts (each Typ
 * once, quantities adding up, TourId on every Normal part), or an in-band `Auftragsfehler`. The
 * Liefervorgabe caps how far the wholesaler may go; a portion beyond it becomes a
 * `KeineLieferungAber…Moeglich` part (nothing delivered, although it would have been possible).
 */

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

function answerPosition(position: OrderPosition, terms: SupplyTerms): PositionAnswer {
  const { version, contract } = terms;
  const plan = planSupply(
    articleFor(position.pzn, terms.wholesaler),
    position.quantity,
    contract,
    terms.wholesaler,
  );
  const level = INSTRUCTION_LEVEL[position.deliveryInstruction];
  const parts: OrderPart[] = plan.allocations.map((a) =>
    a.type === 'Normal' || TYPE_LEVEL[a.type] <= level
      ? suppliedPart(a, plan, terms, true)
      : partWithoutDelivery(BLOCKED[a.type], a.quantity, blockedReason(a.type, plan.article), version),
  );
  if (plan.shortfall > 0) {
    parts.push(partWithoutDelivery('NichtLieferbar', plan.shortfall, plan.shortfallReason, version));
  }
  const substitution = substitutionForVersion(plan.substitution, version);
  return {
    pzn: position.pzn,
    quantity: position.quantity,
    deliveryInstruction: position.deliveryInstruction,
    ...(substitution ? { substitution } : {}),
    parts,
  };
}

export function answerSubOrder(sub: SubOrder, terms: SupplyTerms): SubOrderAnswer {
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
  const later = sub.positions.find(
    (p) => p.deliveryInstruction === 'MaxNachlieferung' || p.deliveryInstruction === 'MaxDispo',
  );
  if (sub.orderType === 'VERSAND' && terms.contract.completeContainersOnly && later !== undefined) {
    return {
      ...header,
      positions: [],
      error: {
        errorCode: 'A18',
        userText: `Gebinde ${sub.containerId ?? ''} nur komplett: PZN ${later.pzn} darf nicht nachgeliefert werden.`,
        technicalText: 'NurKompletteGebinde: a VERSAND sub-order allows a later delivery',
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
