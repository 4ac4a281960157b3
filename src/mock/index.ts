/**
 * The sandbox wholesaler (docs/msv3.md "The sandbox wholesaler"; docs/wholesalers.md "Routing"): a real SOAP
 * 1.2 MSV3 server for the gateway's sandbox and for pharmacy developers testing their own clients.
 */

export type { MockWholesalerOptions } from './options.js';

export {
  SCENARIO_PASSWORDS,
  SCENARIO_PZNS,
  SUBSTITUTE_PZN,
} from './scenarios.js';
export type { MockWholesaler } from './server.js';
export { startMockWholesaler } from './server.js';
