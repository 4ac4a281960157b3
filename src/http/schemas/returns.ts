import { Type } from 'typebox';
import { RETURN_REASONS, RETURN_VERDICTS, type ReturnReason } from '../../services/returns/view.js';
import { NullableString, PznSchema, WholesalerIdSchema } from './common.js';
import { TRACKING_NUMBER_PATTERN } from './deliveries.js';
import { CalendarDate, XmlText } from './strings.js';

/**
 * Schemas of the return endpoints (docs/msv3.md "Returns", "Return announcements", "Take-back offers") and
 * their examples.
 */

const REASON_DESCRIPTION =
  'Return reason → MSV3 `Retouregrund`: `order_error` (Bestellfehler, ordered by mistake), `not_delivered` (BerechnetNichtGeliefert, invoiced but not received), `damaged` (Beschaedigt), `expiry_too_short` (VerfallZuKurz), `over_delivered` (ZuvielGeliefert).';

const VERDICT_DESCRIPTION =
  'MSV3 `RetourenAnteilTyp`. Accepted: `accepted` (RetoureAkzeptiert), `accepted_consultation_required` (…RueckspracheNoetig: call the wholesaler), `accepted_no_shipment_needed` (…KeineRuecksendungNoetig: credited, keep or dispose of the goods). Refused: `delivery_note_unknown`, `pzn_not_on_delivery_note`, `not_taken_back` (KeineRuecknahme), `return_period_exceeded`, `quantity_exceeds_delivery` (MengeUeberschritten).';

const ReturnReasonSchema = Type.Enum(Object.keys(RETURN_REASONS) as ReturnReason[], {
  description: REASON_DESCRIPTION,
});
const VerdictSchema = Type.Enum(
  Object.values(RETURN_VERDICTS).map((v) => v.verdict),
  { description: VERDICT_DESCRIPTION },
);

const ReturnItemInputSchema = Type.Object(
  {
    tracking_number: Type.String({
      pattern: TRACKING_NUMBER_PATTERN,
      description:
        'The original delivery-note number (`Lieferscheinnummer`, 1 to 30 of `a-z A-Z 0-9 # + * / - _`).',
      examples: ['LS-2025-000123'],
    }),
    pzn: PznSchema,
    quantity: Type.Integer({ minimum: 1, maximum: 9999, description: 'Units to return, 1 to 9,999.' }),
    reason: ReturnReasonSchema,
    batch: Type.Optional(XmlText({ minLength: 1, maxLength: 50, description: 'Batch (`Charge`).' })),
    expiry_date: Type.Optional(
      CalendarDate({
        description: 'Expiry date (`Verfalldatum`, the last usable day), `YYYY-MM-DD`, a date that exists.',
      }),
    ),
  },
  { additionalProperties: false },
);

const ItemsSchema = Type.Array(ReturnItemInputSchema, {
  minItems: 1,
  maxItems: 999,
  description:
    '1 to 999 items. A PZN may repeat (other delivery note, reason or batch). Item `n` becomes MSV3 position `n + 1`, returned as `position`.',
});

const DAMAGED_ITEM = {
  tracking_number: 'LS-2025-000123',
  pzn: '04114918',
  quantity: 2,
  reason: 'damaged',
  batch: 'CH-A1',
  expiry_date: '2027-11-30',
};

const ITEMS_EXAMPLE = [
  DAMAGED_ITEM,
  { tracking_number: 'LS-2025-000123', pzn: '1234562', quantity: 1, reason: 'over_delivered' },
];

export const ReturnBodySchema = Type.Object(
  { wholesaler: WholesalerIdSchema, items: ItemsSchema },
  { additionalProperties: false, examples: [{ wholesaler: 'phoenix', items: ITEMS_EXAMPLE }] },
);

const COMPANY_FIELDS = {
  registry_court: 'Registry court (`Amtsgericht`).',
  commercial_register_number: 'Commercial register number (`Handelsregisternummer`).',
  vat_id: 'VAT id (`UmsatzsteuerID`).',
  tax_number: 'Tax number (`Steuernummer`).',
  bank_name: 'Bank (`Bankname`).',
  bic: '`BIC`.',
  iban: '`IBAN`.',
};

const CompanySchema = Type.Object(
  Object.fromEntries(
    Object.entries(COMPANY_FIELDS).map(([name, description]) => [
      name,
      Type.Optional(XmlText({ maxLength: 100, description })),
    ]),
  ),
  {
    additionalProperties: false,
    description:
      'Optional company details, mainly needed when the manufacturer issues the return document; at most 100 characters each.',
  },
);

export const AnnounceBodySchema = Type.Object(
  { wholesaler: WholesalerIdSchema, items: ItemsSchema, company: Type.Optional(CompanySchema) },
  {
    additionalProperties: false,
    examples: [{ wholesaler: 'phoenix', items: ITEMS_EXAMPLE, company: { vat_id: 'DE123456789' } }],
  },
);

const RETURN_ITEM_PROPERTIES = {
  position: Type.Integer({ description: 'MSV3 `PosRefID`: the request item index + 1.' }),
  tracking_number: Type.String(),
  pzn: Type.String({ description: '8 digits.' }),
  quantity: Type.Integer(),
  reason: ReturnReasonSchema,
  batch: NullableString('`Charge`, or null.'),
  expiry_date: NullableString('`Verfalldatum`, or null.'),
};

const ReturnItemSchema = Type.Object(RETURN_ITEM_PROPERTIES, { additionalProperties: false });

const HEADER_PROPERTIES = {
  wholesaler: Type.String(),
  return_id: Type.String({ description: 'MSV3 `ID` of this enquiry or announcement (uuid).' }),
  support_id: Type.Integer({
    description: 'MSV3 `RetoureSupportID`: a number to quote to the wholesaler’s support.',
  }),
};

/** The two items of the response examples, as the enquiry and the announcement echo them. */
const DAMAGED_ITEM_EXAMPLE = { position: 1, ...DAMAGED_ITEM };
const OVER_DELIVERED_ITEM_EXAMPLE = {
  position: 2,
  tracking_number: 'LS-2025-000123',
  pzn: '01234562',
  quantity: 1,
  reason: 'over_delivered',
  batch: null,
  expiry_date: null,
};

export const ReturnEnquiryResponseSchema = Type.Object(
  {
    ...HEADER_PROPERTIES,
    items: Type.Array(
      Type.Object(
        {
          ...RETURN_ITEM_PROPERTIES,
          verdict: VerdictSchema,
          accepted: Type.Boolean({ description: 'True for the three `accepted…` verdicts.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'The wholesaler’s verdict per item, by `position`.' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        return_id: '2f4e6a80-1b3c-4d5e-8f70-9a1b2c3d4e5f',
        support_id: 48213,
        items: [
          { ...DAMAGED_ITEM_EXAMPLE, verdict: 'accepted', accepted: true },
          { ...OVER_DELIVERED_ITEM_EXAMPLE, verdict: 'pzn_not_on_delivery_note', accepted: false },
        ],
      },
    ],
  },
);

export const ReturnAnnouncementResponseSchema = Type.Object(
  {
    ...HEADER_PROPERTIES,
    portions: Type.Array(
      Type.Object(
        {
          verdict: VerdictSchema,
          accepted: Type.Boolean(),
          reference: NullableString(
            'The wholesaler’s reference (`GHReferenzID`, printed as DataMatrix on the slip); set once anything is accepted.',
          ),
          document_id: NullableString(
            'The return slip to print (`DokumentID`, fetch with `GET /v1/documents/{id}`); null: print your own slip.',
          ),
          pickup_at: NullableString(
            'Expected pick-up (`Abholzeitpunkt`), German local time `YYYY-MM-DDThh:mm:ss`.',
          ),
          pickup_at_offset: NullableString('The offset the wholesaler wrote with that time, or null.'),
          tour: NullableString('The pick-up tour (`Tour`).'),
          items: Type.Array(ReturnItemSchema),
        },
        { additionalProperties: false },
      ),
      { description: 'MSV3 `RetourenAnteil`, 1 to 15: items sharing one verdict and one pick-up.' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        return_id: '7c9d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f',
        support_id: 48214,
        portions: [
          {
            verdict: 'accepted',
            accepted: true,
            reference: 'R-000017',
            document_id: '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a',
            pickup_at: '2025-03-19T10:00:00',
            pickup_at_offset: '+01:00',
            tour: 'Vormittagstour',
            items: [DAMAGED_ITEM_EXAMPLE],
          },
          {
            verdict: 'pzn_not_on_delivery_note',
            accepted: false,
            reference: null,
            document_id: null,
            pickup_at: null,
            pickup_at_offset: null,
            tour: null,
            items: [OVER_DELIVERED_ITEM_EXAMPLE],
          },
        ],
      },
    ],
  },
);

export const OfferBodySchema = Type.Object(
  {
    wholesaler: WholesalerIdSchema,
    items: Type.Array(
      Type.Object(
        {
          pzn: PznSchema,
          quantity: Type.Integer({
            minimum: 1,
            maximum: 99_999,
            description: 'Units to give back: 1 to 99,999 (MSV3 v2), 1 to 9,999 for v1 wholesalers.',
          }),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: 1000,
        description: '1 to 1,000 articles, each PZN once (400 names the repeat).',
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        items: [
          { pzn: '04114918', quantity: 5 },
          { pzn: '1234562', quantity: 2 },
        ],
      },
    ],
  },
);

export const OfferResponseSchema = Type.Object(
  {
    wholesaler: Type.String(),
    offer_id: Type.String({ description: 'MSV3 `ruecknahmeangebot/@Id` of this request (uuid).' }),
    reference_id: Type.String({
      description:
        'The wholesaler’s `ReferenzId`: quote it when it contacts you (or you it) about the offer.',
    }),
    items: Type.Array(
      Type.Object({ pzn: Type.String(), quantity: Type.Integer() }, { additionalProperties: false }),
      { description: 'The articles as sent, PZNs with 8 digits.' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesaler: 'phoenix',
        offer_id: '3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f',
        reference_id: 'RA-2025-000042',
        items: [
          { pzn: '04114918', quantity: 5 },
          { pzn: '01234562', quantity: 2 },
        ],
      },
    ],
  },
);
