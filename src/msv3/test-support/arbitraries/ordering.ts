import fc from 'fast-check';
import type { Msv3Version } from '../../envelope.js';
import {
  AUFTRAGSARTEN,
  BESTELLUNG_TYPEN,
  defektgruende,
  LIEFERVORGABEN,
  type Msv3FaultInfo,
  maxQuantity,
  SUBSTITUTIONSGRUENDE,
  VERFUEGBARKEIT_TYPEN,
} from '../../model.js';
import type { AvailabilityPart, OrderPart, Substitution } from '../../operations/anteile.js';
import type { OrderRequest, OrderResponse, SubOrder } from '../../operations/bestellen.js';
import type { OrderStatusRequest, OrderStatusResponse } from '../../operations/bestellstatus-abfragen.js';
import { BESTELLSTATUS_WERTE } from '../../operations/bestellstatus-abfragen.js';
import type { PositionAnswer, SubOrderAnswer } from '../../operations/bestellung-antwort.js';
import {
  ANTWORT_TYPEN,
  type AvailabilityArticle,
  type AvailabilityRequest,
  type AvailabilityResponse,
  BEDARF_WERTE,
} from '../../operations/verfuegbarkeit-anfragen.js';
import type {
  BulkAvailabilityRequest,
  BulkAvailabilityResponse,
} from '../../operations/verfuegbarkeit-anfragen-bulk.js';
import { druckbareKennung, freeText, pzn, supportId, uuid, xsdDateTime } from './document-values.js';

/**
 * Arbitraries for the ordering codecs (availability, bulk availability, orders, order status), per
 * version. Every model is valid for that version's XSD, so encoding it must validate and round-trip.
 * Optional fields are absent as `undefined`, exactly as the decoders produce them. Free text includes
 * characters that need escaping; sizes stay moderate so that XSD batches run quickly (the maximum
 * counts are covered by explicit cases in the tests).
 */

const clientSoftwareId = freeText(1, 80);

function quantity(version: Msv3Version): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer({ min: 1, max: maxQuantity(version) }),
    fc.constantFrom(1, maxQuantity(version)),
  );
}

const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 3 });
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

function availabilityPart(version: Msv3Version): fc.Arbitrary<AvailabilityPart> {
  return fc.record({
    quantity: nullable(quantity(version)),
    type: fc.constantFrom(...VERFUEGBARKEIT_TYPEN),
    deliveryTime: nullable(xsdDateTime),
    tour: optional(freeText(1, 80)),
    defectReason: fc.constantFrom(...defektgruende(version, false)),
    tourDeviation: version === 2 ? fc.boolean() : fc.constant(undefined),
  });
}

function orderPart(version: Msv3Version): fc.Arbitrary<OrderPart> {
  return fc.record({
    quantity: nullable(quantity(version)),
    type: fc.constantFrom(...BESTELLUNG_TYPEN),
    deliveryTime: nullable(xsdDateTime),
    tour: optional(freeText(1, 80)),
    defectReason: fc.constantFrom(...defektgruende(version, true)),
    tourId: optional(druckbareKennung),
    tourDeviation: version === 2 ? fc.boolean() : fc.constant(undefined),
  });
}

function substitution(version: Msv3Version, forOrders: boolean): fc.Arbitrary<Substitution> {
  return fc.record({
    reason: fc.constantFrom(...SUBSTITUTIONSGRUENDE),
    defectReason: fc.constantFrom(...defektgruende(version, forOrders)),
    deliveredPzn: pzn,
  });
}

export function availabilityRequest(version: Msv3Version): fc.Arbitrary<AvailabilityRequest> {
  return fc.record({
    clientSoftwareId,
    id: uuid,
    oneOfMany: version === 1 ? fc.boolean() : fc.constant(undefined),
    articles: fc.array(
      fc.record({
        pzn,
        quantity: quantity(version),
        demand: version === 2 ? fc.constantFrom(...BEDARF_WERTE) : fc.constant(undefined),
      }),
      { minLength: 1, maxLength: 50 },
    ),
  });
}

function availabilityArticle(version: Msv3Version): fc.Arbitrary<AvailabilityArticle> {
  return fc.record({
    requestedQuantity: quantity(version),
    requestedPzn: pzn,
    substitution: optional(substitution(version, false)),
    parts: fc.array(availabilityPart(version), { minLength: 1, maxLength: 5 }),
  });
}

export function availabilityResponse(version: Msv3Version): fc.Arbitrary<AvailabilityResponse> {
  return fc.record({
    id: uuid,
    responseType: fc.constantFrom(...ANTWORT_TYPEN),
    articles: fc.array(availabilityArticle(version), { minLength: 1, maxLength: 50 }),
  });
}

export const bulkAvailabilityRequest: fc.Arbitrary<BulkAvailabilityRequest> = fc.record({
  clientSoftwareId,
  id: uuid,
  query: fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('list' as const),
        pzns: fc.array(pzn, { minLength: 1, maxLength: 300 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('block' as const), firstPzn: pzn }) },
  ),
});

export const bulkAvailabilityResponse: fc.Arbitrary<BulkAvailabilityResponse> = fc.record({
  id: uuid,
  availablePzns: fc.array(pzn, { maxLength: 300 }),
});

const subOrderHeader = {
  id: uuid,
  orderType: fc.constantFrom(...AUFTRAGSARTEN),
  orderLabel: druckbareKennung,
  containerId: optional(druckbareKennung),
  supportId,
};

export function subOrder(version: Msv3Version, maxPositions = 20): fc.Arbitrary<SubOrder> {
  return fc.record({
    ...subOrderHeader,
    positions: fc.array(
      fc.record({
        pzn,
        quantity: quantity(version),
        deliveryInstruction: fc.constantFrom(...LIEFERVORGABEN),
      }),
      { minLength: 1, maxLength: maxPositions },
    ),
  });
}

export function orderRequest(version: Msv3Version): fc.Arbitrary<OrderRequest> {
  return fc.record({
    clientSoftwareId,
    id: uuid,
    supportId,
    subOrders: fc.array(subOrder(version), { minLength: 1, maxLength: 5 }),
  });
}

const faultInfo: fc.Arbitrary<Msv3FaultInfo> = fc.record({
  errorCode: freeText(1, 5),
  userText: freeText(1, 200),
  technicalText: freeText(1, 200),
});

export function positionAnswer(version: Msv3Version): fc.Arbitrary<PositionAnswer> {
  return fc.record({
    pzn,
    quantity: quantity(version),
    deliveryInstruction: fc.constantFrom(...LIEFERVORGABEN),
    substitution: optional(substitution(version, true)),
    parts: fc.array(orderPart(version), { minLength: 1, maxLength: 9 }),
  });
}

function subOrderAnswer(version: Msv3Version): fc.Arbitrary<SubOrderAnswer> {
  return fc.record({
    ...subOrderHeader,
    positions: fc.array(positionAnswer(version), { maxLength: 8 }),
    error: optional(faultInfo),
  });
}

export function orderResponse(version: Msv3Version): fc.Arbitrary<OrderResponse> {
  return fc.record({
    id: uuid,
    supportId,
    nightMode: fc.boolean(),
    subOrders: fc.array(subOrderAnswer(version), { maxLength: 4 }),
  });
}

/** `bestellId` is a plain xs:string: anything goes, including the empty string. */
export const orderStatusRequest: fc.Arbitrary<OrderStatusRequest> = fc.record({
  clientSoftwareId,
  orderId: fc.oneof(uuid, freeText(0, 60)),
});

export function orderStatusResponse(version: Msv3Version): fc.Arbitrary<OrderStatusResponse> {
  return fc.record({
    id: uuid,
    status: fc.constantFrom(...BESTELLSTATUS_WERTE),
    supportId: nullable(supportId),
    subOrders: fc.array(subOrderAnswer(version), { maxLength: 4 }),
  });
}
