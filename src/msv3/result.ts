import type { DeviationName } from './deviations.js';

/**
 * Outcome types shared by the codec (which produces them) and the transport (which passes them on).
 * Decoders never throw: every envelope becomes exactly one of these three outcomes.
 */

/** The MSV3 fault beans (docs/msv3.md "Faults"), plus `Unknown` for a SOAP fault without a recognised bean. */
export type Msv3FaultKind =
  | 'ServerFault'
  | 'ValidationFault'
  | 'DenialOfServiceFault'
  | 'AuthorizationFault'
  | 'LieferscheinOderBarcodeUnbekanntFault'
  | 'Unknown';

export interface Msv3Fault {
  kind: Msv3FaultKind;
  /** SOAP 1.2 `env:Code/env:Value` local part, e.g. `Receiver` or `Sender`. */
  soapCode: string;
  /** SOAP 1.2 `env:Reason/env:Text`. */
  reason: string;
  /** MSV3 `ErrorCode` (1–5 characters), when a fault bean was present. */
  errorCode?: string;
  /** MSV3 `EndanwenderFehlertext`: text meant for the pharmacy user. */
  userText?: string;
  /** MSV3 `TechnischerFehlertext`: text meant for support and logs. */
  technicalText?: string;
  /**
   * For an `Unknown` fault whose `env:Detail` holds an element: why it is no MSV3 fault bean (e.g. in
   * the SOAP namespace), with the element's path.
   */
  beanProblem?: string;
}

interface DecodeError {
  /** What was wrong, e.g. `DOCTYPE is not allowed` or `missing element m:Pzn in Artikel[3]`. */
  message: string;
}

export type DecodeResult<T> =
  /** `deviations`: the tolerated schema deviations the answer had (msv3/deviations.ts), if any. */
  | { kind: 'ok'; value: T; deviations?: readonly DeviationName[] }
  | { kind: 'fault'; fault: Msv3Fault }
  | { kind: 'invalid'; error: DecodeError };

export const ok = <T>(value: T): DecodeResult<T> => ({ kind: 'ok', value });
export const invalid = <T = never>(message: string): DecodeResult<T> => ({
  kind: 'invalid',
  error: { message },
});
export const fault = <T = never>(f: Msv3Fault): DecodeResult<T> => ({ kind: 'fault', fault: f });
