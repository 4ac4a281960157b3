import type { Msv3Version } from '../msv3/envelope.js';
import type { MockEnvironment } from './options.js';
import type { CustomerState, TenantState } from './state.js';

/** What a request handler works with: the server's settings, the time, and the caller's state. */
export interface RequestContext {
  env: MockEnvironment;
  /** The clock's time when the request arrived. */
  now: number;
  /** The version of the request (its namespace); the answer is written in the same version. */
  version: Msv3Version;
  tenant: TenantState;
  customer: CustomerState;
}
