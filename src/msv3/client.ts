import type { Credentials } from './credentials.js';
import type { Msv3Version } from './envelope.js';
import type { Msv3Operation, Msv3Service } from './operations/operation.js';
import type { CallResult, Transport } from './transport.js';

/**
 * Where one wholesaler's MSV3 server lives. One URL per service (JAX-WS convention, docs/msv3.md
 * "Services and URLs"): the base URL plus a per-service path, overridable because no source fixes the paths.
 */
export interface Msv3Endpoint {
  /** The gateway's wholesaler id; it names the breaker and concurrency budget. */
  target: string;
  /**
   * The gateway account calling it (set by the registry, which resolves an id for one account): its fair
   * share of the target's concurrency budget (docs/resilience.md "Overload").
   */
  account?: string;
  baseUrl: string;
  version: Msv3Version;
  paths?: Partial<Record<Msv3Service, string>>;
}

const DEFAULT_SERVICE_PATHS: Record<Msv3Service, string> = {
  verbindungTesten: '/verbindungTesten',
  verfuegbarkeitAnfragen: '/verfuegbarkeitAnfragen',
  verfuegbarkeitAnfragenBulk: '/verfuegbarkeitAnfragenBulk',
  bestellen: '/bestellen',
  bestellstatusAbfragen: '/bestellstatusAbfragen',
  vertragsdatenAbfragen: '/vertragsdatenAbfragen',
  ruecknahmeangebotAnfordern: '/ruecknahmeangebotAnfordern',
  lieferavis: '/lieferavis',
  retourenavis: '/retourenavis',
  dokumentAbfragen: '/dokumentAbfragen',
};

export function serviceUrl(endpoint: Msv3Endpoint, service: Msv3Service): string {
  const path = endpoint.paths?.[service] ?? DEFAULT_SERVICE_PATHS[service];
  return endpoint.baseUrl.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** A programming error: services check the version first (assertSupports in wholesalers/call.ts). */
class UnsupportedOperationError extends Error {
  override readonly name = 'UnsupportedOperationError';
  constructor(
    readonly operation: string,
    readonly version: Msv3Version,
  ) {
    super(`MSV3 version ${version} has no operation ${operation}`);
  }
}

export interface Msv3Client {
  /**
   * Encodes the request for the endpoint's version, sends it and decodes the answer.
   * @throws UnsupportedOperationError when the endpoint's MSV3 version lacks the operation (checked before any I/O).
   */
  call<Req, Res>(
    operation: Msv3Operation<Req, Res>,
    endpoint: Msv3Endpoint,
    credentials: Credentials,
    request: Req,
    signal?: AbortSignal,
  ): Promise<CallResult<Res>>;
}

/**
 * The one place where codec and transport meet: encode → transport → decode. `plainDecoding: false`
 * turns the decoders' fast path off (FAST_PATH_DECODING, for benchmarks); `tolerateDeviations: true`
 * accepts the schema deviations of `deviations.ts` and names them in the result
 * (MSV3_TOLERATE_DEVIATIONS).
 */
export function createMsv3Client(
  transport: Transport,
  options: { plainDecoding?: boolean; tolerateDeviations?: boolean } = {},
): Msv3Client {
  const decodeOptions = {
    plain: options.plainDecoding !== false,
    tolerate: options.tolerateDeviations === true,
  };
  return {
    async call(operation, endpoint, credentials, request, signal) {
      const { version } = endpoint;
      if (!operation.versions.includes(version)) throw new UnsupportedOperationError(operation.name, version);
      return transport.call(
        {
          target: endpoint.target,
          url: serviceUrl(endpoint, operation.service),
          operation: operation.name,
          action: operation.soapAction(version),
          body: operation.encodeRequest(version, request),
          credentials,
          ...(endpoint.account === undefined ? {} : { account: endpoint.account }),
          ...(signal === undefined ? {} : { signal }),
        },
        (xml) => operation.decodeResponse(xml, undefined, decodeOptions),
      );
    },
  };
}
