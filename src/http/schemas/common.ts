import { Type } from 'typebox';
import { DEFECT_REASONS, DELIVERY_TYPES, SUBSTITUTION_REASONS } from '../../services/delivery-parts.js';

/** Schemas shared by the wholesaler endpoints (availability, orders, contracts, …). */

export const PZN_PATTERN = '^[0-9]{1,8}$';

export const PznSchema = Type.String({
  pattern: PZN_PATTERN,
  description:
    'PZN, 1 to 8 digits; shorter ones are left-padded with zeros to 8 digits. The last of the 8 is a check digit: the first seven weighted 1 to 7, summed, modulo 11 (a remainder of 10 is no PZN).',
  examples: ['04114918'],
});

export const WholesalerIdSchema = Type.String({
  minLength: 1,
  maxLength: 80,
  description:
    'Wholesaler id from `GET /v1/wholesalers`. With a pk_test_ key, `<id>_test` reaches that wholesaler’s own test server; every other id reaches the built-in sandbox.',
  examples: ['phoenix'],
});

/** `?wholesaler=` for the GET endpoints. */
export const WholesalerQuerySchema = Type.Object(
  { wholesaler: WholesalerIdSchema },
  { additionalProperties: false },
);

const defectReasons = [...new Set(Object.values(DEFECT_REASONS).filter((r): r is string => r !== null))];

/** A string or null, with what it means. */
export const NullableString = (description: string) =>
  Type.Union([Type.String(), Type.Null()], { description });

export const DeliveryPortionSchema = Type.Object(
  {
    type: Type.Enum(Object.values(DELIVERY_TYPES), {
      description:
        'MSV3 `Typ`: `normal` (Normal, next regular tour), `network` (Verbund, from a partner warehouse), `backorder` (Nachlieferung, delivered later), `special_procurement` (Dispo), `not_deliverable` (NichtLieferbar); order answers also `not_delivered_<normal|network|backorder|special_procurement>_possible` (KeineLieferungAber…Moeglich: nothing delivered although that kind of delivery was possible).',
    }),
    quantity: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Units in this portion; null when the wholesaler left `Menge` nil (unspecific answers).',
    }),
    tour: NullableString('Tour name, e.g. `Mittagstour`; null when none was given.'),
    tour_id: Type.Optional(NullableString('Printable tour id (`TourId`); order answers only.')),
    estimated_at: NullableString(
      'Expected delivery as German local date-time `YYYY-MM-DDThh:mm:ss` (no zone); null when unknown.',
    ),
    estimated_at_offset: NullableString(
      'Additive: the UTC offset the wholesaler sent with the time (`+01:00`, `Z`), null if none.',
    ),
    reason: Type.Union([Type.Enum(defectReasons), Type.Null()], {
      description:
        'Additive: MSV3 defect reason (`Grund`): `out_of_stock` (FehltZurzeit), `manufacturer_cannot_deliver` (v1 NichtLieferbar / v2 HerstellerNichtLieferbar), `direct_from_manufacturer_only` (NurDirekt), `not_carried` (NichtGefuehrt), `unknown_article` (ArtikelNrUnbekannt), `withdrawn_from_market` (AusserHandel), `no_supply_for_customer` (KeinBezug), `excluded_from_transport` (Transportausschluss), `partial_shortage` (Teildefekt); null for KeineAngabe (always so for `normal` and `network`).',
    }),
    tour_deviation: Type.Union([Type.Boolean(), Type.Null()], {
      description:
        'Additive: MSV3 v2 `Tourabweichung`, true when this portion cannot go with the next tour (narcotics, cold chain, transport exclusion); null for v1 wholesalers.',
    }),
  },
  { additionalProperties: false },
);

export const SubstitutionSchema = Type.Union(
  [
    Type.Object(
      {
        reason: Type.Enum(Object.values(SUBSTITUTION_REASONS), {
          description:
            '`successor_product` (Nachfolgeprodukt), `reimport_or_parallel_import` (ReUndParallelImport), `proposal` (Vorschlag: only a suggestion, the deliveries still describe the requested PZN).',
        }),
        defect_reason: Type.Union([Type.Enum(defectReasons), Type.Null()], {
          description: 'Why the requested PZN itself is not delivered (values as `deliveries[].reason`).',
        }),
        pzn: Type.String({ description: 'The PZN that would be delivered instead (8 digits).' }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      'MSV3 `Substitution`, or null. Unless `reason` is `proposal`, the deliveries describe the substitute.',
  },
);
