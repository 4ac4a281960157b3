/**
 * The sandbox wholesaler (PROTOCOL.md §8 "Mock server"; SPEC.md §5 rule 6): a real SOAP 1.2 MSV3 server
 * for the gateway's sandbox and for pharmacy developers testing their own clients.
 */

export type { MockWholesalerOptions } from './options.js';

export {
  SCENARIO_PASSWORDS,
  SCENARIO_PZNS,
  SUBSTITUTE_PZN,
} from './scenarios.js';
export type { MockWholesaler } from './server.js';
export { startMockWholesaler } from './server.js';
