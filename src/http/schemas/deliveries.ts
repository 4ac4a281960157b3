import { Type } from 'typebox';
import { ORDER_TYPES } from '../../services/order-types.js';
import { NullableString, WholesalerIdSchema } from './common.js';
import { BARCODE_PATTERN } from './patterns.js';
import { CalendarDate } from './strings.js';

/**
 * Schemas of the delivery-notice endpoints (docs/msv3.md "Delivery notices", "Delivery history") and their
 * examples.
 */

/** MSV3 `LieferscheinnummerType`: 1–30 letters, digits and `# + * / - _`. */
export const TRACKING_NUMBER_PATTERN = '^[a-zA-Z0-9#+*/_-]{1,30}$';

const TrackingNumberSchema = Type.String({
  pattern: TRACKING_NUMBER_PATTERN,
  description:
    'Delivery-note number (MSV3 `Lieferscheinnummer`): 1 to 30 letters, digits and `# + * / - _`. In a query string, percent-encode `#`, `+` and `/`.',
  examples: ['LS-2025-000123'],
});

const BarcodeSchema = Type.String({
  pattern: BARCODE_PATTERN,
  maxLength: 30,
  description:
    'The barcode printed on the delivery note, prefix included (MSV3 `BarcodeReferenz`): optional digits, one of `* + # _ ?`, then letters, digits and `# + * / - _ ?`; at most 30 characters. Percent-encode it in a query string.',
  examples: ['01*LS2025000123'],
});

const DeliveryItemSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity_delivered: Type.Integer({
      description: 'Sum of the delivered parts (`Anteil/@MengeGeliefert`) of all lines with this PZN.',
    }),
    shortages: Type.Integer({
      description: 'Sum of the shortages (`Fehlmenge/@Menge`) of all lines with this PZN.',
    }),
    article_name: NullableString('Additive: `Artikelbezeichnung` as printed, or null.'),
  },
  { additionalProperties: false },
);

const DeliveryLineSchema = Type.Object(
  {
    line: Type.Integer({ description: 'Position on the printed note, from 1.' }),
    pzn: Type.String(),
    article_name: NullableString('`Artikelbezeichnung`, or null.'),
    container_id: NullableString('`GebindeId` (shipping orders only), or null.'),
    quantity_delivered: Type.Integer(),
    shortages: Type.Integer(),
    delivered: Type.Array(
      Type.Object(
        {
          quantity: Type.Integer(),
          batch: NullableString('`Charge`.'),
          expiry_date: NullableString('`Verfalldatum`, the last usable day (`YYYY-MM-DD`).'),
          parcel_number: NullableString('`Packstuecknummer`: the tote or parcel, usually a barcode.'),
          sub_order_id: NullableString(
            '`AuftragsID`: the MSV3 sub-order uuid, when the wholesaler can tell.',
          ),
        },
        { additionalProperties: false },
      ),
      { description: 'The delivered parts (`Anteil`).' },
    ),
    shortage_parts: Type.Array(
      Type.Object(
        { quantity: Type.Integer(), sub_order_id: NullableString('`AuftragsID`, when known.') },
        { additionalProperties: false },
      ),
      {
        description:
          'Shortages (`Fehlmenge`): confirmed when ordered but not delivered; no later delivery may be assumed.',
      },
    ),
  },
  { additionalProperties: false },
);

const DELIVERY_NOTICE_PROPERTIES = {
  tracking_number: Type.String({
    description: 'Delivery-note number (`Lieferscheinnummer`); used to confirm.',
  }),
  barcode: Type.String({ description: '`BarcodeReferenz` printed on the note.' }),
  order_type: Type.Enum([...ORDER_TYPES], {
    description: '`Auftragsart`: `normal`, `batch` (STAPEL), `special` (SONDER), `shipping` (VERSAND).',
  }),
  date: Type.String({ description: 'Document date (`Belegdatum`), `YYYY-MM-DD`.' }),
  has_shortages: Type.Boolean({ description: 'At least one line has a shortage: tell the user.' }),
  items: Type.Array(DeliveryItemSchema, {
    description: 'One entry per PZN, in order of first appearance; lines of the same PZN summed.',
  }),
  order_label: Type.String({ description: 'Additive: `Auftragskennung` of the order.' }),
  estimated_at: NullableString(
    'Additive: expected arrival (`Lieferzeitpunkt`), German local time `YYYY-MM-DDThh:mm:ss`.',
  ),
  estimated_at_offset: NullableString('Additive: the offset the wholesaler wrote with that time, or null.'),
  tour: NullableString('Additive: the delivering tour (`Tour`).'),
  document_id: NullableString(
    'Additive: the PDF delivery note, for `GET /v1/documents/{id}` (`DokumentId`).',
  ),
  lines: Type.Array(DeliveryLineSchema, { description: 'Additive: the printed lines with all MSV3 detail.' }),
};

export const DeliveryNoticeSchema = Type.Object(DELIVERY_NOTICE_PROPERTIES, { additionalProperties: false });

const DeliveryHistoryEntrySchema = Type.Object(
  {
    ...DELIVERY_NOTICE_PROPERTIES,
    first_seen_at: Type.String({
      description: 'When this gateway first saw the notice for this customer (ISO 8601, UTC).',
    }),
    last_seen_at: Type.String({ description: 'When it last saw it (ISO 8601, UTC).' }),
    confirmed_at: NullableString('When it was confirmed through this gateway (ISO 8601, UTC), or null.'),
  },
  { additionalProperties: false },
);

export const DELIVERY_NOTICE_EXAMPLE = {
  tracking_number: 'LS-2025-000123',
  barcode: '01*LS2025000123',
  order_type: 'normal',
  date: '2025-03-18',
  has_shortages: true,
  items: [
    { pzn: '04114918', quantity_delivered: 3, shortages: 1, article_name: 'IBUPROFEN 400 20 ST' },
    { pzn: '01234562', quantity_delivered: 0, shortages: 10, article_name: null },
  ],
  order_label: 'K1',
  estimated_at: '2025-03-18T14:30:00',
  estimated_at_offset: '+01:00',
  tour: 'Mittagstour',
  document_id: '5b0f1f5e-8c1a-4f0e-9d3a-1c2b3d4e5f60',
  lines: [
    {
      line: 1,
      pzn: '04114918',
      article_name: 'IBUPROFEN 400 20 ST',
      container_id: null,
      quantity_delivered: 2,
      shortages: 0,
      delivered: [
        {
          quantity: 2,
          batch: 'CH-A1',
          expiry_date: '2027-11-30',
          parcel_number: 'P0001',
          sub_order_id: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f',
        },
      ],
      shortage_parts: [],
    },
    {
      line: 2,
      pzn: '04114918',
      article_name: null,
      container_id: null,
      quantity_delivered: 1,
      shortages: 1,
      delivered: [
        { quantity: 1, batch: 'CH-B2', expiry_date: null, parcel_number: null, sub_order_id: null },
      ],
      shortage_parts: [{ quantity: 1, sub_order_id: '0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f' }],
    },
    {
      line: 3,
      pzn: '01234562',
      article_name: null,
      container_id: null,
      quantity_delivered: 0,
      shortages: 10,
      delivered: [],
      shortage_parts: [{ quantity: 10, sub_order_id: null }],
    },
  ],
};

export const DeliveriesResponseSchema = Type.Object(
  { wholesaler: Type.String(), deliveries: Type.Array(DeliveryNoticeSchema) },
  {
    additionalProperties: false,
    examples: [{ wholesaler: 'phoenix', deliveries: [DELIVERY_NOTICE_EXAMPLE] }],
  },
);

export const ConfirmBodySchema = Type.Object(
  {
    wholesaler: WholesalerIdSchema,
    tracking_numbers: Type.Array(TrackingNumberSchema, {
      minItems: 1,
      maxItems: 999,
      description: '1 to 999 delivery-note numbers; repeats are sent once.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ wholesaler: 'phoenix', tracking_numbers: ['LS-2025-000123'] }],
  },
);

export const ConfirmResponseSchema = Type.Object(
  {
    wholesaler: Type.String(),
    confirmed: Type.Array(Type.String(), { description: 'The confirmed tracking numbers, each once.' }),
    status: Type.Literal('confirmed'),
  },
  {
    additionalProperties: false,
    examples: [{ wholesaler: 'phoenix', confirmed: ['LS-2025-000123'], status: 'confirmed' }],
  },
);

const DateSchema = (description: string) => CalendarDate({ description, examples: ['2025-03-01'] });

export const HistoryQuerySchema = Type.Object(
  {
    wholesaler: WholesalerIdSchema,
    tracking_number: Type.Optional(TrackingNumberSchema),
    barcode: Type.Optional(BarcodeSchema),
    limit: Type.Integer({
      minimum: 1,
      maximum: 100,
      default: 20,
      description: 'Stored listing only: notices per page, 1 to 100 (default 20).',
    }),
    starting_after: Type.Optional(
      Type.String({
        pattern: TRACKING_NUMBER_PATTERN,
        description:
          'Stored listing only: the `tracking_number` of the last notice of the previous page; the page continues after it.',
      }),
    ),
    date_from: Type.Optional(DateSchema('Stored listing only: document date on or after (`YYYY-MM-DD`).')),
    date_to: Type.Optional(DateSchema('Stored listing only: document date on or before (`YYYY-MM-DD`).')),
  },
  { additionalProperties: false, examples: [{ wholesaler: 'phoenix', limit: 20 }] },
);

export const HistoryResponseSchema = Type.Object(
  {
    wholesaler: Type.String(),
    deliveries: Type.Array(DeliveryHistoryEntrySchema),
    has_more: Type.Boolean({ description: 'More notices follow; ask again with `starting_after`.' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        deliveries: [
          {
            ...DELIVERY_NOTICE_EXAMPLE,
            first_seen_at: '2025-03-18T11:02:13.412Z',
            last_seen_at: '2025-03-18T11:02:13.412Z',
            confirmed_at: '2025-03-18T15:40:02.007Z',
          },
        ],
        has_more: false,
      },
    ],
  },
);
