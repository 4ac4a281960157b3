import type { Pzn } from '../msv3/model.js';

/**
 * Documented inputs that force a behaviour on demand, like payment providers' test card numbers.
 * Every scenario PZN has a valid PZN-8 check digit, so client software that validates PZNs sends it.
 * docs/sandbox.md "Scenario PZNs" lists the same table; a test keeps them in step.
 *
 * Series: 0999 00xx = article behaviour, 0999 01xx = order and delivery, 0999 02xx = transport and faults.
 */

export interface ScenarioPzn {
  /** 8-digit PZN (on the wire without the leading zero: `9990010`). */
  pzn: Pzn;
  /** What happens, for docs/sandbox.md and `msv3-gateway mock`. */
  summary: string;
  /** Where it has an effect. */
  operations: string;
}

const ARTICLE =
  'verfuegbarkeitAnfragen, verfuegbarkeitAnfragenBulk, bestellen, bestellstatusAbfragen, lieferavis*';
/** Scenarios that depend on the wholesaler the sandbox plays (the last segment of its tenant path). */
const SEVERAL_WHOLESALERS = `${ARTICLE}, by wholesaler`;
const ANY_WITH_PZNS =
  'any request that lists it: verfuegbarkeitAnfragen, verfuegbarkeitAnfragenBulk (list), bestellen, ruecknahmeangebotAnfordern, retourenavis*';

export const SCENARIO_PZNS = {
  NOT_DELIVERABLE: {
    pzn: '09990010',
    summary: 'Not deliverable: one NichtLieferbar part, Grund HerstellerNichtLieferbar (v1: NichtLieferbar).',
    operations: ARTICLE,
  },
  PARTIAL: {
    pzn: '09990027',
    summary:
      'Only 2 units in stock: Normal 2 + NichtLieferbar for the rest (Grund Teildefekt in availability, FehltZurzeit in orders).',
    operations: ARTICLE,
  },
  BACK_ORDER: {
    pzn: '09990033',
    summary:
      'Out of stock, back-orderable: one Nachlieferung part (FehltZurzeit); an order below MaxNachlieferung gets KeineLieferungAberNachlieferungMoeglich.',
    operations: ARTICLE,
  },
  SUBSTITUTION: {
    pzn: '09990056',
    summary:
      'Off the market, replaced by 09990091: Substitution Nachfolgeprodukt (Grund AusserHandel) with Normal parts; with `nosubst` only a Vorschlag and a NichtLieferbar part.',
    operations: ARTICLE,
  },
  TOUR_DEVIATION: {
    pzn: '09990062',
    summary:
      'Cold-chain article: Normal, but not with the next tour (Tourabweichung=true in v2, a later tour in v1); returns for Bestellfehler/VerfallZuKurz/ZuvielGeliefert get KeineRuecknahme.',
    operations: `${ARTICLE}, retourenavis*`,
  },
  NETWORK: {
    pzn: '09990079',
    summary:
      'Only in the partner warehouse: one Verbund part (a later tour); an order with Liefervorgabe Normal gets KeineLieferungAberVerbundMoeglich.',
    operations: ARTICLE,
  },
  DISPO: {
    pzn: '09990085',
    summary:
      'Not carried, procured specially: one Dispo part (Grund NichtGefuehrt, in about 2 days); an order below MaxDispo gets KeineLieferungAberDispoMoeglich.',
    operations: ARTICLE,
  },
  ORDER_REJECTED: {
    pzn: '09990116',
    summary:
      'The sub-order containing it is rejected in-band: Auftragsfehler, no positions, no delivery notice.',
    operations: 'bestellen, bestellstatusAbfragen',
  },
  SPLIT_DELIVERY: {
    pzn: '09990145',
    summary:
      'Confirmed in full, delivered on two delivery notes: half (rounded up) on the note of its sub-order and tour, the rest on a second note of the same tour.',
    operations: 'bestellen, lieferavis*, dokumentAbfragen',
  },
  DELIVERY_SHORTAGE: {
    pzn: '09990122',
    summary:
      'Confirmed in full, but the delivery notice reports half of it (rounded up) as Fehlmenge; FehlmengenEnthalten=true.',
    operations: 'bestellen, lieferavis*, dokumentAbfragen',
  },
  NIGHT_MODE: {
    pzn: '09990139',
    summary:
      'The order is taken in night mode at any hour: NachtBetrieb=true, no sub-orders; bestellstatusAbfragen says BestellantwortNichtVerfuegbar until it is processed (nightOrderDelayMs later), then BestellantwortVerfuegbar.',
    operations: 'bestellen, bestellstatusAbfragen',
  },
  SERVER_FAULT: {
    pzn: '09990205',
    summary: 'SOAP fault ServerFaultInfo (HTTP 500); nothing is placed or stored.',
    operations: ANY_WITH_PZNS,
  },
  DENIAL_OF_SERVICE: {
    pzn: '09990211',
    summary: 'SOAP fault DenialOfServiceFault (HTTP 500); nothing is placed or stored.',
    operations: ANY_WITH_PZNS,
  },
  SLOW_ANSWER: {
    pzn: '09990228',
    summary: 'The normal answer, sent after slowAnswerMs (default 2 s, at most 60 s).',
    operations: ANY_WITH_PZNS,
  },
  MALFORMED_ANSWER: {
    pzn: '09990234',
    summary:
      'HTTP 200 with a truncated, unparsable envelope. An order is placed and stored first (status queries and retries with the same Id work).',
    operations: ANY_WITH_PZNS,
  },
  CONNECTION_DROP: {
    pzn: '09990240',
    summary:
      'The request is processed (an order is placed and stored), then the socket is destroyed before any answer. A retry with the same Bestellung Id gets the stored answer.',
    operations: ANY_WITH_PZNS,
  },
  LATE_ANSWER: {
    pzn: '09990257',
    summary:
      'The request is processed (an order is placed and stored), the answer is held back for lateAnswerMs (default 35 s, beyond the default headers timeout; at most 300 s).',
    operations: ANY_WITH_PZNS,
  },
  ONLY_AT_ALLIANCE: {
    pzn: '09990300',
    summary:
      'Several wholesalers: 500 units for the next tour at alliance; not deliverable (FehltZurzeit) at every other wholesaler.',
    operations: SEVERAL_WHOLESALERS,
  },
  ONLY_AT_SANACORP: {
    pzn: '09990317',
    summary:
      'Several wholesalers: 500 units for the next tour at sanacorp; not deliverable (FehltZurzeit) at every other wholesaler.',
    operations: SEVERAL_WHOLESALERS,
  },
  SHORT_EVERYWHERE: {
    pzn: '09990323',
    summary:
      'Several wholesalers: 3 units at phoenix, 4 at alliance, 5 at sanacorp, none elsewhere; the rest not deliverable (FehltZurzeit).',
    operations: SEVERAL_WHOLESALERS,
  },
  DOWN_AT_NOWEDA: {
    pzn: '09990346',
    summary:
      'Several wholesalers: noweda is down for any request that lists it (SOAP fault ServerFaultInfo, HTTP 500, nothing placed); an ordinary in-stock article everywhere else.',
    operations: 'any request that lists it, at noweda',
  },
} as const satisfies Record<string, ScenarioPzn>;

export type ScenarioName = keyof typeof SCENARIO_PZNS;

/** The article delivered instead of `SCENARIO_PZNS.SUBSTITUTION` (an ordinary in-stock article). */
export const SUBSTITUTE_PZN: Pzn = '09990091';

const BY_PZN = new Map<Pzn, ScenarioName>(
  Object.entries(SCENARIO_PZNS).map(([name, s]) => [s.pzn, name as ScenarioName]),
);

export function scenarioOf(pzn: Pzn): ScenarioName | undefined {
  return BY_PZN.get(pzn);
}

/** Scenarios about the answer rather than the article, in the order of precedence when several are present. */
export const TRANSPORT_SCENARIOS = [
  'SERVER_FAULT',
  'DENIAL_OF_SERVICE',
  'CONNECTION_DROP',
  'LATE_ANSWER',
  'MALFORMED_ANSWER',
  'SLOW_ANSWER',
] as const satisfies readonly ScenarioName[];

export type TransportScenario = (typeof TRANSPORT_SCENARIOS)[number];

/** The wholesaler that is down for requests listing `DOWN_AT_NOWEDA`. */
const DOWN_WHOLESALER = 'noweda';

export function transportScenarioIn(pzns: Iterable<Pzn>, wholesaler = ''): TransportScenario | undefined {
  const present = new Set<string>();
  for (const pzn of pzns) {
    const name = BY_PZN.get(pzn);
    if (name === 'DOWN_AT_NOWEDA' && wholesaler === DOWN_WHOLESALER) present.add('SERVER_FAULT');
    else if (name !== undefined) present.add(name);
  }
  return TRANSPORT_SCENARIOS.find((name) => present.has(name));
}

/** Passwords with a fixed meaning in sandbox mode (any other non-empty password is accepted). */
export const SCENARIO_PASSWORDS = {
  /** Always 401 with the Basic challenge, like a wrong password. */
  REJECTED: 'wrong-password',
  /** Always 403 (authenticated, but the account is locked). */
  FORBIDDEN: 'forbidden',
} as const;

/**
 * Case-insensitive parts of the user name (Kundenkennung) that change the customer's contract. They
 * combine: `PLA\apo1nobulknoreturns` has neither bulk availability nor take-back offers.
 */
export const CONTRACT_MARKERS = {
  nobulk: 'VerfuegbarkeitBulkVereinbart=false: verfuegbarkeitAnfragenBulk answers AuthorizationFaultInfo.',
  noreturns: 'RuecknahmeangebotVereinbart=false: ruecknahmeangebotAnfordern answers AuthorizationFaultInfo.',
  nosubst: 'Substitutionsvereinbarung=false: substitutions are only proposed (Substitutionsgrund Vorschlag).',
  unspecific:
    'VerfuegbarkeitEinzelnSpezifischeRueckmeldungVereinbart=false: availability answers are RTyp=Unspezifisch, without Lieferzeitpunkt and Tour.',
  normalonly: 'STAPEL and SONDER not agreed: such sub-orders are rejected with Auftragsfehler.',
  versand: 'VERSAND agreed (off by default): VERSAND sub-orders (with GebindeId) are accepted.',
  komplett:
    'NurKompletteGebinde=true (with versand): shipping containers must be complete: one sub-order per GebindeId, no MaxNachlieferung or MaxDispo lines; a sub-order breaking it is rejected with Auftragsfehler.',
} as const;

export type ContractMarker = keyof typeof CONTRACT_MARKERS;

/** Lines for `msv3-gateway mock`: what to type to get which behaviour. */
export function describeScenarios(): string[] {
  const lines = ['Scenario PZNs:'];
  for (const [name, s] of Object.entries(SCENARIO_PZNS)) lines.push(`  ${s.pzn}  ${name}: ${s.summary}`);
  lines.push(`  ${SUBSTITUTE_PZN}  (the successor article delivered for SUBSTITUTION)`);
  lines.push('Scenario passwords (sandbox mode):');
  lines.push(`  ${SCENARIO_PASSWORDS.REJECTED}  → 401 with WWW-Authenticate: Basic realm="MSV3"`);
  lines.push(`  ${SCENARIO_PASSWORDS.FORBIDDEN}  → 403`);
  lines.push('User-name markers (contract flags):');
  for (const [marker, text] of Object.entries(CONTRACT_MARKERS)) lines.push(`  …${marker}…  ${text}`);
  return lines;
}
