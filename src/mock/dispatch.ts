import { type Msv3Version, SOAP12_NS, versionOfNamespace } from '../msv3/envelope.js';
import { operationByRequestName } from '../msv3/operations/index.js';
import { parseXml, type XmlElement, XmlError } from '../msv3/xml/parse.js';
import type { RequestContext } from './context.js';
import { wholesalerOfTenant } from './endpoint-path.js';
import {
  denialOfServiceFault,
  encodeMockFault,
  MockFault,
  plainFault,
  serverFault,
  validationFault,
} from './faults.js';
import { type AnyOperationHandler, HANDLERS } from './handlers.js';
import type { MockEnvironment } from './options.js';
import { settleOrders } from './orders.js';
import { type TransportScenario, transportScenarioIn } from './scenarios.js';
import { customerOf, type StateUse, type TenantState } from './state.js';

/**
 * From a request body to what goes back on the wire, like a JAX-WS endpoint: the Body's root element
 * picks the operation (local name) and the version (namespace); an element that is no operation of this
 * endpoint gets a plain SOAP fault ("Cannot find dispatch method"); a request that breaks the schema
 * (the strict request decoders) or a business rule gets a `ValidationFault`. Scenario PZNs can turn the
 * answer into a fault, a delay, a truncated envelope or a dropped connection. Two steps: `readCall`
 * finds and decodes the operation without any state; `answerCall` runs it on the tenant's state, which
 * the caller (`server.ts` through `world-store.ts`) loads before and saves after.
 */

export type Outcome =
  | { kind: 'reply'; status: 200 | 500; body: string; delayMs: number }
  /** Destroy the socket without answering (the request has been processed). */
  | { kind: 'drop' };

export interface DispatchInput {
  body: string;
  /** Versions this endpoint speaks (server option ∩ version segment of the path). */
  versions: readonly Msv3Version[];
  customerId: string;
}

export interface Dispatched {
  outcome: Outcome;
  /** The operation, when the body named one this endpoint knows (for logs and request counts). */
  operation?: string;
  version?: Msv3Version;
}

const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

function reply(body: string, status: 200 | 500 = 200, delayMs = 0): Outcome {
  return { kind: 'reply', status, body, delayMs };
}

function faultReply(version: Msv3Version, fault: MockFault): Outcome {
  return reply(encodeMockFault(version, fault), 500);
}

type Located = { payload: XmlElement; version: Msv3Version | undefined } | { outcome: Outcome };

/** Finds the Body's single child without caring which operation it is. */
function locatePayload(body: string, fallbackVersion: Msv3Version): Located {
  let root: XmlElement;
  try {
    root = parseXml(body);
  } catch (error) {
    const detail = error instanceof XmlError ? error.message : 'unreadable';
    return { outcome: faultReply(fallbackVersion, validationFault(`malformed XML: ${detail}`)) };
  }
  if (root.local === 'Envelope' && root.ns === SOAP11_NS) {
    return {
      outcome: reply(
        plainFault('VersionMismatch', 'SOAP 1.1 envelopes are not supported; use SOAP 1.2'),
        500,
      ),
    };
  }
  const bodyElement =
    root.ns === SOAP12_NS && root.local === 'Envelope' ? root.child(SOAP12_NS, 'Body') : undefined;
  if (bodyElement === undefined || bodyElement.children.length !== 1) {
    const problem =
      bodyElement === undefined ? 'no SOAP 1.2 Envelope/Body' : 'the Body must hold exactly one element';
    return { outcome: faultReply(fallbackVersion, validationFault(problem)) };
  }
  const payload = bodyElement.children[0]!;
  return { payload, version: versionOfNamespace(payload.ns) };
}

function noSuchOperation(payload: XmlElement): Outcome {
  return reply(plainFault('Sender', `Cannot find dispatch method for {${payload.ns}}${payload.local}`), 500);
}

function applyScenario(scenario: TransportScenario | undefined, body: string, env: MockEnvironment): Outcome {
  switch (scenario) {
    case 'CONNECTION_DROP':
      return { kind: 'drop' };
    case 'LATE_ANSWER':
      return reply(body, 200, env.lateAnswerMs);
    case 'SLOW_ANSWER':
      return reply(body, 200, env.slowAnswerMs);
    case 'MALFORMED_ANSWER':
      // Cut mid-document: the envelope never closes, so no parser accepts it.
      return reply(body.slice(0, Math.floor(body.length * 0.6)));
    default:
      return reply(body);
  }
}

/** A request whose operation is known and whose body decoded: what `answerCall` needs. */
export interface Call {
  handler: AnyOperationHandler;
  request: unknown;
  version: Msv3Version;
  customerId: string;
  /** See `OperationHandler.state`. */
  state: StateUse;
}

/** Finds the operation and decodes the request; an outcome instead when there is nothing to run. */
export function readCall(input: DispatchInput): Call | Dispatched {
  const fallbackVersion = input.versions[input.versions.length - 1] ?? 2;
  const located = locatePayload(input.body, fallbackVersion);
  if ('outcome' in located) return { outcome: located.outcome };
  const { payload, version } = located;
  // The codec registry knows which operations exist in which version; the handler table what to answer.
  const operation = version === undefined ? undefined : operationByRequestName(payload.local, version);
  const handler: AnyOperationHandler | undefined = operation && HANDLERS.get(operation.name);
  if (version === undefined || handler === undefined || !input.versions.includes(version)) {
    return { outcome: noSuchOperation(payload) };
  }
  const decoded = handler.operation.decodeRequest(input.body);
  if (decoded.kind !== 'ok') {
    const detail = decoded.kind === 'invalid' ? decoded.error.message : 'a fault is not a request';
    return {
      operation: handler.operation.name,
      version,
      outcome: faultReply(version, validationFault(`${handler.operation.name}: ${detail}`)),
    };
  }
  return {
    handler,
    request: decoded.value.request,
    version,
    customerId: input.customerId,
    state: handler.state ?? 'read',
  };
}

export interface Answered extends Dispatched {
  /** Whether the tenant's state may have changed (and must be saved where it is persisted). */
  changed: boolean;
}

/** Runs a call on the tenant's state, changing it in place. */
export async function answerCall(call: Call, tenant: TenantState, env: MockEnvironment): Promise<Answered> {
  const { handler, request, version } = call;
  const named = { operation: handler.operation.name, version };
  const now = env.clock.now();
  const customer = customerOf(tenant, call.customerId);
  // An operation that needs no stored state leaves due orders to the next one that does.
  const settled = call.state !== 'none' && settleOrders(env, tenant, customer, now);
  const ctx: RequestContext = { env, now, version, tenant, customer };

  const replay = handler.replays?.(customer, request) ?? false;
  const scenario = replay
    ? undefined
    : transportScenarioIn(handler.pzns?.(request) ?? [], wholesalerOfTenant(tenant.name));
  if (scenario === 'SERVER_FAULT')
    return { ...named, changed: settled, outcome: faultReply(version, serverFault()) };
  if (scenario === 'DENIAL_OF_SERVICE')
    return { ...named, changed: settled, outcome: faultReply(version, denialOfServiceFault()) };

  let body: string;
  try {
    body = handler.operation.encodeResponse(version, await handler.handle(ctx, request));
  } catch (error) {
    // Handlers check before they change anything, so a fault leaves the state as settled.
    if (error instanceof MockFault)
      return { ...named, changed: settled, outcome: faultReply(version, error) };
    const detail = error instanceof Error ? error.message : String(error);
    const technicalText = `internal error in the sandbox: ${detail}`.slice(0, 1024);
    return {
      ...named,
      changed: true,
      outcome: faultReply(version, new MockFault({ ...serverFault().input, technicalText })),
    };
  }
  return {
    ...named,
    changed: settled || call.state === 'write',
    outcome: applyScenario(scenario, body, env),
  };
}
