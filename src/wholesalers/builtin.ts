/** A wholesaler as the API shows it (SPEC 2.1). */
export interface Wholesaler {
  id: string;
  name: string;
  /** Only for custom wholesalers. */
  endpoint?: string;
  verified: boolean;
  capabilities: string[];
}

const FULL = ['availability', 'order', 'contracts'];

/** The wholesalers the gateway knows out of the box (to be replaced by the catalogue). */
export const BUILTIN_WHOLESALERS: readonly Wholesaler[] = [
  { id: 'phoenix', name: 'PHOENIX Pharmahandel', verified: true, capabilities: FULL },
  { id: 'alliance', name: 'Alliance Healthcare Deutschland', verified: true, capabilities: FULL },
  { id: 'sanacorp', name: 'Sanacorp Pharmahandel', verified: true, capabilities: FULL },
  { id: 'noweda', name: 'NOWEDA Apothekergenossenschaft', verified: true, capabilities: FULL },
  { id: 'aep', name: 'AEP direkt', verified: true, capabilities: FULL },
  { id: 'gehe', name: 'GEHE Pharma Handel', verified: true, capabilities: FULL },
];
