import { Type } from 'typebox';
import { ERROR_CATALOGUE, type ErrorKind } from '../../core/errors.js';

/** `upstream` of an error: what the wholesaler itself said. */
export const UpstreamTextsSchema = Type.Object(
  {
    kind: Type.Optional(Type.String()),
    error_code: Type.Optional(Type.String()),
    user_text: Type.Optional(Type.String()),
    technical_text: Type.Optional(Type.String()),
    http_status: Type.Optional(Type.Integer()),
  },
  { description: "The wholesaler's own fault or rejection texts." },
);

/** The body of every 4xx/5xx response (see `ApiError.toBody`); registered as the default response of every route. */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.Enum(Object.keys(ERROR_CATALOGUE) as ErrorKind[], {
      description: 'Error kind; see the error catalogue.',
    }),
    message: Type.String({ description: 'Human-readable explanation.' }),
    wholesaler: Type.Union([Type.String(), Type.Null()], { description: 'Wholesaler involved, if any.' }),
    error_code: Type.String({ description: 'Stable numeric code, as a string.' }),
    request_id: Type.String({
      description:
        "This HTTP request's id (`req_…`), the same as the X-Request-Id response header: quote it to support. Not the MSV3 order id, which an order's result calls `request_id`.",
    }),
    param: Type.Optional(Type.String({ description: 'The offending field, e.g. `items[3].pzn`.' })),
    order_id: Type.Optional(
      Type.String({
        description:
          'With `order_outcome_unknown`: the gateway order (`GW-…`) that was sent; ask its status or retry with the same Idempotency-Key.',
      }),
    ),
    upstream: Type.Optional(UpstreamTextsSchema),
  },
  { $id: 'ErrorBody', title: 'ErrorBody' },
);
