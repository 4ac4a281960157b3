import { request } from 'undici';
import type { DeliveryNotice } from '../msv3/operations/lieferavis.js';

/**
 * The client of the control surface (`control.ts`), for the gateway's test helpers: over HTTP, so it
 * reaches the in-process sandbox, the cluster primary's and an external `msv3-gateway mock` alike. The
 * URL follows from a tenant's SOAP base URL (`…/<tenant>/msv3/v2.0` → `…/<tenant>/control/<action>`),
 * the one the wholesaler registry hands out for the sandbox.
 */

/**
 * The sandbox takes any password; control requests send this one (never a real one: the gateway keeps
 * no wholesaler passwords, and a test helper has none).
 */
export const HELPER_PASSWORD = 'sandbox-test-helper';
const TIMEOUT_MS = 10_000;

export type ControlRequest =
  | { action: 'process-order' | 'order-notices'; orderId: string }
  | { action: 'deliver-order'; orderId: string; shortages: boolean }
  | { action: 'status'; up: boolean };

export type ControlResult =
  | { ok: true; notices: DeliveryNotice[]; changed: boolean }
  /** The mock refused (`error`: `order_not_found`, `order_processed`, `order_not_processed`, …). */
  | { ok: false; status: number; error: string; message: string };

/** `…/<tenant>/msv3/v2.0` → `…/<tenant>/control/<action>`. */
export function controlUrlOf(endpointBaseUrl: string, action: string): string {
  const base = endpointBaseUrl.replace(/\/+$/, '').replace(/\/msv3(\/[^/]*)?$/i, '');
  return `${base}/control/${action}`;
}

export async function sendControl(
  endpointBaseUrl: string,
  customerId: string,
  input: ControlRequest,
): Promise<ControlResult> {
  const body =
    input.action === 'status'
      ? { up: input.up }
      : {
          order_id: input.orderId,
          ...(input.action === 'deliver-order' ? { shortages: input.shortages } : {}),
        };
  const response = await request(controlUrlOf(endpointBaseUrl, input.action), {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${customerId}:${HELPER_PASSWORD}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  const text = await response.body.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not the control surface (an older external mock, a proxy): described by the status below.
  }
  if (response.statusCode === 200) {
    return {
      ok: true,
      notices: Array.isArray(parsed.notices) ? (parsed.notices as DeliveryNotice[]) : [],
      changed: parsed.changed === true,
    };
  }
  return {
    ok: false,
    status: response.statusCode,
    error: typeof parsed.error === 'string' ? parsed.error : 'no_control_surface',
    message:
      typeof parsed.message === 'string'
        ? parsed.message
        : `The sandbox answered HTTP ${response.statusCode} to a control request.`,
  };
}
