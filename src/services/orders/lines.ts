import type { SubOrderAnswer } from '../../msv3/operations/bestellen.js';
import type { AnsweredLine, NewOrderLine } from '../../store/order-lines.js';
import type { StoredOrderRequest } from './request.js';
import { subOrderResults } from './view.js';

/** The rows of `order_lines` (the order record, docs/orders.md) for a stored request and its answer. */

export function orderLineRows(request: StoredOrderRequest): NewOrderLine[] {
  return request.subOrders.flatMap((sub, subIndex) =>
    sub.lines.map((line, lineIndex) => ({
      sub_order_id: sub.id,
      pzn: line.pzn,
      sub_order_index: subIndex,
      line_index: lineIndex,
      order_type: sub.orderType,
      order_label: sub.orderLabel,
      quantity_ordered: line.quantity,
    })),
  );
}

/**
 * What the answer confirmed per line: a refused sub-order confirms nothing; a substitute (not a mere
 * proposal) is what its delivery notes will print.
 */
export function answeredLineRows(
  bestellungId: string,
  request: StoredOrderRequest,
  answer: readonly SubOrderAnswer[],
): AnsweredLine[] {
  return subOrderResults(bestellungId, request, answer).flatMap((sub) =>
    sub.status === 'confirmed' || sub.status === 'rejected'
      ? sub.items.map((item) => ({
          subOrderId: sub.sub_order_id,
          pzn: item.pzn,
          confirmed: item.quantity_confirmed,
          returnedLabel: sub.order_label,
          substitutePzn:
            item.substitution !== null && item.substitution.reason !== 'proposal'
              ? item.substitution.pzn
              : null,
        }))
      : [],
  );
}
