import { repairTolerated } from './deviations.js';
import { type DecodeResult, fault, invalid, type Msv3Fault, type Msv3FaultKind, ok } from './result.js';
import { type ParseLimits, parseXml, type XmlElement, XmlError } from './xml/parse.js';
import { declare, INITIAL_BINDINGS, type PlainBindings, PlainShape, resolveName } from './xml/plain.js';
import { DecodeFailure, XSI_NS } from './xml/read.js';
import { escapeText } from './xml/write.js';

/**
 * SOAP 1.2 envelopes for MSV3 (docs/msv3.md "Envelope", "Element qualification", "Faults"). Payloads are
 * written by the operation codecs with the prefix `m` bound to the version namespace; here they get wrapped,
 * and on the way back the Body's single child is found (namespace-aware, any prefix) or turned into a typed
 * fault.
 */

export type Msv3Version = 1 | 2;

export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
/** Only to name it when a wholesaler answers with it: MSV3 is SOAP 1.2 only. */
const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const MSV3_V1_NS = 'urn:msv3:v1';
export const MSV3_V2_NS = 'urn:msv3:v2';

export function msv3Namespace(version: Msv3Version): string {
  return version === 1 ? MSV3_V1_NS : MSV3_V2_NS;
}

export function versionOfNamespace(ns: string): Msv3Version | undefined {
  return ns === MSV3_V2_NS ? 2 : ns === MSV3_V1_NS ? 1 : undefined;
}

/** Wraps a payload whose qualified elements use the prefix `m` (and `xsi` for nil). */
export function wrapEnvelope(version: Msv3Version, payload: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${SOAP12_NS}" xmlns:m="${msv3Namespace(version)}" ` +
    `xmlns:xsi="${XSI_NS}"><env:Body>${payload}</env:Body></env:Envelope>`
  );
}

export interface BodyPayload {
  /** The Body's child element (the MSV3 wrapper such as `verfuegbarkeitAnfragenResponse`). */
  element: XmlElement;
  version: Msv3Version;
}

/**
 * Parses an envelope and returns the Body's payload element. A SOAP fault becomes a `fault` outcome;
 * anything malformed (including a DOCTYPE, unknown entities, excessive depth or size) becomes `invalid`.
 */
export function openEnvelope(xml: string, limits?: ParseLimits): DecodeResult<BodyPayload> {
  let root: XmlElement;
  try {
    root = parseXml(xml, limits);
  } catch (error) {
    return invalid(error instanceof XmlError ? `malformed XML: ${error.message}` : 'malformed XML');
  }
  if (root.ns !== SOAP12_NS || root.local !== 'Envelope') {
    if (root.local !== 'Envelope') return invalid(`expected a SOAP 1.2 Envelope, found <${root.qname}>`);
    // SOAP 1.2 §2.8: the envelope's namespace is the message's SOAP version; a SOAP 1.2 node refuses others.
    if (root.ns === SOAP11_NS)
      return invalid(
        `a SOAP 1.1 envelope: <${root.qname}> is in ${SOAP11_NS}, but MSV3 is SOAP 1.2 only (${SOAP12_NS}); the wholesaler's SOAP stack must answer SOAP 1.2`,
      );
    return invalid(
      `not a SOAP 1.2 envelope: <${root.qname}> is in ${root.ns || 'no namespace'}, not ${SOAP12_NS}`,
    );
  }
  const body = root.child(SOAP12_NS, 'Body');
  if (body === undefined) {
    const misplaced = root.children.find((c) => c.local === 'Body');
    return invalid(
      misplaced === undefined
        ? 'the envelope has no Body'
        : `${root.qname}/${misplaced.qname}: element in the wrong namespace: the Body is in ${misplaced.ns || 'no namespace'}, not ${SOAP12_NS}`,
    );
  }
  if (body.children.length !== 1)
    return invalid(`the Body must hold exactly one element, found ${body.children.length}`);
  const element = body.children[0]!;
  if (element.ns === SOAP12_NS && element.local === 'Fault')
    return fault(readFault(element, `${root.qname}/${body.qname}/${element.qname}`));
  const version = versionOfNamespace(element.ns);
  if (version === undefined)
    return invalid(
      `${root.qname}/${body.qname}/${element.qname}: the payload is in ${element.ns || 'no namespace'}, not in an MSV3 namespace (${MSV3_V2_NS} or ${MSV3_V1_NS})`,
    );
  return ok({ element, version });
}

/**
 * Opens an envelope and hands the payload to `read` when it is the expected wrapper element.
 * Any DecodeFailure (or any other exception) thrown by `read` becomes an `invalid` outcome.
 */
export function decodePayload<T>(
  xml: string,
  expectedLocalName: string,
  read: (element: XmlElement, version: Msv3Version) => T,
  options: { limits?: ParseLimits; tolerate?: boolean } = {},
): DecodeResult<T> {
  const opened = openEnvelope(xml, options.limits);
  if (opened.kind !== 'ok') return opened;
  const { element, version } = opened.value;
  if (element.local !== expectedLocalName) {
    return invalid(`expected <${expectedLocalName}>, found <${element.local}>`);
  }
  try {
    return ok(read(element, version));
  } catch (error) {
    const refused = readFailure<T>(error, expectedLocalName);
    // Tolerated deviations are looked for only once the strict read has failed (docs/msv3.md).
    if (options.tolerate !== true) return refused;
    const deviations = repairTolerated(element);
    if (deviations.length === 0) return refused;
    try {
      return { kind: 'ok', value: read(element, version), deviations };
    } catch (again) {
      return readFailure(again, expectedLocalName);
    }
  }
}

function readFailure<T>(error: unknown, expectedLocalName: string): DecodeResult<T> {
  if (error instanceof DecodeFailure || error instanceof XmlError) return invalid(error.message);
  return invalid(
    `cannot decode ${expectedLocalName}: ${error instanceof Error ? error.message : 'unknown error'}`,
  );
}

/** The head of an envelope in its plain form, read by `openPlainEnvelope`, up to the payload. */
export interface PlainPayload {
  version: Msv3Version;
  /** The wrapper's prefix, bound to the version namespace; the payload's qualified elements use it. */
  prefix: string;
  /** A prefix bound to the XSI namespace, for `xsi:nil` ('' when there is none). */
  xsiPrefix: string;
  /** The end tags that close the payload: the wrapper's, the Body's and the Envelope's. */
  ends: [string, string, string];
}

/**
 * The plain head of an envelope for a fast path (`xml/plain.ts`): the Envelope, its Body (no Header
 * before it) and, as the Body's first element, the wrapper `wrapperLocal` with a prefix bound to an
 * MSV3 namespace, no attributes and no default namespace in scope (so `return` is unqualified).
 * Namespace declarations on these three are read; anything else gives up.
 */
export function openPlainEnvelope(shape: PlainShape, wrapperLocal: string): PlainPayload {
  const envelope = shape.startTag();
  let bindings = declare(INITIAL_BINDINGS as PlainBindings, envelope);
  const envelopeName = resolveName(envelope.qname, bindings);
  if (envelope.selfClosing || envelopeName?.ns !== SOAP12_NS || envelopeName.local !== 'Envelope')
    PlainShape.giveUp();
  const body = shape.startTag();
  bindings = declare(bindings, body);
  const bodyName = resolveName(body.qname, bindings);
  if (body.selfClosing || bodyName?.ns !== SOAP12_NS || bodyName.local !== 'Body') PlainShape.giveUp();
  const wrapper = shape.startTag();
  bindings = declare(bindings, wrapper);
  const wrapperName = resolveName(wrapper.qname, bindings);
  if (wrapper.selfClosing || wrapper.attrs !== null || wrapperName === undefined) PlainShape.giveUp();
  const version = versionOfNamespace(wrapperName.ns);
  if (version === undefined || wrapperName.local !== wrapperLocal || wrapperName.prefix === '')
    PlainShape.giveUp();
  if ((bindings.get('') ?? '') !== '') PlainShape.giveUp();
  shape.bindings = bindings;
  let xsiPrefix = '';
  for (const [prefix, uri] of bindings) if (uri === XSI_NS && prefix !== '') xsiPrefix = prefix;
  return {
    version,
    prefix: wrapperName.prefix,
    xsiPrefix,
    ends: [`</${wrapper.qname}>`, `</${body.qname}>`, `</${envelope.qname}>`],
  };
}

/** After the payload: the end tags of `openPlainEnvelope`'s head, then only whitespace. */
export function closePlainEnvelope(shape: PlainShape, payload: PlainPayload): void {
  for (const end of payload.ends) shape.expect(end);
  if (!shape.atEnd()) PlainShape.giveUp();
}

const FAULT_BEANS: Record<string, Msv3FaultKind> = {
  ServerFaultInfo: 'ServerFault',
  ValidationFault: 'ValidationFault',
  DenialOfServiceFault: 'DenialOfServiceFault',
  AuthorizationFaultInfo: 'AuthorizationFault',
  LieferscheinOderBarcodeUnbekanntFaultInfo: 'LieferscheinOderBarcodeUnbekanntFault',
};

const BEAN_OF_KIND: Record<Exclude<Msv3FaultKind, 'Unknown'>, string> = {
  ServerFault: 'ServerFaultInfo',
  ValidationFault: 'ValidationFault',
  DenialOfServiceFault: 'DenialOfServiceFault',
  AuthorizationFault: 'AuthorizationFaultInfo',
  LieferscheinOderBarcodeUnbekanntFault: 'LieferscheinOderBarcodeUnbekanntFaultInfo',
};

function readFault(faultEl: XmlElement, path: string): Msv3Fault {
  const codeValue = faultEl.child(SOAP12_NS, 'Code')?.child(SOAP12_NS, 'Value')?.text().trim() ?? '';
  const colon = codeValue.indexOf(':');
  const soapCode = colon === -1 ? codeValue : codeValue.slice(colon + 1);
  const reasonEl = faultEl.child(SOAP12_NS, 'Reason')?.child(SOAP12_NS, 'Text');
  const result: Msv3Fault = { kind: 'Unknown', soapCode, reason: reasonEl?.text() ?? '' };
  const detail = faultEl.child(SOAP12_NS, 'Detail');
  const bean = detail?.children[0];
  if (bean === undefined) return result;
  const at = `${path}/${detail!.qname}/${bean.qname}`;
  if (versionOfNamespace(bean.ns) === undefined) {
    result.beanProblem = `the fault bean ${at} is in ${bean.ns || 'no namespace'}, not in ${MSV3_V2_NS} (or ${MSV3_V1_NS})`;
    return result;
  }
  const kind = FAULT_BEANS[bean.local];
  if (kind === undefined) {
    result.beanProblem = `${at} is no MSV3 fault bean`;
    return result;
  }
  result.kind = kind;
  const errorCode = bean.child(bean.ns, 'ErrorCode')?.text();
  const userText = bean.child(bean.ns, 'EndanwenderFehlertext')?.text();
  const technicalText = bean.child(bean.ns, 'TechnischerFehlertext')?.text();
  if (errorCode !== undefined) result.errorCode = errorCode;
  if (userText !== undefined) result.userText = userText;
  if (technicalText !== undefined) result.technicalText = technicalText;
  return result;
}

export interface FaultInput {
  kind: Exclude<Msv3FaultKind, 'Unknown'>;
  /** 1–5 characters. */
  errorCode: string;
  userText: string;
  technicalText: string;
  /** `Receiver` for server-side problems, `Sender` for invalid requests. Defaults by kind. */
  soapCode?: 'Receiver' | 'Sender';
  reason?: string;
}

/** A SOAP 1.2 fault with an MSV3 fault bean, as a server (the mock) sends it with HTTP 500. */
export function encodeFault(version: Msv3Version, input: FaultInput): string {
  const code =
    input.soapCode ??
    (input.kind === 'ServerFault' || input.kind === 'DenialOfServiceFault' ? 'Receiver' : 'Sender');
  const bean = BEAN_OF_KIND[input.kind];
  return wrapEnvelope(
    version,
    `<env:Fault><env:Code><env:Value>env:${code}</env:Value></env:Code>` +
      `<env:Reason><env:Text xml:lang="de">${escapeText(input.reason ?? input.userText)}</env:Text></env:Reason>` +
      `<env:Detail><m:${bean}><m:ErrorCode>${escapeText(input.errorCode)}</m:ErrorCode>` +
      `<m:EndanwenderFehlertext>${escapeText(input.userText)}</m:EndanwenderFehlertext>` +
      `<m:TechnischerFehlertext>${escapeText(input.technicalText)}</m:TechnischerFehlertext>` +
      `</m:${bean}></env:Detail></env:Fault>`,
  );
}
