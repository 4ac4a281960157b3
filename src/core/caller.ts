import type { KeyMode } from './key-mode.js';

/** Who is calling: the API key's account and mode, which everything stored is scoped to, and the key. */
export interface Caller {
  accountId: string;
  keyId: string;
  mode: KeyMode;
}

/** What stored data belongs to: an account in one mode (a caller without its key). */
export type Tenant = Pick<Caller, 'accountId' | 'mode'>;
