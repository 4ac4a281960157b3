import fc from 'fast-check';
import type { Msv3Version } from '../../envelope.js';
import { AUFTRAGSARTEN, maxQuantity } from '../../model.js';
import type { DocumentRequest, DocumentResponse } from '../../operations/dokument-abfragen.js';
import type {
  DeliveredPortion,
  DeliveryNotice,
  DeliveryNoticeLine,
  DeliveryNoticesResponse,
  Shortage,
} from '../../operations/lieferavis.js';
import type { DeliveryNoticeHistoryRequest } from '../../operations/lieferavis-abfrage-hist.js';
import type { NewDeliveryNoticesRequest } from '../../operations/lieferavis-abfrage-neu.js';
import type { ConfirmDeliveryNoticesRequest } from '../../operations/lieferavis-bestaetigen.js';
import {
  type AssessedReturnPosition,
  RETOURE_GRUENDE,
  RETOUREN_ANTEIL_TYPEN,
  type ReturnPosition,
} from '../../operations/retourenavis.js';
import type {
  ReturnEnquiry,
  ReturnEnquiryRequest,
  ReturnEnquiryResponse,
} from '../../operations/retourenavis-anfragen.js';
import type {
  ReturnAnnouncement,
  ReturnAnnouncementRequest,
  ReturnAnnouncementResponse,
  ReturnPortion,
} from '../../operations/retourenavis-ankuendigen.js';
import type {
  TakeBackOfferRequest,
  TakeBackOfferResponse,
} from '../../operations/ruecknahmeangebot-anfordern.js';
import type { ConnectionTestRequest } from '../../operations/verbindung-testen.js';
import {
  type ContractDataRequest,
  type ContractDataResponse,
  type OrderWindow,
  type SpecialDay,
  VERTRAGSDATEN_TAGE,
} from '../../operations/vertragsdaten-abfragen.js';
import {
  barcodeReferenz,
  druckbareKennung,
  freeText,
  int32,
  kundenKennung,
  lieferscheinnummer,
  positiveInt32,
  pzn,
  supportId,
  uuid,
  vertragsdatenZeit,
  withOptional,
  xsdDate,
  xsdDateTime,
} from './document-values.js';

/**
 * Request and response models for verbindungTesten, vertragsdatenAbfragen, ruecknahmeangebotAnfordern,
 * the Lieferavis and Retourenavis operations and dokumentAbfragen, valid for the XSD of `version`.
 * Lists are kept short (the schema's maxima are tested separately) so that hundreds of documents
 * validate in one xmllint run.
 */

/** ClientSoftwareKennung of verbindungTesten, vertragsdatenAbfragen, ruecknahmeangebotAnfordern: 1–80. */
const clientSoftwareId = freeText(1, 80);
/** The v2-only operations type it as plain xs:string: any length, even empty. */
const plainClientSoftwareId = freeText(0, 100);

export const connectionTestRequest: fc.Arbitrary<ConnectionTestRequest> = fc.record({ clientSoftwareId });

export function contractDataRequest(version: Msv3Version): fc.Arbitrary<ContractDataRequest> {
  return version === 1
    ? fc.record({ clientSoftwareId })
    : fc.record({ clientSoftwareId, manualQuery: fc.boolean() });
}

const day = fc.constantFrom(...VERTRAGSDATEN_TAGE);

function orderWindow(version: Msv3Version): fc.Arbitrary<OrderWindow> {
  const mainOrderTime = fc.record({ day, time: vertragsdatenZeit });
  return version === 1
    ? withOptional<OrderWindow>({ day, cutoff: vertragsdatenZeit, mainOrderTime }, ['day', 'cutoff'])
    : fc.record({ day, cutoff: vertragsdatenZeit, mainOrderTime });
}

const specialDay: fc.Arbitrary<SpecialDay> = fc.record({
  date: xsdDate,
  windows: fc.array(fc.record({ cutoff: vertragsdatenZeit, mainOrderTime: vertragsdatenZeit }), {
    maxLength: 3,
  }),
});

const agreedTerms = fc.record({ maxFreeOrderLabels: int32, agreed: fc.boolean() });

export function contractDataResponse(version: Msv3Version): fc.Arbitrary<ContractDataResponse> {
  const common = {
    customerId: kundenKennung,
    orderWindows: fc.array(orderWindow(version), { minLength: 1, maxLength: 6 }),
    orderTypes: fc.record({
      NORMAL: fc.record({ maxFreeOrderLabels: int32 }),
      STAPEL: agreedTerms,
      SONDER: agreedTerms,
      VERSAND: fc.record({
        maxFreeOrderLabels: int32,
        agreed: fc.boolean(),
        completeContainersOnly: fc.boolean(),
      }),
    }),
    substitutionAgreed: fc.boolean(),
    specificAvailabilityAgreed: fc.boolean(),
    bulkAvailabilityAgreed: fc.boolean(),
    takeBackOffersAgreed: fc.boolean(),
  };
  return version === 1
    ? fc.record({ ...common, validFrom: xsdDate, specialDays: fc.constant([]) })
    : fc.record({
        ...common,
        automaticRetrieval: fc.boolean(),
        specialDays: fc.array(specialDay, { maxLength: 4 }),
      });
}

export function takeBackOfferRequest(version: Msv3Version): fc.Arbitrary<TakeBackOfferRequest> {
  const article = fc.record({ pzn, quantity: fc.integer({ min: 1, max: maxQuantity(version) }) });
  return fc.record({
    clientSoftwareId,
    id: uuid,
    articles: fc.array(article, { minLength: 1, maxLength: 8 }),
  });
}

export const takeBackOfferResponse: fc.Arbitrary<TakeBackOfferResponse> = fc.record({
  id: uuid,
  referenceId: freeText(1, 80),
});

export const newDeliveryNoticesRequest: fc.Arbitrary<NewDeliveryNoticesRequest> = fc.record({
  clientSoftwareId: plainClientSoftwareId,
});

export const deliveryNoticeHistoryRequest: fc.Arbitrary<DeliveryNoticeHistoryRequest> =
  withOptional<DeliveryNoticeHistoryRequest>(
    {
      clientSoftwareId: plainClientSoftwareId,
      deliveryNoteNumber: lieferscheinnummer,
      barcodeReference: barcodeReferenz,
    },
    ['clientSoftwareId'],
  );

export const confirmDeliveryNoticesRequest: fc.Arbitrary<ConfirmDeliveryNoticesRequest> = fc.record({
  clientSoftwareId: plainClientSoftwareId,
  deliveryNoteNumbers: fc.array(lieferscheinnummer, { minLength: 1, maxLength: 10 }),
});

const deliveredPortion = withOptional<DeliveredPortion>(
  {
    orderId: uuid,
    quantity: positiveInt32,
    parcelNumber: freeText(1, 20),
    batch: freeText(0, 50),
    expiryDate: xsdDate,
  },
  ['quantity'],
);

const shortage = withOptional<Shortage>({ orderId: uuid, quantity: positiveInt32 }, ['quantity']);

const noticeLine = withOptional<DeliveryNoticeLine>(
  {
    pzn,
    articleName: freeText(1, 50),
    containerId: druckbareKennung,
    delivered: fc.array(deliveredPortion, { maxLength: 3 }),
    shortages: fc.array(shortage, { maxLength: 2 }),
  },
  ['pzn', 'delivered', 'shortages'],
);

const deliveryNotice: fc.Arbitrary<DeliveryNotice> = withOptional<DeliveryNotice>(
  {
    deliveryNoteNumber: lieferscheinnummer,
    barcodeReference: barcodeReferenz,
    orderType: fc.constantFrom(...AUFTRAGSARTEN),
    orderLabel: druckbareKennung,
    documentDate: xsdDate,
    deliveryTime: xsdDateTime,
    tour: freeText(1, 80),
    hasShortages: fc.boolean(),
    lines: fc.array(noticeLine, { minLength: 1, maxLength: 4 }),
    documentId: uuid,
  },
  [
    'deliveryNoteNumber',
    'barcodeReference',
    'orderType',
    'orderLabel',
    'documentDate',
    'hasShortages',
    'lines',
  ],
);

export const deliveryNoticesResponse: fc.Arbitrary<DeliveryNoticesResponse> = fc.record({
  notices: fc.array(deliveryNotice, { maxLength: 3 }),
});

const positionFields = {
  positionRef: fc.integer({ min: 1, max: 999 }),
  deliveryNoteNumber: lieferscheinnummer,
  pzn,
  quantity: fc.integer({ min: 1, max: 9999 }),
  reason: fc.constantFrom(...RETOURE_GRUENDE),
  batch: freeText(0, 50),
  expiryDate: xsdDate,
};
const requiredPositionFields: (keyof ReturnPosition)[] = [
  'positionRef',
  'deliveryNoteNumber',
  'pzn',
  'quantity',
  'reason',
];

const returnPosition: fc.Arbitrary<ReturnPosition> = withOptional<ReturnPosition>(
  positionFields,
  requiredPositionFields,
);

const assessedPosition = withOptional<AssessedReturnPosition>(
  { ...positionFields, verdict: fc.constantFrom(...RETOUREN_ANTEIL_TYPEN) },
  [...requiredPositionFields, 'verdict'],
);

const positions = fc.array(returnPosition, { minLength: 1, maxLength: 5 });

const returnEnquiry: fc.Arbitrary<ReturnEnquiry> = fc.record({ id: uuid, supportId, positions });

export const returnEnquiryRequest: fc.Arbitrary<ReturnEnquiryRequest> = withOptional<ReturnEnquiryRequest>(
  { clientSoftwareId: plainClientSoftwareId, enquiry: returnEnquiry },
  [],
);

export const returnEnquiryResponse: fc.Arbitrary<ReturnEnquiryResponse> = withOptional<ReturnEnquiryResponse>(
  {
    answer: fc.record({
      id: uuid,
      supportId,
      positions: fc.array(assessedPosition, { minLength: 1, maxLength: 5 }),
    }),
  },
  [],
);

const companyText = freeText(0, 100);

const returnAnnouncement: fc.Arbitrary<ReturnAnnouncement> = withOptional<ReturnAnnouncement>(
  {
    id: uuid,
    supportId,
    positions,
    registryCourt: companyText,
    commercialRegisterNumber: companyText,
    vatId: companyText,
    taxNumber: companyText,
    bankName: companyText,
    bic: companyText,
    iban: companyText,
  },
  ['id', 'supportId', 'positions'],
);

export const returnAnnouncementRequest: fc.Arbitrary<ReturnAnnouncementRequest> =
  withOptional<ReturnAnnouncementRequest>(
    { clientSoftwareId: plainClientSoftwareId, announcement: returnAnnouncement },
    [],
  );

const returnPortion = withOptional<ReturnPortion>(
  {
    verdict: fc.constantFrom(...RETOUREN_ANTEIL_TYPEN),
    wholesalerReference: lieferscheinnummer,
    documentId: uuid,
    pickupTime: xsdDateTime,
    tour: freeText(1, 80),
    positions,
  },
  ['verdict', 'positions'],
);

export const returnAnnouncementResponse: fc.Arbitrary<ReturnAnnouncementResponse> =
  withOptional<ReturnAnnouncementResponse>(
    {
      answer: fc.record({
        id: uuid,
        supportId,
        portions: fc.array(returnPortion, { minLength: 1, maxLength: 4 }),
      }),
    },
    [],
  );

export const documentRequest: fc.Arbitrary<DocumentRequest> = withOptional<DocumentRequest>(
  { clientSoftwareId: plainClientSoftwareId, documentId: uuid },
  [],
);

/** 1..2000 arbitrary bytes (the 2 MiB maximum is tested separately). */
export const documentResponse: fc.Arbitrary<DocumentResponse> = withOptional<DocumentResponse>(
  {
    document: fc.record({
      documentId: uuid,
      data: fc.uint8Array({ minLength: 1, maxLength: 2000 }).map((bytes) => Buffer.from(bytes)),
    }),
  },
  [],
);
