import { Type } from 'typebox';
import { registerCustomWholesaler, removeCustomWholesaler } from '../../wholesalers/custom.js';
import type { AppDeps } from '../app-deps.js';
import { routeErrors } from '../route-errors.js';
import { CUSTOM_WHOLESALER_ID_PATTERN } from '../schemas/patterns.js';
import { NonBlankXmlText, XmlText } from '../schemas/strings.js';
import type { GatewayApp } from '../types.js';

const WholesalerSchema = Type.Object(
  {
    id: Type.String({
      description: 'Used as `wholesaler` in requests. Custom ids: `custom-<slug of name>-<6 hex>`.',
    }),
    name: Type.String(),
    endpoint: Type.Optional(Type.String({ description: 'Custom wholesalers only.' })),
    verified: Type.Boolean({
      description:
        '`true` for catalogue wholesalers. A custom one starts `false` and turns `true` after its first successful `POST /v1/connection/test` against its registered endpoint.',
    }),
    capabilities: Type.Array(Type.String(), {
      description:
        '`availability`, `bulk_availability`, `order`, `order_status`, `contracts`, `return_offers` and (MSV3 v2) `deliveries`, `returns`, `documents`. Empty for an unverified custom wholesaler; after verification filled from its contract data.',
    }),
    msv3_version: Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'Additive: MSV3 version.' }),
    route: Type.Enum(['sandbox', 'test_server', 'live'], {
      description:
        'Additive: where requests for this id go with the calling key: the built-in sandbox mock, the wholesaler’s own test server (`<id>_test`, pk_test_ keys) or its live server.',
    }),
  },
  { additionalProperties: false },
);

const WHOLESALER_EXAMPLE = {
  id: 'phoenix',
  name: 'PHOENIX Pharmahandel',
  verified: true,
  capabilities: ['availability', 'bulk_availability', 'order', 'order_status', 'contracts'],
  msv3_version: 2,
  route: 'sandbox',
};

const CUSTOM_EXAMPLE = {
  id: 'custom-hausapotheke-nord-3f9a1c',
  name: 'Hausapotheke Nord',
  endpoint: 'https://msv3.hausapotheke-nord.example/msv3/v2.0',
  verified: false,
  capabilities: [],
  msv3_version: 2,
  route: 'live',
};

const CustomWholesalerBody = Type.Object(
  {
    name: NonBlankXmlText({ minLength: 1, maxLength: 120, description: 'Display name.' }),
    endpoint: XmlText({
      minLength: 1,
      maxLength: 2000,
      description:
        'Base URL of the MSV3 server including the version segment; service paths (`/verfuegbarkeitAnfragen`, …) are appended. https for live keys; private, loopback and link-local hosts only when the operator allows them.',
    }),
    msv3_version: Type.Optional(
      Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'Additive: MSV3 version, default 2.' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Hausapotheke Nord', endpoint: 'https://msv3.hausapotheke-nord.example/msv3/v2.0' }],
  },
);

const CustomWholesalerParams = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 80,
    pattern: CUSTOM_WHOLESALER_ID_PATTERN,
    description: 'The custom wholesaler id, `custom-<slug of name>-<6 hex>`.',
    examples: [CUSTOM_EXAMPLE.id],
  }),
});

const LIST_ERRORS = routeErrors([]);
const REGISTER_ERRORS = routeErrors(['endpoint_not_allowed', 'conflict']);
const DELETE_ERRORS = routeErrors(['wholesaler_not_found']);

export function registerWholesalerRoutes(app: GatewayApp, deps: AppDeps): void {
  app.get(
    '/v1/wholesalers',
    {
      config: { errors: LIST_ERRORS },
      schema: {
        operationId: 'listWholesalers',
        tags: ['wholesalers'],
        summary: 'Wholesalers this key can use',
        responseDescription:
          "The wholesalers this API key can use: the catalogue for its mode (test keys also `<id>_test` where a test server is configured) and the account's custom wholesalers.",
        description:
          'The catalogue (live keys: wholesalers with a live endpoint; test keys: every wholesaler in the sandbox plus `<id>_test` for those with a test server) and the custom wholesalers of this account and mode.',
        response: {
          200: Type.Object(
            { wholesalers: Type.Array(WholesalerSchema) },
            { examples: [{ wholesalers: [WHOLESALER_EXAMPLE] }] },
          ),
        },
      },
    },
    async (request) => ({ wholesalers: await deps.upstream.registry.list(request.auth) }),
  );

  app.post(
    '/v1/wholesalers/custom',
    {
      config: { idempotent: true, errors: REGISTER_ERRORS },
      schema: {
        operationId: 'registerCustomWholesaler',
        tags: ['wholesalers'],
        summary: 'Register a custom MSV3 endpoint',
        responseDescription: 'The registered wholesaler, as `GET /v1/wholesalers` lists it.',
        description:
          'Visible only to this account and mode. The id is `custom-<slug of name>-<first 6 hex of SHA-256(account, mode, endpoint)>`; registering the same endpoint again returns the same wholesaler. It starts unverified with no capabilities; the first successful connection test against the endpoint verifies it and fills its capabilities from the contract data. Errors: 400 `invalid_request` (not an http(s) URL, credentials, query or fragment in it), 400 `endpoint_not_allowed` (a host on a private or loopback address the operator has not allowed, a link-local or cloud metadata address or name, or http with a live key), 409 `conflict` (the endpoint is registered already, with another `msv3_version`; or the account has 100 custom wholesalers in this mode already).',
        body: CustomWholesalerBody,
        response: {
          200: Type.Object({ wholesaler: WholesalerSchema }, { examples: [{ wholesaler: CUSTOM_EXAMPLE }] }),
        },
      },
    },
    async (request) => ({
      wholesaler: await registerCustomWholesaler(deps.services.customWholesalers, request.auth, request.body),
    }),
  );

  app.delete(
    '/v1/wholesalers/custom/:id',
    {
      config: { errors: DELETE_ERRORS },
      schema: {
        operationId: 'deleteCustomWholesaler',
        tags: ['wholesalers'],
        summary: 'Delete a custom wholesaler',
        description:
          "Removes a custom wholesaler of this account and mode. It disappears from `GET /v1/wholesalers` and can no longer be called, at once in every gateway process; the credential-free status probes of its endpoint stop by their next round (`WHOLESALER_PROBE_INTERVAL_MS`). Data already stored through it stay: orders placed with it keep their data and their wholesaler id, and an Idempotency-Key replay of such an order still answers as before; asking their status (`GET /v1/orders/{order_id}/status`) answers 404 `wholesaler_not_found`, saying the order's wholesaler is no longer registered. Registering the same endpoint again gives the same id back (unverified), and with it the status of those orders. Errors: 404 `wholesaler_not_found` (no custom wholesaler with this id in this account and mode: another account's, a catalogue wholesaler, or one deleted already).",
        params: CustomWholesalerParams,
        response: { 204: Type.Null({ description: 'Deleted.' }) },
      },
    },
    async (request, reply) => {
      await removeCustomWholesaler(deps.services.customWholesalers, request.auth, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
