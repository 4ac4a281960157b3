import type { Msv3Version } from './envelope.js';
import { verbindungTesten } from './operations/verbindung-testen.js';

/**
 * What the credential-free reachability probe sends: a schema-valid `verbindungTesten` request of the
 * endpoint's MSV3 version (its namespace and SOAP action), only without HTTP Basic credentials. A real
 * MSV3 server answers it with 401 before reading it, which counts as reachable; one that reads it anyway
 * finds a well-formed request of an operation every version has (an empty SOAP Body, which the probe
 * used to send, is valid against no MSV3 schema and may be logged as an error). See docs/resilience.md.
 */
export interface ProbeRequest {
  /** The SOAP 1.2 action of `verbindungTesten` in this version. */
  action: string;
  /** The complete envelope. */
  body: string;
}

export function probeRequest(version: Msv3Version, clientSoftwareId: string): ProbeRequest {
  return {
    action: verbindungTesten.soapAction(version),
    body: verbindungTesten.encodeRequest(version, { clientSoftwareId }),
  };
}
