import { Type } from 'typebox';
import { fetchContract } from '../../services/contracts.js';
import type { AppDeps } from '../app-deps.js';
import { Msv3CredentialHeaders, msv3Credentials } from '../msv3-credentials.js';
import { upstreamFor } from '../request-notes.js';
import { routeErrors, WHOLESALER_CALL_ERRORS } from '../route-errors.js';
import { WholesalerQuerySchema } from '../schemas/common.js';
import { HOUR_MINUTE_PATTERN } from '../schemas/patterns.js';
import type { GatewayApp } from '../types.js';

const Day = Type.Enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);
const HourMinute = (description: string) => Type.String({ pattern: HOUR_MINUTE_PATTERN, description });

const ContractSchema = Type.Object(
  {
    wholesaler: Type.String(),
    customer_id: Type.String({
      description: 'MSV3 `KundenKennung` (the customer number, = the MSV3 user name).',
    }),
    capabilities: Type.Object({
      bulk_availability: Type.Boolean({ description: '`VerfuegbarkeitBulkVereinbart`.' }),
      return_offers: Type.Boolean({
        description: '`RuecknahmeangebotVereinbart`; needed for returns/offers.',
      }),
      substitution: Type.Boolean({ description: '`Substitutionsvereinbarung`.' }),
      order_types: Type.Object({
        normal: Type.Boolean({ description: 'NORMAL, always agreed.' }),
        batch: Type.Boolean({ description: 'STAPEL `Vereinbart`.' }),
        special: Type.Boolean({ description: 'SONDER `Vereinbart`.' }),
        shipping: Type.Boolean({ description: 'VERSAND `Vereinbart`.' }),
      }),
      specific_availability: Type.Boolean({
        description:
          'Additive: `VerfuegbarkeitEinzelnSpezifischeRueckmeldungVereinbart`; without it availability answers are `unspecific`.',
      }),
    }),
    delivery_windows: Type.Array(
      Type.Object({
        day: Day,
        closes_at: HourMinute('Order cut-off (`Endezeit`) of this weekly order window, `HH:MM`.'),
        main_order_time: Type.Union([Type.Object({ day: Day, time: HourMinute('`HH:MM`') }), Type.Null()], {
          description:
            'Additive: recommended time for the main order of the window (`Hauptbestellzeit`); null if the v1 wholesaler gives none.',
        }),
      }),
      { description: 'MSV3 `Bestellfenster`; a day may occur several times.' },
    ),
    special_days: Type.Array(
      Type.Object({
        date: Type.String({ description: '`YYYY-MM-DD`.' }),
        windows: Type.Array(
          Type.Object({
            closes_at: HourMinute('Order cut-off.'),
            main_order_time: HourMinute('Main order time.'),
          }),
          { description: 'Empty: no order cut-off (no delivery) that day.' },
        ),
      }),
      { description: 'Additive: MSV3 v2 `Sondertag` exceptions for calendar dates; always empty for v1.' },
    ),
    order_type_terms: Type.Object(
      {
        normal: Type.Object({ max_free_order_labels: Type.Integer() }),
        batch: Type.Object({ agreed: Type.Boolean(), max_free_order_labels: Type.Integer() }),
        special: Type.Object({ agreed: Type.Boolean(), max_free_order_labels: Type.Integer() }),
        shipping: Type.Object({
          agreed: Type.Boolean(),
          max_free_order_labels: Type.Integer(),
          complete_containers_only: Type.Boolean({ description: '`NurKompletteGebinde`.' }),
        }),
      },
      { description: 'Additive: `Auftragsart*` terms (`MaxAnzahlFreieAuftragskennungen`, …).' },
    ),
    valid_from: Type.Union([Type.String(), Type.Null()], {
      description: 'Additive: MSV3 v1 `GueltigAb` (`YYYY-MM-DD`); null for v2.',
    }),
    msv3_version: Type.Union([Type.Literal(1), Type.Literal(2)], { description: 'Additive.' }),
  },
  {
    examples: [
      {
        wholesaler: 'phoenix',
        customer_id: 'apotheke1',
        capabilities: {
          bulk_availability: true,
          return_offers: true,
          substitution: true,
          order_types: { normal: true, batch: true, special: true, shipping: false },
          specific_availability: true,
        },
        delivery_windows: [
          { day: 'monday', closes_at: '10:30', main_order_time: { day: 'monday', time: '10:00' } },
          { day: 'monday', closes_at: '16:00', main_order_time: { day: 'monday', time: '15:30' } },
        ],
        special_days: [{ date: '2026-12-24', windows: [{ closes_at: '11:00', main_order_time: '10:30' }] }],
        order_type_terms: {
          normal: { max_free_order_labels: 2 },
          batch: { agreed: true, max_free_order_labels: 1 },
          special: { agreed: true, max_free_order_labels: 1 },
          shipping: { agreed: false, max_free_order_labels: 0, complete_containers_only: false },
        },
        valid_from: null,
        msv3_version: 2,
      },
    ],
  },
);

const CONTRACT_ERRORS = routeErrors([WHOLESALER_CALL_ERRORS]);

export function registerContractRoutes(app: GatewayApp, deps: AppDeps): void {
  app.get(
    '/v1/contracts',
    {
      config: { errors: CONTRACT_ERRORS },
      schema: {
        operationId: 'getContract',
        tags: ['contracts'],
        summary: 'Contract data: capabilities, order types, weekly order windows (vertragsdatenAbfragen)',
        responseDescription:
          "The customer's contract with the wholesaler: capabilities, order types and weekly order windows.",
        description: 'Needs `X-MSV3-Username` and `X-MSV3-Password`.',
        headers: Msv3CredentialHeaders,
        querystring: WholesalerQuerySchema,
        response: { 200: ContractSchema },
      },
    },
    async (request) =>
      fetchContract(
        upstreamFor(request, deps.upstream),
        request.auth,
        msv3Credentials(request, request.query.wholesaler),
        request.query.wholesaler,
      ),
  );
}
