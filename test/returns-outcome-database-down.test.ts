import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCatalogue } from '../src/wholesalers/catalogue.js';
import type { TestDatabase } from './db.js';
import { type Gateway, type GatewayRequest, startGateway } from './gateway.js';
import { type InterceptingWholesaler, startInterceptingWholesaler } from './intercepting-wholesaler.js';
import {
  migratedDatabaseOn,
  type PostgresInstance,
  postgresUnavailable,
  startPostgresInstance,
} from './postgres-instance.js';
import { placeSandboxOrder } from './sandbox-orders.js';
import { until } from './until.js';

/**
 * A return announcement or take-back offer reaches the wholesaler, and at that very moment the gateway's
 * PostgreSQL goes down (`pg_ctl stop -m immediate` from the wholesaler's handler). Returns store nothing
 * but the Idempotency-Key's record, so:
 * - when the wholesaler's answer arrives, the client gets it (200); the record cannot be stored then, so
 *   the key stays locked, and it is stored as soon as the database answers again: the retry with the key
 *   gets the answer replayed, long before the lock (IDEMPOTENCY_LOCK_TIMEOUT_MS) would lapse;
 * - when the answer is lost as well, the client gets 504 `return_outcome_unknown` naming the id, the key
 *   stays bound to the request (reopened once the database answers), and the retry takes over and sends
 *   the same MSV3 id, which the wholesaler answers from its records: booked once.
 * Runs on a PostgreSQL server of its own; the wholesaler is the mock test server behind a hand-made
 * loopback proxy that stops the database when the request arrives.
 */

/** IDEMPOTENCY_LOCK_TIMEOUT_MS's default: the retries below are answered long before it lapses. */
const LOCK_MS = 60_000;
/** How long a retry may keep getting 409 once the database is back: a fraction of the lock. */
const ANSWERED_WITHIN_MS = 15_000;
const unavailable = postgresUnavailable();

describe('returns sent while PostgreSQL goes down', () => {
  if (unavailable !== undefined) {
    console.warn(`[tests] ${unavailable}: the database-down returns tests are skipped.`);
    it.skip(`skipped: ${unavailable}`, () => {});
    return;
  }

  let postgres: PostgresInstance;
  let database: TestDatabase;
  let wholesaler: InterceptingWholesaler;
  let gw: Gateway;

  beforeAll(async () => {
    postgres = await startPostgresInstance();
    database = await migratedDatabaseOn(postgres);
    wholesaler = await startInterceptingWholesaler();
    gw = await startGateway({
      database,
      env: { IDEMPOTENCY_LOCK_TIMEOUT_MS: String(LOCK_MS) },
      catalogue: (mocks) => {
        wholesaler.target = mocks.testServer.url;
        const path = mocks.testServer
          .baseUrl({ tenant: 'test/phoenix', version: 2 })
          .slice(mocks.testServer.url.length);
        return parseCatalogue({
          wholesalers: [
            { id: 'phoenix', name: 'PHOENIX', version: 2, test: { baseUrl: `${wholesaler.url}${path}` } },
          ],
        });
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await wholesaler?.close();
    await database?.close();
    await postgres?.dispose();
  });

  let pharmacies = 0;
  const pharmacy = () => ({ username: `dbdown${++pharmacies}`, password: 'pw-for-tests' });

  /** Sends `request` with the database stopping as `operation` arrives (and the answer dropped if `lost`). */
  async function sendWhileDatabaseFails(
    request: GatewayRequest,
    operation: string,
    lost: boolean,
  ): Promise<LightMyRequestResponse> {
    wholesaler.interceptNext(operation, {
      before: () => postgres.stop(),
      ...(lost ? { answer: 'drop' as const } : {}),
    });
    try {
      return await gw.inject(request);
    } finally {
      await postgres.start();
    }
  }

  /**
   * The retry with the key: 409 until the first attempt's outcome is recorded once the database answers,
   * then the stored answer replayed, or (an open outcome) the attempt that takes over.
   */
  async function retryUntilAnswered(
    request: GatewayRequest,
    expected: 'replayed' | 'taken over',
  ): Promise<LightMyRequestResponse> {
    const retry = await until(
      'the retry answered',
      async () => {
        const answer = await gw.inject(request);
        if (answer.statusCode !== 409) return answer;
        expect(answer.json().error).toBe('idempotency_request_in_progress');
        return undefined;
      },
      ANSWERED_WITHIN_MS,
      50,
    );
    expect(retry.headers['idempotent-replayed']).toBe(expected === 'replayed' ? 'true' : undefined);
    return retry;
  }

  function expectOutcomeUnknown(response: LightMyRequestResponse, id: string): void {
    expect(response.statusCode).toBe(504);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    expect(response.json()).toMatchObject({
      error: 'return_outcome_unknown',
      error_code: '1506',
      wholesaler: 'phoenix_test',
    });
    expect(response.json().message).toContain(id);
    expect(response.json().message).toContain('same Idempotency-Key');
  }

  describe('announcement', () => {
    /** A pharmacy with one delivery note for 3 units of 04114918, and its announcement of 1 unit. */
    async function announcement() {
      const credentials = pharmacy();
      await placeSandboxOrder(gw, [{ pzn: '4114918', quantity: 3 }], {
        credentials,
        wholesaler: 'phoenix_test',
      });
      const tracking = gw.mocks.testServer.deliveryNotices('test/phoenix', credentials.username)[0]!.notice
        .deliveryNoteNumber;
      const item = { tracking_number: tracking, pzn: '4114918', quantity: 1, reason: 'damaged' };
      const request = (quantity: number): GatewayRequest => ({
        url: '/v1/returns/announce',
        body: { wholesaler: 'phoenix_test', items: [{ ...item, quantity }] },
        credentials,
        headers: { 'idempotency-key': `announce-${credentials.username}` },
      });
      /** The non-binding verdict for `quantity` units: shows how many are booked already. */
      const verdict = async (quantity: number) => {
        const response = await gw.inject({ ...request(quantity), url: '/v1/returns', headers: {} });
        expect(response.statusCode).toBe(200);
        return response.json().items[0].verdict as string;
      };
      return { request: request(1), changed: request(2), verdict };
    }

    async function expectBookedOnce(verdict: (quantity: number) => Promise<string>) {
      // 1 of 3 units booked: 2 more are still accepted (booked twice, 3 would exceed the delivery).
      expect(await verdict(2)).toBe('accepted');
      expect(await verdict(3)).toBe('quantity_exceeds_delivery');
    }

    it('gives the client the answer, and the retry with the key gets the same announcement, booked once', async () => {
      const { request, verdict } = await announcement();
      const first = await sendWhileDatabaseFails(request, 'retourenavisAnkuendigen', false);
      expect(first.statusCode).toBe(200);
      const answered = first.json();

      const retry = await retryUntilAnswered(request, 'replayed');
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toEqual(answered);
      expect(wholesaler.count('retourenavisAnkuendigen', answered.return_id)).toBe(1);
      await expectBookedOnce(verdict);
    });

    it('answers 504 return_outcome_unknown when the answer is lost too, keeps the key bound, and the retry books nothing twice', async () => {
      const { request, changed, verdict } = await announcement();
      const first = await sendWhileDatabaseFails(request, 'retourenavisAnkuendigen', true);
      const returnId = /Return announcement ([0-9a-f-]{36})/i.exec(first.json().message)?.[1] ?? '';
      expectOutcomeUnknown(first, returnId);

      const other = await gw.inject(changed);
      expect(other.statusCode).toBe(422);
      expect(other.json().error).toBe('idempotency_key_reused');

      const retry = await retryUntilAnswered(request, 'taken over');
      expect(retry.statusCode).toBe(200);
      expect(retry.json().return_id).toBe(returnId.toLowerCase());
      expect(wholesaler.count('retourenavisAnkuendigen', returnId)).toBe(2);
      await expectBookedOnce(verdict);
    });
  });

  describe('take-back offer', () => {
    function offer(credentials: { username: string; password: string }, key: string): GatewayRequest {
      return {
        url: '/v1/returns/offers',
        body: { wholesaler: 'phoenix_test', items: [{ pzn: '4114918', quantity: 2 }] },
        credentials,
        headers: { 'idempotency-key': key },
      };
    }

    /** The wholesaler numbers its references: each offer taken gets the next one. */
    async function referenceNumber(credentials: { username: string; password: string }, key: string) {
      const response = await gw.inject(offer(credentials, key));
      expect(response.statusCode).toBe(200);
      return number(response.json().reference_id);
    }
    const number = (reference: string) => Number(reference.split('-').at(-1));

    it('gives the client the answer, and the retry with the key gets the same offer, taken once', async () => {
      const credentials = pharmacy();
      const request = offer(credentials, `offer-${credentials.username}`);
      const first = await sendWhileDatabaseFails(request, 'ruecknahmeangebotAnfordern', false);
      expect(first.statusCode).toBe(200);
      const answered = first.json();

      const retry = await retryUntilAnswered(request, 'replayed');
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toEqual(answered);
      expect(wholesaler.count('ruecknahmeangebotAnfordern', answered.offer_id)).toBe(1);
      // Taken once: the next offer gets the very next reference.
      expect(await referenceNumber(credentials, `next-${credentials.username}`)).toBe(
        number(answered.reference_id) + 1,
      );
    });

    it('answers 504 return_outcome_unknown when the answer is lost too, and the retry gets the offer taken once', async () => {
      const credentials = pharmacy();
      const before = await referenceNumber(credentials, `before-${credentials.username}`);
      const request = offer(credentials, `offer-${credentials.username}`);
      const first = await sendWhileDatabaseFails(request, 'ruecknahmeangebotAnfordern', true);
      const offerId = /Take-back offer ([0-9a-f-]{36})/i.exec(first.json().message)?.[1] ?? '';
      expectOutcomeUnknown(first, offerId);

      const retry = await retryUntilAnswered(request, 'taken over');
      expect(retry.statusCode).toBe(200);
      expect(retry.json().offer_id).toBe(offerId);
      expect(wholesaler.count('ruecknahmeangebotAnfordern', offerId)).toBe(2);
      // Taken once: the lost offer got the reference after the one before, and the retry answers with it.
      expect(number(retry.json().reference_id)).toBe(before + 1);
    });
  });
});
