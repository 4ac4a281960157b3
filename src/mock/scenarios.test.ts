import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bestellen } from '../msv3/operations/bestellen.js';
import { bestellstatusAbfragen } from '../msv3/operations/bestellstatus-abfragen.js';
import { retourenavisAnfragen } from '../msv3/operations/retourenavis-anfragen.js';
import { ruecknahmeangebotAnfordern } from '../msv3/operations/ruecknahmeangebot-anfordern.js';
import { verfuegbarkeitAnfragen } from '../msv3/operations/verfuegbarkeit-anfragen.js';
import { verfuegbarkeitAnfragenBulk } from '../msv3/operations/verfuegbarkeit-anfragen-bulk.js';
import { hasValidCheckDigit } from './catalogue.js';
import {
  CONTRACT_MARKERS,
  describeScenarios,
  SCENARIO_PASSWORDS,
  SCENARIO_PZNS,
  SUBSTITUTE_PZN,
  transportScenarioIn,
} from './scenarios.js';
import {
  availabilityRequest,
  CLIENT_ID,
  CUSTOMER,
  orderRequest,
  type Sandbox,
  startSandbox,
  subOrder,
  uuid,
} from './test-support/sandbox.js';

const S = SCENARIO_PZNS;
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ slowAnswerMs: 300, lateAnswerMs: 3_000 }, { headersTimeoutMs: 1_000 });
});
afterAll(() => sandbox.close());

const availability = (pzn: string) =>
  sandbox.call(
    verfuegbarkeitAnfragen,
    availabilityRequest([
      ['04114918', 1],
      [pzn, 1],
    ]),
  );
const statusOf = (orderId: string) =>
  sandbox.ok(bestellstatusAbfragen, { clientSoftwareId: CLIENT_ID, orderId });

describe('the scenario table', () => {
  it('uses distinct PZNs with valid PZN-8 check digits', () => {
    const pzns = [...Object.values(S).map((s) => s.pzn), SUBSTITUTE_PZN];
    expect(new Set(pzns).size).toBe(pzns.length);
    for (const pzn of pzns) expect(hasValidCheckDigit(pzn), pzn).toBe(true);
  });

  it('is documented in docs/sandbox.md: every PZN, password and user-name marker', () => {
    const section = readFileSync(new URL('../../docs/sandbox.md', import.meta.url), 'utf8');
    for (const [name, s] of Object.entries(S))
      expect(section, name).toMatch(new RegExp(`\\| \`${s.pzn}\` \\| ${name} \\|`));
    for (const password of Object.values(SCENARIO_PASSWORDS)) expect(section).toContain(`\`${password}\``);
    for (const marker of Object.keys(CONTRACT_MARKERS)) expect(section).toContain(`\`${marker}\``);
  });

  it('is printed by describeScenarios for the mock command', () => {
    const text = describeScenarios().join('\n');
    for (const s of Object.values(S)) expect(text).toContain(s.pzn);
  });

  it('lets a fault win over delays when several transport scenarios meet', () => {
    expect(transportScenarioIn([S.SLOW_ANSWER.pzn, S.CONNECTION_DROP.pzn, S.SERVER_FAULT.pzn])).toBe(
      'SERVER_FAULT',
    );
    expect(transportScenarioIn(['04114918', S.PARTIAL.pzn])).toBeUndefined();
  });
});

describe('fault scenarios', () => {
  it('SERVER_FAULT: ServerFaultInfo with HTTP 500 in every operation that lists PZNs; nothing is placed', async () => {
    const calls = [
      availability(S.SERVER_FAULT.pzn),
      sandbox.call(verfuegbarkeitAnfragenBulk, {
        clientSoftwareId: CLIENT_ID,
        id: uuid(),
        query: { kind: 'list', pzns: [S.SERVER_FAULT.pzn] },
      }),
      sandbox.call(bestellen, orderRequest(subOrder([[S.SERVER_FAULT.pzn, 1]]))),
      sandbox.call(ruecknahmeangebotAnfordern, {
        clientSoftwareId: CLIENT_ID,
        id: uuid(),
        articles: [{ pzn: S.SERVER_FAULT.pzn, quantity: 1 }],
      }),
      sandbox.call(retourenavisAnfragen, {
        clientSoftwareId: CLIENT_ID,
        enquiry: {
          id: uuid(),
          supportId: 1,
          positions: [
            {
              positionRef: 1,
              deliveryNoteNumber: 'LS1',
              pzn: S.SERVER_FAULT.pzn,
              quantity: 1,
              reason: 'Bestellfehler',
            },
          ],
        },
      }),
    ];
    for (const result of await Promise.all(calls)) {
      expect(!result.ok && result.error).toMatchObject({
        reason: 'soap_fault',
        status: 500,
        retryable: true,
        fault: { kind: 'ServerFault', soapCode: 'Receiver', errorCode: 'S001' },
      });
    }
    expect(sandbox.mock.placedOrderCount({ customerId: CUSTOMER, tenant: 'test' })).toBe(0);
  });

  it('DENIAL_OF_SERVICE: DenialOfServiceFault, retryable', async () => {
    const result = await availability(S.DENIAL_OF_SERVICE.pzn);
    expect(!result.ok && result.error).toMatchObject({
      reason: 'soap_fault',
      retryable: true,
      fault: { kind: 'DenialOfServiceFault', errorCode: 'D001' },
    });
  });
});

describe('answer scenarios', () => {
  it('SLOW_ANSWER: the normal answer after slowAnswerMs', async () => {
    const started = performance.now();
    const result = await availability(S.SLOW_ANSWER.pzn);
    expect(result.ok).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('MALFORMED_ANSWER: HTTP 200 with an unparsable envelope; an order is stored all the same', async () => {
    const broken = await availability(S.MALFORMED_ANSWER.pzn);
    expect(!broken.ok && broken.error).toMatchObject({ reason: 'decode', status: 200, maybeDelivered: true });
    const request = orderRequest(subOrder([[S.MALFORMED_ANSWER.pzn, 1]]));
    const order = await sandbox.call(bestellen, request, { tenant: 'malformed' });
    expect(!order.ok && order.error.reason).toBe('decode');
    expect(sandbox.mock.placedOrderCount({ tenant: 'malformed' })).toBe(1);
    const retry = await sandbox.call(bestellen, request, { tenant: 'malformed' });
    expect(retry.ok && retry.value.subOrders[0]?.positions[0]?.pzn).toBe(S.MALFORMED_ANSWER.pzn);
  });

  it('CONNECTION_DROP: the order is stored, the socket dies; the client sees maybeDelivered and can reconcile', async () => {
    const request = orderRequest(
      subOrder([
        [S.CONNECTION_DROP.pzn, 2],
        ['04114918', 1],
      ]),
    );
    const result = await sandbox.call(bestellen, request, { tenant: 'drop' });
    expect(!result.ok && result.error).toMatchObject({
      reason: 'unreachable',
      maybeDelivered: true,
      retryable: true,
    });
    expect(sandbox.mock.placedOrderCount({ tenant: 'drop' })).toBe(1);
    expect(sandbox.mock.orders('drop', CUSTOMER).map((o) => o.id)).toEqual([request.id]);

    const status = await sandbox.ok(
      bestellstatusAbfragen,
      { clientSoftwareId: CLIENT_ID, orderId: request.id },
      { tenant: 'drop' },
    );
    expect(status.status).toBe('BestellantwortVerfuegbar');
    // A crash-safe retry with the same Id gets the stored answer and places nothing new.
    const retry = await sandbox.ok(bestellen, request, { tenant: 'drop' });
    expect(retry.subOrders).toEqual(status.subOrders);
    expect(sandbox.mock.placedOrderCount({ tenant: 'drop' })).toBe(1);
  });

  it('CONNECTION_DROP outside orders drops the connection too', async () => {
    const result = await availability(S.CONNECTION_DROP.pzn);
    expect(!result.ok && result.error).toMatchObject({ reason: 'unreachable', maybeDelivered: true });
  });

  it('LATE_ANSWER: the order is stored, the answer comes after the client’s timeout', async () => {
    const request = orderRequest(subOrder([[S.LATE_ANSWER.pzn, 1]]));
    const result = await sandbox.call(bestellen, request, { tenant: 'late' });
    expect(!result.ok && result.error).toMatchObject({
      reason: 'timeout',
      phase: 'headers',
      maybeDelivered: true,
    });
    expect(sandbox.mock.placedOrderCount({ tenant: 'late' })).toBe(1);
    expect(
      (
        await sandbox.ok(
          bestellstatusAbfragen,
          { clientSoftwareId: CLIENT_ID, orderId: request.id },
          { tenant: 'late' },
        )
      ).status,
    ).toBe('BestellantwortVerfuegbar');
    const retry = await sandbox.call(bestellen, request, { tenant: 'late' });
    expect(retry.ok).toBe(true);
  });

  it('NIGHT_MODE is covered with the order tests; ordinary status lookups still work here', async () => {
    const request = orderRequest(subOrder([[S.NIGHT_MODE.pzn, 1]]));
    expect((await sandbox.ok(bestellen, request)).nightMode).toBe(true);
    expect((await statusOf(request.id)).status).toBe('BestellantwortNichtVerfuegbar');
  });
});
