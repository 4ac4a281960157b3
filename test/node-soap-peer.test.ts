import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviationName } from '../src/msv3/deviations.js';
import { validateEnvelopes, xsdUnavailableReason } from '../src/msv3/test-support/xsd.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { type Gateway, type GatewayRequest, startGateway } from './gateway.js';
import { capturingLogger } from './logger.js';
import {
  BACKORDER_PZN,
  FAULT_PZN,
  NODE_SOAP_DEVIATIONS,
  type NodeSoapDeviation,
  type NodeSoapPeer,
  PEER_CREDENTIALS,
  startNodeSoapPeer,
  wsdlUnavailableReason,
} from './node-soap-peer.js';

/**
 * Another SOAP stack as a standing peer (docs/msv3.md "Other SOAP stacks"): a node-soap 1.13.0 server
 * generated from the original MSV3 WSDLs, v2 and v1, registered as a custom wholesaler (over loopback,
 * which ALLOW_PRIVATE_ENDPOINTS admits) and driven through the gateway: connection test, availability,
 * contracts, an order with an Idempotency-Key and its replay, the order's status, and a ValidationFault.
 *
 * - With its answers corrected to the XSD (and checked against it), every call succeeds.
 * - With node-soap's own output, every call fails, with the error kind and words naming the cause: a
 *   SOAP 1.1 envelope as node-soap writes by default; with SOAP 1.2 headers a qualified `return`, an
 *   undeclared `xsi` prefix and a fault bean in the SOAP namespace.
 * - A gateway tolerating deviations (MSV3_TOLERATE_DEVIATIONS, the default) accepts the qualified
 *   `return` and the undeclared `xsi` on nils, counts, logs and lists them, and still refuses the
 *   SOAP 1.1 envelope and the fault bean in the SOAP namespace.
 *
 * Every request the gateway sent in these tests is validated against the XSD at the end. Skipped,
 * loudly, without xmllint or the XSD/WSDL folder (MSV3_XSD_DIR).
 */

const skipReason = xsdUnavailableReason ?? wsdlUnavailableReason;

const AVAILABLE_PZN = '04114918';

/** The calls of one journey through the gateway, in order. */
interface Journey {
  connection: LightMyRequestResponse;
  availability: LightMyRequestResponse;
  contracts: LightMyRequestResponse;
  order: LightMyRequestResponse;
  /** The same order again with the same Idempotency-Key. */
  replay: LightMyRequestResponse;
  /** The status of the order, when the order named one. */
  status: LightMyRequestResponse | undefined;
  fault: LightMyRequestResponse;
}

interface Customer {
  gw: Gateway;
  key: string;
  /** The custom wholesaler's id. */
  id: string;
}

const SOAP11_WORDS =
  "a SOAP 1.1 envelope: 'soap:Envelope' is in http://schemas.xmlsoap.org/soap/envelope/, but MSV3 is SOAP 1.2 only (http://www.w3.org/2003/05/soap-envelope); the wholesaler's SOAP stack must answer SOAP 1.2";
const returnWords = (version: number) =>
  `return: element in the wrong namespace: found 'return' in urn:msv3:v${version}, the XSD has it unqualified (no namespace)`;
const XSI_WORDS =
  'return/Artikel[1]/Anteile[1]/Lieferzeitpunkt/@xsi:nil: undeclared namespace prefix xsi (no xmlns:xsi in scope)';
const BEAN_WORDS =
  'a SOAP fault without an MSV3 fault bean (the fault bean soap:Envelope/soap:Body/soap:Fault/soap:Detail/soap:ValidationFault is in http://www.w3.org/2003/05/soap-envelope, not in urn:msv3:v2 (or urn:msv3:v1))';

for (const version of [2, 1] as const) {
  describe.skipIf(skipReason !== null)(`a node-soap wholesaler speaking MSV3 v${version}`, () => {
    let peer: NodeSoapPeer;
    const databases: TestDatabase[] = [];
    /** MSV3_TOLERATE_DEVIATIONS=false. */
    let strict: Gateway;
    /** The default, MSV3_TOLERATE_DEVIATIONS=true; its log lines are kept. */
    let tolerant: Gateway;
    const log = capturingLogger();

    beforeAll(async () => {
      peer = await startNodeSoapPeer(version);
      const database = async () => {
        const db = await createTestDatabase('sqlite');
        databases.push(db);
        return db;
      };
      strict = await startGateway({
        database: await database(),
        env: { ALLOW_PRIVATE_ENDPOINTS: 'true', MSV3_TOLERATE_DEVIATIONS: 'false' },
      });
      tolerant = await startGateway({
        database: await database(),
        env: { ALLOW_PRIVATE_ENDPOINTS: 'true' },
        logger: log.logger,
      });
    }, 60_000);

    afterAll(async () => {
      await strict?.close();
      await tolerant?.close();
      await peer?.close();
      for (const db of databases) await db.dispose();
    });

    /** A new pharmacy (live key) registering the peer: an unverified custom wholesaler of its own. */
    async function register(gw: Gateway): Promise<Customer> {
      const key = (await gw.createKey('live')).secret;
      const registered = await gw.inject({
        url: '/v1/wholesalers/custom',
        body: { name: `node-soap v${version}`, endpoint: peer.baseUrl, msv3_version: version },
        key,
        credentials: null,
      });
      expect(registered.statusCode).toBe(200);
      return { gw, key, id: registered.json().wholesaler.id };
    }

    function call(customer: Customer, request: GatewayRequest): Promise<LightMyRequestResponse> {
      return customer.gw.inject({ ...request, key: customer.key, credentials: PEER_CREDENTIALS });
    }

    async function journey(customer: Customer): Promise<Journey> {
      const { id } = customer;
      const connection = await call(customer, { url: '/v1/connection/test', body: { wholesaler: id } });
      const availability = await call(customer, {
        url: '/v1/availability',
        body: {
          wholesaler: id,
          items: [
            { pzn: AVAILABLE_PZN, quantity: 2 },
            { pzn: BACKORDER_PZN, quantity: 3 },
          ],
        },
      });
      const contracts = await call(customer, { url: '/v1/contracts', query: { wholesaler: id } });
      const order = { wholesaler: id, items: [{ pzn: AVAILABLE_PZN, quantity: 2 }] };
      const headers = { 'idempotency-key': randomUUID() };
      const placed = await call(customer, { url: '/v1/orders', body: order, headers });
      const replay = await call(customer, { url: '/v1/orders', body: order, headers });
      const orderId = placed.json().order_id as string | undefined;
      const status =
        orderId === undefined
          ? undefined
          : await call(customer, { url: `/v1/orders/${orderId}/status`, query: { wholesaler: id } });
      const fault = await call(customer, {
        url: '/v1/availability',
        body: { wholesaler: id, items: [{ pzn: FAULT_PZN, quantity: 1 }] },
      });
      return { connection, availability, contracts, order: placed, replay, status, fault };
    }

    /** The peer's answers keep `deviations` and correct the others. */
    function answersWith(...deviations: NodeSoapDeviation[]): void {
      peer.deviations = new Set(deviations);
    }

    async function listed(customer: Customer): Promise<{ verified: boolean; capabilities: string[] }> {
      const response = await customer.gw.inject({
        url: '/v1/wholesalers',
        key: customer.key,
        credentials: null,
      });
      return (response.json().wholesalers as { id: string }[]).find((w) => w.id === customer.id) as never;
    }

    /** The gateway's `msv3_gateway_wholesaler_answer_deviations_total` of custom wholesalers. */
    async function deviationCounts(gw: Gateway): Promise<Record<DeviationName, number>> {
      const text = (await gw.inject({ url: '/metrics', key: null, credentials: null })).body;
      const count = (deviation: DeviationName) => {
        const series = `msv3_gateway_wholesaler_answer_deviations_total{wholesaler="custom",deviation="${deviation}"} `;
        const line = text.split('\n').find((l) => l.startsWith(series));
        return line === undefined ? 0 : Number(line.slice(series.length));
      };
      return {
        qualified_return: count('qualified_return'),
        undeclared_xsi_prefix: count('undeclared_xsi_prefix'),
      };
    }

    function bestellenCalls(): number {
      return peer.exchanges.filter((e) => e.service === 'bestellen').length;
    }

    const expectError = (response: LightMyRequestResponse | undefined, status: number, error: string) => {
      expect({ status: response?.statusCode, error: response?.json().error }).toEqual({ status, error });
      return response!.json().message as string;
    };

    it('answers every call when its answers are corrected to the XSD, which they then validate against', async () => {
      answersWith();
      const before = peer.exchanges.length;
      const customer = await register(strict);
      const calls = await journey(customer);

      expect(calls.connection.statusCode).toBe(200);
      expect(calls.connection.json()).toMatchObject({
        route: 'live',
        warnings: [],
        tolerated_deviations: [],
      });
      expect(await listed(customer)).toEqual(
        expect.objectContaining({
          verified: true,
          capabilities:
            version === 2
              ? [
                  'availability',
                  'order',
                  'order_status',
                  'contracts',
                  'deliveries',
                  'returns',
                  'return_offers',
                  'documents',
                ]
              : ['availability', 'order', 'order_status', 'contracts', 'return_offers'],
        }),
      );
      // The peer answers the articles in reversed order; the gateway matches them by PZN.
      expect(calls.availability.statusCode).toBe(200);
      expect(calls.availability.json().items).toMatchObject([
        { pzn: AVAILABLE_PZN, quantity_requested: 2, available: true },
        { pzn: BACKORDER_PZN, quantity_requested: 3, available: false, deliveries: [{ estimated_at: null }] },
      ]);
      expect(calls.contracts.statusCode).toBe(200);
      expect(calls.contracts.json().delivery_windows).toHaveLength(5);
      expect(calls.order.statusCode).toBe(200);
      expect(calls.order.json()).toMatchObject({
        status: 'confirmed',
        items: [{ pzn: AVAILABLE_PZN, quantity_confirmed: 2, answered: true }],
      });
      expect(calls.replay.statusCode).toBe(200);
      expect(calls.replay.headers['idempotent-replayed']).toBe('true');
      expect(calls.replay.json()).toEqual(calls.order.json());
      expect(calls.status?.statusCode).toBe(200);
      expect(calls.status?.json()).toMatchObject({ status: 'available', items: [{ quantity_confirmed: 2 }] });
      expectError(calls.fault, 422, 'wholesaler_rejected_request');
      expect(calls.fault.json().upstream).toMatchObject({ kind: 'ValidationFault', error_code: 'V17' });

      // One bestellen for the order and its replay; every answer valid for the XSD.
      const exchanges = peer.exchanges.slice(before);
      expect(exchanges.filter((e) => e.service === 'bestellen')).toHaveLength(1);
      const verdicts = await validateEnvelopes(
        version,
        exchanges.map((e) => e.answer),
      );
      expect(verdicts.flatMap((v) => (v.valid ? [] : [v.errors]))).toEqual([]);
    });

    it('fails every call of its own SOAP 1.1 output, naming the SOAP 1.1 envelope, tolerant or not', async () => {
      answersWith(...NODE_SOAP_DEVIATIONS);
      for (const gw of [strict, tolerant]) {
        const customer = await register(gw);
        const sent = bestellenCalls();
        const calls = await journey(customer);
        const decode = `could not be decoded: ${SOAP11_WORDS}`;
        expect(expectError(calls.connection, 502, 'wholesaler_bad_response')).toContain(decode);
        expect(expectError(calls.availability, 502, 'wholesaler_bad_response')).toContain(decode);
        expect(expectError(calls.contracts, 502, 'wholesaler_bad_response')).toContain(decode);
        // The order may have been taken: its status is asked, unreadable too, and the order stays open.
        expect(expectError(calls.order, 504, 'order_outcome_unknown')).toContain(
          `(the status query: The answer of ${customer.id} ${decode})`,
        );
        expect(expectError(calls.replay, 504, 'order_outcome_unknown')).toContain(decode);
        expect(bestellenCalls()).toBe(sent + 1);
        expect(expectError(calls.status, 502, 'wholesaler_bad_response')).toContain(decode);
        // node-soap sends the fault with HTTP 500, as a SOAP 1.1 fault.
        expect(expectError(calls.fault, 502, 'wholesaler_http_error')).toBe(
          `The wholesaler ${customer.id} answered HTTP 500 with a SOAP answer that could not be decoded: ${SOAP11_WORDS}. Retry in 5 s.`,
        );
        expect(await listed(customer)).toMatchObject({ verified: false, capabilities: [] });
      }
      // node-soap labels its SOAP 1.1 answers with the request's SOAP 1.2 content type.
      const last = peer.exchanges.at(-1)!;
      expect(last.contentType).toMatch(/^application\/soap\+xml; charset=utf-8/);
      expect(last.answer).toContain('<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"');
    });

    it('with SOAP 1.2 headers, fails every call on a strict gateway with words naming the deviation', async () => {
      answersWith('qualified_return', 'undeclared_xsi_prefix', 'fault_bean_in_soap_namespace');
      const customer = await register(strict);
      const calls = await journey(customer);
      const decode = `The answer of ${customer.id} could not be decoded: ${returnWords(version)}`;
      // The credentials work, but the contract data cannot be read: a warning, and no verification.
      expect(calls.connection.statusCode).toBe(200);
      expect(calls.connection.json()).toMatchObject({
        warnings: [
          {
            error: 'wholesaler_bad_response',
            message: `The contract data of ${customer.id} (vertragsdatenAbfragen) could not be read, so it stays unverified and without capabilities; the next connection test tries again. ${decode}`,
          },
        ],
        tolerated_deviations: [],
      });
      expect(await listed(customer)).toMatchObject({ verified: false, capabilities: [] });
      expect(expectError(calls.availability, 502, 'wholesaler_bad_response')).toBe(decode);
      expect(expectError(calls.contracts, 502, 'wholesaler_bad_response')).toBe(decode);
      expect(expectError(calls.order, 504, 'order_outcome_unknown')).toContain(
        `(the status query: ${decode})`,
      );
      expect(expectError(calls.replay, 504, 'order_outcome_unknown')).toContain(decode);
      expect(expectError(calls.status, 502, 'wholesaler_bad_response')).toBe(decode);
      expect(expectError(calls.fault, 502, 'wholesaler_fault')).toBe(
        `The wholesaler ${customer.id} answered with ${BEAN_WORDS}: PZN ${FAULT_PZN} ist gesperrt.`,
      );
    });

    it('with SOAP 1.2 headers, succeeds on a tolerant gateway, which counts, logs and lists what it tolerated', async () => {
      answersWith('qualified_return', 'undeclared_xsi_prefix', 'fault_bean_in_soap_namespace');
      const customer = await register(tolerant);
      const sent = bestellenCalls();
      const counted = await deviationCounts(tolerant);
      const calls = await journey(customer);
      expect(calls.connection.statusCode).toBe(200);
      expect(calls.connection.json()).toMatchObject({
        warnings: [],
        tolerated_deviations: [{ deviation: 'qualified_return', first_seen_in: 'vertragsdatenAbfragen' }],
      });
      expect(await listed(customer)).toMatchObject({ verified: true });
      expect(calls.availability.statusCode).toBe(200);
      expect(calls.availability.json().items.map((i: { pzn: string }) => i.pzn)).toEqual([
        AVAILABLE_PZN,
        BACKORDER_PZN,
      ]);
      expect(calls.contracts.statusCode).toBe(200);
      expect(calls.order.json()).toMatchObject({ status: 'confirmed' });
      expect(calls.replay.headers['idempotent-replayed']).toBe('true');
      expect(calls.replay.json()).toEqual(calls.order.json());
      expect(bestellenCalls()).toBe(sent + 1);
      expect(calls.status?.json()).toMatchObject({ status: 'available' });
      // A fault bean in the SOAP namespace is not tolerated: the fault's kind stays unknown.
      expect(expectError(calls.fault, 502, 'wholesaler_fault')).toBe(
        `The wholesaler ${customer.id} answered with ${BEAN_WORDS}: PZN ${FAULT_PZN} ist gesperrt.`,
      );

      // The next connection test lists the nil of the availability answer too.
      const again = await call(customer, { url: '/v1/connection/test', body: { wholesaler: customer.id } });
      expect(again.json().tolerated_deviations).toEqual([
        {
          deviation: 'qualified_return',
          description: expect.any(String),
          first_seen_in: 'vertragsdatenAbfragen',
        },
        {
          deviation: 'undeclared_xsi_prefix',
          description: expect.any(String),
          first_seen_in: 'verfuegbarkeitAnfragen',
        },
      ]);
      // Counted under `custom`, as every customer-registered wholesaler (docs/observability.md): the
      // contract twice (verification, GET /v1/contracts), availability, order and its status.
      const now = await deviationCounts(tolerant);
      expect(now.qualified_return - counted.qualified_return).toBe(5);
      expect(now.undeclared_xsi_prefix - counted.undeclared_xsi_prefix).toBe(1);
      const logged = log.lines.filter(
        (line) => line.wholesaler === customer.id && line.deviation !== undefined,
      );
      expect(logged.map((line) => line.deviation)).toEqual(['qualified_return', 'undeclared_xsi_prefix']);
    });

    it.each(NODE_SOAP_DEVIATIONS)(
      'with only %s left as node-soap writes it: refused in its own words, tolerated only where it has one meaning',
      async (deviation) => {
        answersWith(deviation);
        const availability = {
          wholesaler: '',
          items: [
            { pzn: AVAILABLE_PZN, quantity: 2 },
            { pzn: BACKORDER_PZN, quantity: 3 },
          ],
        };
        for (const gw of [strict, tolerant]) {
          const customer = await register(gw);
          const answered = await call(customer, {
            url: '/v1/availability',
            body: { ...availability, wholesaler: customer.id },
          });
          const fault = await call(customer, {
            url: '/v1/availability',
            body: { wholesaler: customer.id, items: [{ pzn: FAULT_PZN, quantity: 1 }] },
          });
          const decode = `The answer of ${customer.id} could not be decoded: `;
          const tolerated =
            gw === tolerant && (deviation === 'qualified_return' || deviation === 'undeclared_xsi_prefix');
          switch (deviation) {
            case 'soap11_envelope':
              expect(expectError(answered, 502, 'wholesaler_bad_response')).toBe(decode + SOAP11_WORDS);
              expectError(fault, 502, 'wholesaler_http_error');
              break;
            case 'qualified_return':
            case 'undeclared_xsi_prefix':
              if (tolerated) expect(answered.statusCode).toBe(200);
              else
                expect(expectError(answered, 502, 'wholesaler_bad_response')).toBe(
                  decode + (deviation === 'qualified_return' ? returnWords(version) : XSI_WORDS),
                );
              expectError(fault, 422, 'wholesaler_rejected_request');
              break;
            case 'fault_bean_in_soap_namespace':
              expect(answered.statusCode).toBe(200);
              expect(expectError(fault, 502, 'wholesaler_fault')).toContain(BEAN_WORDS);
              break;
          }
        }
      },
    );

    it('was sent only requests that are valid for the XSD', async () => {
      const requests = peer.exchanges.map((e) => e.request);
      expect(requests.length).toBeGreaterThan(40);
      const verdicts = await validateEnvelopes(version, requests);
      expect(
        verdicts.flatMap((v, i) => (v.valid ? [] : [`${v.errors}\n${requests[i]!.slice(0, 2000)}`])),
      ).toEqual([]);
    });
  });
}
