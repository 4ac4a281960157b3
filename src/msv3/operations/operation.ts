import { decodePayload, type Msv3Version } from '../envelope.js';
import { type DecodeResult, ok } from '../result.js';
import type { XmlElement } from '../xml/parse.js';
import { DecodeFailure } from '../xml/read.js';
import { checkVersion, soapActionFor } from './fields.js';

/**
 * The services of MSV3 (one WSDL each, docs/msv3.md "Services and URLs"). A wholesaler configuration maps
 * each service to a URL path; Lieferavis and Retourenavis host several operations on one URL.
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
  /**
   * `expectedVersion`, when given, turns an answer in the other version into `invalid`. `plain: false`
   * skips the fast path for answers in their plain form (FAST_PATH_DECODING, for benchmarks).
   * `tolerate: true` accepts the deviations of `msv3/deviations.ts`, named in the `ok` outcome
   * (MSV3_TOLERATE_DEVIATIONS).
   */
  decodeResponse(xml: string, expectedVersion?: Msv3Version, options?: DecodeOptions): DecodeResult<Res>;
}

interface DecodeOptions {
  plain?: boolean;
  tolerate?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds operations of every request/response type.
export type AnyMsv3Operation = Msv3Operation<any, any>;

/** What an operation module defines itself; `defineOperation` adds the envelope and version wiring. */
export interface OperationCodec<Req, Res> {
  /** The request wrapper's local name; the response wrapper is `${name}Response`. */
  name: string;
  service: Msv3Service;
  /** Operations that exist only in MSV3 v2 (delivery notices, returns, documents). Default: v1 and v2. */
  v2Only?: boolean;
  /** Only where the WSDL's soapAction is not `urn:msv3:v<version>:Msv3:<name>`. */
  soapAction?: (version: Msv3Version) => string;
  /** Writes the whole envelope (`wrapEnvelope`). */
  encodeRequest(version: Msv3Version, request: Req): string;
  /** Reads the request wrapper element (throws `DecodeFailure`, which becomes `invalid`). */
  readRequest(wrapper: XmlElement, version: Msv3Version): Req;
  /** Writes the whole envelope (`wrapEnvelope`). */
  encodeResponse(version: Msv3Version, response: Res): string;
  /** Reads the response wrapper element (throws `DecodeFailure`, which becomes `invalid`). */
  readResponse(wrapper: XmlElement, version: Msv3Version): Res;
  /**
   * Optional fast path for the answer in its plain form (`xml/plain.ts`): the decoded answer, or
   * undefined to let `parseXml` and `readResponse` decide. It must never return a value that they
   * would not return for the same document and `expectedVersion`.
   */
  readResponsePlain?(xml: string, expectedVersion: Msv3Version | undefined): Res | undefined;
}

/** Operations that exist only in v2 refuse a v1 wrapper (and encoders refuse to write one). */
function requireV2(wrapper: string, version: Msv3Version): void {
  if (version !== 2) throw new DecodeFailure(`${wrapper} is not part of MSV3 v${version} (v2 only)`);
}

function assertEncodable(operation: string, versions: readonly Msv3Version[], version: Msv3Version): void {
  if (!versions.includes(version)) throw new RangeError(`MSV3 v${version} has no operation ${operation}`);
}

const TOLERATE = { tolerate: true };
const BOTH_VERSIONS: readonly Msv3Version[] = [1, 2];
const V2_ONLY: readonly Msv3Version[] = [2];

/**
 * The `Msv3Operation` for a codec: decoders open the envelope, check the wrapper's local name and turn
 * any failure into `invalid` (`decodePayload`); `decodeResponse` checks the expected version. A v2-only
 * operation refuses a v1 wrapper in both decoders (`requireV2`) and throws a RangeError when asked to
 * encode, or name the soapAction of, v1 (`assertEncodable`).
 */
export function defineOperation<Req, Res>(codec: OperationCodec<Req, Res>): Msv3Operation<Req, Res> {
  const { name, readRequest, readResponse, readResponsePlain } = codec;
  const responseName = `${name}Response`;
  const v2Only = codec.v2Only === true;
  const versions = v2Only ? V2_ONLY : BOTH_VERSIONS;
  const soapAction = codec.soapAction ?? ((version: Msv3Version) => soapActionFor(version, name));

  const readRequestPayload = (wrapper: XmlElement, version: Msv3Version) => {
    if (v2Only) requireV2(name, version);
    return { version, request: readRequest(wrapper, version) };
  };

  return {
    name,
    service: codec.service,
    versions,
    soapAction: v2Only
      ? (version) => {
          assertEncodable(name, versions, version);
          return soapAction(version);
        }
      : soapAction,
    encodeRequest: v2Only
      ? (version, request) => {
          assertEncodable(name, versions, version);
          return codec.encodeRequest(version, request);
        }
      : codec.encodeRequest,
    decodeRequest: (xml) => decodePayload(xml, name, readRequestPayload),
    encodeResponse: v2Only
      ? (version, response) => {
          assertEncodable(name, versions, version);
          return codec.encodeResponse(version, response);
        }
      : codec.encodeResponse,
    decodeResponse: (xml, expectedVersion, options) => {
      const plain = options?.plain === false ? undefined : readResponsePlain?.(xml, expectedVersion);
      if (plain !== undefined) return ok(plain);
      const read = (wrapper: XmlElement, version: Msv3Version) => {
        checkVersion(version, expectedVersion);
        if (v2Only) requireV2(responseName, version);
        return readResponse(wrapper, version);
      };
      return decodePayload(xml, responseName, read, options?.tolerate === true ? TOLERATE : {});
    },
  };
}
