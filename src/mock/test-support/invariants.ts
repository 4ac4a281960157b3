import type { Msv3Version } from '../../msv3/envelope.js';
import type { Liefervorgabe } from '../../msv3/model.js';
import type { OrderRequest, OrderResponse, PositionAnswer } from '../../msv3/operations/bestellen.js';
import type {
  AvailabilityRequest,
  AvailabilityResponse,
} from '../../msv3/operations/verfuegbarkeit-anfragen.js';

/**
 * The business rules of docs/msv3.md "Availability answers" and "Order answers" as checks over decoded
 * answers. Each returns the list of violations (empty = fine), so a failing property shows every broken rule
 * at once.
 */

interface Part {
  quantity: number | null;
  type: string;
  deliveryTime: string | null;
  tour?: string;
  defectReason: string;
  tourDeviation?: boolean;
  tourId?: string;
}

function partRules(
  where: string,
  parts: Part[],
  requested: number,
  version: Msv3Version,
  specific: boolean,
  max: number,
): string[] {
  const problems: string[] = [];
  if (parts.length < 1 || parts.length > max) problems.push(`${where}: ${parts.length} parts (1..${max})`);
  const sum = parts.reduce((n, p) => n + (p.quantity ?? Number.NaN), 0);
  if (sum !== requested) problems.push(`${where}: parts add up to ${sum}, requested ${requested}`);
  const types = parts.map((p) => p.type);
  if (new Set(types).size !== types.length) problems.push(`${where}: a Typ repeats (${types.join(', ')})`);
  for (const p of parts) {
    const delivering = p.type === 'Normal' || p.type === 'Verbund';
    if (delivering && p.defectReason !== 'KeineAngabe')
      problems.push(`${where}: ${p.type} with Grund ${p.defectReason}`);
    if (!delivering && p.defectReason === 'KeineAngabe')
      problems.push(`${where}: ${p.type} with Grund KeineAngabe`);
    if (delivering && specific && p.deliveryTime === null && p.tour === undefined) {
      problems.push(`${where}: ${p.type} without Lieferzeitpunkt or Tour`);
    }
    if (p.tourDeviation === true && !delivering) problems.push(`${where}: Tourabweichung on ${p.type}`);
    if (version === 2 && p.tourDeviation === undefined)
      problems.push(`${where}: v2 part without Tourabweichung`);
    if (version === 1 && p.tourDeviation !== undefined)
      problems.push(`${where}: v1 part with Tourabweichung`);
    const wrongName = version === 1 ? 'HerstellerNichtLieferbar' : 'NichtLieferbar';
    if (p.defectReason === wrongName)
      problems.push(`${where}: Grund ${wrongName} does not exist in v${version}`);
  }
  return problems;
}

export function availabilityViolations(
  request: AvailabilityRequest,
  response: AvailabilityResponse,
  version: Msv3Version,
): string[] {
  const problems: string[] = [];
  if (response.id !== request.id) problems.push('return/@Id differs from the request');
  if (response.articles.length !== request.articles.length) problems.push('not every article is answered');
  const specific = response.responseType === 'Spezifisch';
  request.articles.forEach((asked, i) => {
    const a = response.articles[i];
    const where = `Artikel[${i + 1}] ${asked.pzn}`;
    if (a === undefined) return;
    if (a.requestedPzn !== asked.pzn || a.requestedQuantity !== asked.quantity)
      problems.push(`${where}: echo differs`);
    problems.push(...partRules(where, a.parts, asked.quantity, version, specific, 5));
    if (a.parts.some((p) => p.defectReason === 'Teildefekt' && p.type !== 'NichtLieferbar')) {
      problems.push(`${where}: Teildefekt outside a NichtLieferbar part`);
    }
    if (a.substitution !== undefined) {
      if (a.substitution.defectReason === 'KeineAngabe')
        problems.push(`${where}: substitution with Grund KeineAngabe`);
      if (a.substitution.deliveredPzn === asked.pzn) problems.push(`${where}: substitution by itself`);
    }
  });
  return problems;
}

const LEVEL: Record<Liefervorgabe, number> = { Normal: 0, MaxVerbund: 1, MaxNachlieferung: 2, MaxDispo: 3 };
const TYPE_LEVEL: Record<string, number> = { Normal: 0, Verbund: 1, Nachlieferung: 2, Dispo: 3 };

function positionRules(where: string, p: PositionAnswer, version: Msv3Version): string[] {
  const problems = partRules(where, p.parts, p.quantity, version, true, 9);
  for (const part of p.parts) {
    if (part.type === 'Normal' && part.tourId === undefined)
      problems.push(`${where}: Normal part without TourId`);
    if (part.defectReason === 'Teildefekt') problems.push(`${where}: Teildefekt in an order answer`);
    const level = TYPE_LEVEL[part.type];
    if (level !== undefined && level > LEVEL[p.deliveryInstruction]) {
      problems.push(`${where}: ${part.type} part beyond Liefervorgabe ${p.deliveryInstruction}`);
    }
  }
  return problems;
}

export function orderViolations(
  request: OrderRequest,
  response: OrderResponse,
  version: Msv3Version,
): string[] {
  const problems: string[] = [];
  if (response.id !== request.id || response.supportId !== request.supportId)
    problems.push('order echo differs');
  if (response.nightMode) {
    if (response.subOrders.length > 0) problems.push('NachtBetrieb=true with sub-orders');
    return problems;
  }
  if (response.subOrders.length !== request.subOrders.length) problems.push('sub-order count differs');
  for (const asked of request.subOrders) {
    const answer = response.subOrders.find((s) => s.id === asked.id);
    if (answer === undefined) {
      problems.push(`sub-order ${asked.id} unanswered`);
      continue;
    }
    if (answer.orderType !== asked.orderType) problems.push(`sub-order ${asked.id}: Auftragsart changed`);
    if (answer.error !== undefined) {
      if (answer.positions.length > 0) problems.push(`sub-order ${asked.id}: positions and Auftragsfehler`);
      continue;
    }
    for (const position of asked.positions) {
      const p = answer.positions.find((x) => x.pzn === position.pzn);
      const where = `sub-order ${asked.id} PZN ${position.pzn}`;
      if (p === undefined) {
        problems.push(`${where}: unanswered`);
        continue;
      }
      if (p.quantity !== position.quantity || p.deliveryInstruction !== position.deliveryInstruction) {
        problems.push(`${where}: echo differs`);
      }
      problems.push(...positionRules(where, p, version));
    }
  }
  return problems;
}
