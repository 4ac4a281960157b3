/** The sandbox wholesaler's tenants (see `sandbox-state.ts`). */
export interface SandboxTenantsTable {
  /** The mock's tenant: the URL path before `/msv3`, e.g. `sandbox/<hash of the account>/phoenix`. */
  tenant: string;
  /** Raised by one on every write; a write names the version it read (compare and set). */
  version: number;
  /** The tenant's state as JSON (`mock/state-codec.ts`). */
  document: string;
  updated_at: number;
}
