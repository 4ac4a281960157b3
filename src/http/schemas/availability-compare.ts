import { Type } from 'typebox';
import { ERROR_CATALOGUE, type ErrorKind } from '../../core/errors.js';
import { COMPARE_DEADLINE } from '../../services/availability/compare.js';
import { AvailabilityItemSchema, AvailabilityItemsSchema } from './availability.js';
import { NullableString, WholesalerIdSchema } from './common.js';
import { UpstreamTextsSchema } from './error.js';

/** POST /v1/availability/compare: the request and the answer (docs/multi-wholesaler.md). */

export const CompareBody = Type.Object(
  {
    wholesalers: Type.Array(WholesalerIdSchema, {
      minItems: 1,
      maxItems: 10,
      description:
        '1 to 10 distinct wholesaler ids in your order of preference, the main wholesaler first: the recommendation takes the first that delivers the full quantity.',
    }),
    items: AvailabilityItemsSchema,
    deadline_ms: Type.Optional(
      Type.Integer({
        minimum: COMPARE_DEADLINE.minMs,
        maximum: COMPARE_DEADLINE.maxMs,
        default: COMPARE_DEADLINE.defaultMs,
        description: `How long to wait for the wholesalers, in milliseconds (${COMPARE_DEADLINE.minMs} to ${COMPARE_DEADLINE.maxMs}). A wholesaler that has not answered then is stopped and reported as \`timeout\`; the others' answers come back at once.`,
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        wholesalers: ['phoenix', 'alliance', 'noweda'],
        items: [{ pzn: '09990300', quantity: 10 }],
        deadline_ms: 3000,
      },
    ],
  },
);

const WholesalerErrorSchema = Type.Object(
  {
    kind: Type.Enum(Object.keys(ERROR_CATALOGUE) as ErrorKind[], {
      description: 'Error kind, as a single call to this wholesaler would answer; see the error catalogue.',
    }),
    error_code: Type.String({ description: 'Stable numeric code of the kind, as a string.' }),
    message: Type.String({ description: 'What went wrong, naming the wholesaler.' }),
    retry_after: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Seconds after which asking this wholesaler again makes sense (what a single call would send as Retry-After); null when not said.',
    }),
    upstream: Type.Union([UpstreamTextsSchema, Type.Null()], {
      description: "The wholesaler's own fault texts, when it sent any.",
    }),
  },
  { additionalProperties: false },
);

const WholesalerAnswerSchema = Type.Object(
  {
    wholesaler: Type.String(),
    status: Type.Enum(['ok', 'error', 'timeout'], {
      description:
        '`ok`: `answer` holds its availability; `error`: it failed (`error`); `timeout`: it did not answer within `deadline_ms` (or its own call timeout) and was stopped.',
    }),
    elapsed_ms: Type.Integer({ description: 'How long this wholesaler took, or was waited for.' }),
    answer: Type.Union(
      [
        Type.Object(
          {
            response_type: Type.Union([Type.Enum(['standard', 'unspecific']), Type.Null()]),
            items: Type.Array(AvailabilityItemSchema),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'As POST /v1/availability answers for this wholesaler; null unless `status` is `ok`.' },
    ),
    error: Type.Union([WholesalerErrorSchema, Type.Null()], {
      description: 'What went wrong, as a single call would answer it; null when `status` is `ok`.',
    }),
  },
  { additionalProperties: false },
);

const ComparedItemSchema = Type.Object(
  {
    pzn: Type.String({ description: '8 digits.' }),
    quantity_requested: Type.Integer(),
    recommendation: Type.Object(
      {
        wholesaler: NullableString(
          'Where to order it: the first wholesaler in preference order that delivers the full quantity, else the one delivering the most (the earliest among equals); null when no wholesaler that answered delivers any. Never one that failed or timed out.',
        ),
        units: Type.Integer({ description: 'Units it delivers with a tour (normal and network portions).' }),
        estimated_at: NullableString('The earliest local delivery time of those units.'),
        delivers_all: Type.Boolean(),
        reason: Type.String({ description: 'Why, in one sentence.' }),
      },
      { additionalProperties: false },
    ),
    offers: Type.Array(
      Type.Object(
        {
          wholesaler: Type.String(),
          units: Type.Integer(),
          estimated_at: NullableString('The earliest local delivery time.'),
        },
        { additionalProperties: false },
      ),
      { description: 'What each wholesaler that answered delivers, in preference order.' },
    ),
  },
  { additionalProperties: false },
);

const portion = (type: string, quantity: number, at: string | null, reason: string | null) => ({
  type,
  quantity,
  tour: at === null ? null : 'Mittagstour',
  estimated_at: at,
  estimated_at_offset: at === null ? null : '+01:00',
  reason,
  tour_deviation: false,
});

const COMPARE_EXAMPLE = {
  deadline_ms: 3000,
  wholesalers: [
    {
      wholesaler: 'phoenix',
      status: 'ok',
      elapsed_ms: 48,
      answer: {
        response_type: 'standard',
        items: [
          {
            pzn: '09990300',
            quantity_requested: 10,
            available: false,
            deliveries: [portion('not_deliverable', 10, null, 'out_of_stock')],
            substitution: null,
            invalid_pzn: null,
          },
        ],
      },
      error: null,
    },
    {
      wholesaler: 'alliance',
      status: 'ok',
      elapsed_ms: 52,
      answer: {
        response_type: 'standard',
        items: [
          {
            pzn: '09990300',
            quantity_requested: 10,
            available: true,
            deliveries: [portion('normal', 10, '2025-03-18T14:30:00', null)],
            substitution: null,
            invalid_pzn: null,
          },
        ],
      },
      error: null,
    },
    {
      wholesaler: 'noweda',
      status: 'error',
      elapsed_ms: 61,
      answer: null,
      error: {
        kind: 'wholesaler_fault',
        error_code: '1501',
        message:
          'The wholesaler noweda answered with ServerFault: Der Dienst ist vorübergehend nicht verfügbar.',
        retry_after: null,
        upstream: {
          kind: 'ServerFault',
          error_code: 'S001',
          user_text: 'Der Dienst ist vorübergehend nicht verfügbar.',
          http_status: 500,
        },
      },
    },
  ],
  items: [
    {
      pzn: '09990300',
      quantity_requested: 10,
      recommendation: {
        wholesaler: 'alliance',
        units: 10,
        estimated_at: '2025-03-18T14:30:00',
        delivers_all: true,
        reason: 'phoenix cannot deliver it; alliance delivers all 10 on 18.03. at 14:30.',
      },
      offers: [
        { wholesaler: 'phoenix', units: 0, estimated_at: null },
        { wholesaler: 'alliance', units: 10, estimated_at: '2025-03-18T14:30:00' },
      ],
    },
  ],
};

export const CompareAnswerSchema = Type.Object(
  {
    deadline_ms: Type.Integer({ description: 'The deadline applied.' }),
    wholesalers: Type.Array(WholesalerAnswerSchema, { description: 'In request order.' }),
    items: Type.Array(ComparedItemSchema, { description: 'In request order.' }),
  },
  { additionalProperties: false, examples: [COMPARE_EXAMPLE] },
);
