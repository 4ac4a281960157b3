/**
 * The sandbox wholesaler (PROTOCOL.md §8 "Mock server"; SPEC.md §5 rule 6): a real SOAP 1.2 MSV3 server
 * for the gateway's sandbox and for pharmacy developers testing their own clients.
 */

export { parseEndpointPath, tenantBaseUrl } from './endpoint-path.js';
export type { MockInspector, NoticeView, OrderView, StateFilter } from './inspect.js';
export type { MockSettings, MockWholesalerOptions, NightHours } from './options.js';
export { optionsFromSettings, parseNightHours } from './options.js';
export type { ScenarioName, ScenarioPzn } from './scenarios.js';
export {
  CONTRACT_MARKERS,
  describeScenarios,
  SCENARIO_PASSWORDS,
  SCENARIO_PZNS,
  SUBSTITUTE_PZN,
} from './scenarios.js';
export type { MockWholesaler } from './server.js';
export { startMockWholesaler } from './server.js';
