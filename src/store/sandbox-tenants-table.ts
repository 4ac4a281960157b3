import type { Generated } from 'kysely';

/** The sandbox wholesaler's tenants (see `sandbox-state.ts`). */
export interface SandboxTenantsTable {
  /** The mock's tenant: the URL path before `/msv3`, e.g. `sandbox/<hash of the account>/phoenix`. */
  tenant: string;
  /** Raised by one on every write; a write names the version it read (compare and set). */
  version: number;
  /** The tenant's head as JSON (`mock/state-codec.ts`); its records are in `sandbox_records`. */
  document: string;
  updated_at: number;
}

/** One record of a sandbox tenant's customer: an order, a notice, a document, … (`sandbox-state.ts`). */
export interface SandboxRecordsTable {
  /** Rises with every insert: records load in the order they were first stored. */
  seq: Generated<number>;
  tenant: string;
  customer_id: string;
  /** Which of the customer's record maps: `order`, `notice`, `document`, … (`mock/record-map.ts`). */
  kind: string;
  key: string;
  /** The record as JSON (`mock/state-codec.ts`). */
  document: string;
}
