import type { Msv3Version } from '../envelope.js';
import type { DecodeResult } from '../result.js';

/**
 * The services of MSV3 (one WSDL each, PROTOCOL.md §1.4). A wholesaler configuration maps each service
 * to a URL path; Lieferavis and Retourenavis host several operations on one URL.
 */
export type Msv3Service =
  | 'verbindungTesten'
  | 'verfuegbarkeitAnfragen'
  | 'verfuegbarkeitAnfragenBulk'
  | 'bestellen'
  | 'bestellstatusAbfragen'
  | 'vertragsdatenAbfragen'
  | 'ruecknahmeangebotAnfordern'
  | 'lieferavis'
  | 'retourenavis'
  | 'dokumentAbfragen';

/**
 * One MSV3 operation: a pure codec for both directions, so the gateway's client and the mock's server
 * share it. Encoders return a complete SOAP 1.2 envelope and expect inputs that are valid for the
 * version (the HTTP layer validates first); decoders never throw.
 */
export interface Msv3Operation<Req, Res> {
  /** Lower-camel operation name, equal to the request wrapper's local name, e.g. `bestellen`. */
  readonly name: string;
  readonly service: Msv3Service;
  /** The versions that define this operation (v2-only operations list `[2]`). */
  readonly versions: readonly Msv3Version[];
  /** The soapAction from the WSDL (v2 bestellstatusAbfragen is `…:bestellantwortAbfragen`). */
  soapAction(version: Msv3Version): string;
  encodeRequest(version: Msv3Version, request: Req): string;
  decodeRequest(xml: string): DecodeResult<{ version: Msv3Version; request: Req }>;
  encodeResponse(version: Msv3Version, response: Res): string;
  decodeResponse(xml: string): DecodeResult<Res>;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds operations of every request/response type.
export type AnyMsv3Operation = Msv3Operation<any, any>;
