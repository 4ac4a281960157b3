import { type Defektgrund, type Pzn, pznCheckDigit } from '../msv3/model.js';
import { type ScenarioName, SUBSTITUTE_PZN, scenarioOf } from './scenarios.js';

/**
 * The simulated catalogue. Every PZN of up to 8 digits (other than 00000000) is a known article whose
 * stock, name, batch and expiry are derived from a hash of the PZN, so answers are stable across runs
 * and servers. Stock never depletes: the mock simulates answers, not a warehouse. Longer numbers (EANs)
 * are unknown articles. Scenario PZNs get hand-made profiles.
 */

export interface Article {
  pzn: Pzn;
  /** `Artikelbezeichnung` (≤ 50 characters). */
  name: string;
  /** Units for the next tour (`Normal`). */
  stock: number;
  /** Units in the partner warehouse (`Verbund`). */
  networkStock: number;
  /** The rest can be back-ordered (`Nachlieferung`). */
  backOrder: boolean;
  /** The rest can be procured specially (`Dispo`). */
  specialProcurement: boolean;
  /** Why what cannot be supplied is missing (`Grund` of a NichtLieferbar part). */
  shortfallReason: Defektgrund;
  /** Cannot go with the next tour (cold chain): `Tourabweichung`. */
  tourDeviation: boolean;
  /** When set, the article is off the market and this one is delivered instead. */
  successor?: Pzn;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a, 32 bit: tiny, stable and good enough to spread PZNs over stock levels and names. */
function hash32(text: string, seed = 0): number {
  let h = (FNV_OFFSET ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME) >>> 0;
  }
  return h;
}

/** Whether an 8-digit PZN ends in the check digit its first seven digits call for. */
export function hasValidCheckDigit(pzn: Pzn): boolean {
  return /^[0-9]{8}$/.test(pzn) && pznCheckDigit(pzn) === Number(pzn[7]);
}

function isKnownPzn(pzn: Pzn): boolean {
  return pzn.length === 8 && pzn !== '00000000';
}

const STEMS = [
  'Dolo',
  'Ibu',
  'Para',
  'Cardi',
  'Gastro',
  'Derma',
  'Pulmo',
  'Neuro',
  'Hepa',
  'Osteo',
  'Rheu',
  'Vita',
];
const ENDINGS = ['rex', 'sal', 'fen', 'cor', 'min', 'vit', 'lan', 'tin', 'ton', 'mer'];
const FORMS = [
  'Tabletten',
  'Filmtabletten',
  'Brausetabletten',
  'Hartkapseln',
  'Tropfen zum Einnehmen',
  'Lösung',
  'Salbe',
  'Sirup für Kinder',
  'Nasenspray',
  'Dragées',
];
const STRENGTHS = ['5 mg', '10 mg', '20 mg', '50 mg', '100 mg', '200 mg', '400 mg', '500 mg', '1 g'];
const PACKS = ['N1', 'N2', 'N3'];

function pick<T>(list: readonly T[], h: number): T {
  return list[h % list.length]!;
}

export function articleName(pzn: Pzn): string {
  const h = hash32(pzn, 7);
  const name = `${pick(STEMS, h)}${pick(ENDINGS, h >>> 4)} ${pick(STRENGTHS, h >>> 8)} ${pick(FORMS, h >>> 12)} ${pick(PACKS, h >>> 16)}`;
  return name.slice(0, 50);
}

/** Batch (`Charge`) of the units delivered on `date`: stable per article and week. */
export function batchFor(pzn: Pzn, date: string): string {
  const week = Math.floor(Date.parse(`${date}T00:00:00Z`) / (7 * 86_400_000));
  return `CH${(hash32(`${pzn}/${week}`) % 1_000_000).toString().padStart(6, '0')}`;
}

/** Expiry (`Verfalldatum`): the last day of a month 12–47 months after `date`. */
export function expiryFor(pzn: Pzn, date: string): string {
  const months = 12 + (hash32(pzn, 3) % 36);
  const [year, month] = date.split('-').map(Number) as [number, number];
  // Day 0 of the month after the target month is the target month's last day.
  return new Date(Date.UTC(year, month - 1 + months + 1, 0)).toISOString().slice(0, 10);
}

function ordinary(pzn: Pzn): Article {
  const h = hash32(pzn);
  return {
    pzn,
    name: articleName(pzn),
    stock: 20 + (h % 480),
    networkStock: 100 + ((h >>> 9) % 400),
    backOrder: true,
    specialProcurement: false,
    shortfallReason: 'FehltZurzeit',
    tourDeviation: false,
  };
}

function unknown(pzn: Pzn): Article {
  return {
    pzn,
    name: 'Unbekannter Artikel',
    stock: 0,
    networkStock: 0,
    backOrder: false,
    specialProcurement: false,
    shortfallReason: 'ArtikelNrUnbekannt',
    tourDeviation: false,
  };
}

const NOTHING = { stock: 0, networkStock: 0, backOrder: false, specialProcurement: false };

/** Units for the next tour by wholesaler id for the per-wholesaler scenarios; 0 where not listed. */
const STOCK_BY_WHOLESALER: Partial<Record<ScenarioName, Readonly<Record<string, number>>>> = {
  ONLY_AT_ALLIANCE: { alliance: 500 },
  ONLY_AT_SANACORP: { sanacorp: 500 },
  SHORT_EVERYWHERE: { phoenix: 3, alliance: 4, sanacorp: 5 },
};

const SCENARIO_PROFILES: Partial<Record<ScenarioName, Partial<Article>>> = {
  NOT_DELIVERABLE: {
    ...NOTHING,
    shortfallReason: 'HerstellerNichtLieferbar',
    name: 'Nichtlieferbar Tabletten N2',
  },
  PARTIAL: { ...NOTHING, stock: 2, shortfallReason: 'FehltZurzeit', name: 'Knappix Filmtabletten N1' },
  BACK_ORDER: { ...NOTHING, backOrder: true, name: 'Nachliefero Kapseln N2' },
  SUBSTITUTION: {
    ...NOTHING,
    shortfallReason: 'AusserHandel',
    successor: SUBSTITUTE_PZN,
    name: 'Altpräparat Dragées N2',
  },
  TOUR_DEVIATION: { stock: 500, tourDeviation: true, name: 'Kühlin Injektionslösung (2–8 °C) N1' },
  NETWORK: { ...NOTHING, networkStock: 10_000, backOrder: true, name: 'Verbundin Salbe N2' },
  SPLIT_DELIVERY: { stock: 10_000, name: 'Zweiteilin Kapseln N3' },
  ONLY_AT_ALLIANCE: { name: 'Allianzol Tabletten N2' },
  ONLY_AT_SANACORP: { name: 'Sanacorin Tropfen N1' },
  SHORT_EVERYWHERE: { name: 'Knappomed Kapseln N2' },
  DISPO: {
    ...NOTHING,
    specialProcurement: true,
    shortfallReason: 'NichtGefuehrt',
    name: 'Sonderbeschaffix Tropfen N1',
  },
};

/**
 * The article as the wholesaler the sandbox plays (`wholesaler`, '' for none) holds it: the
 * per-wholesaler scenarios differ by it, every other article is the same everywhere.
 */
export function articleFor(pzn: Pzn, wholesaler = ''): Article {
  if (!isKnownPzn(pzn)) return unknown(pzn);
  const scenario = scenarioOf(pzn);
  const profile = scenario === undefined ? undefined : SCENARIO_PROFILES[scenario];
  const base = ordinary(pzn);
  if (pzn === SUBSTITUTE_PZN) return { ...base, stock: 5_000, name: 'Neupräparat Dragées N2' };
  const stockHere = scenario === undefined ? undefined : STOCK_BY_WHOLESALER[scenario];
  if (stockHere !== undefined) return { ...base, ...NOTHING, ...profile, stock: stockHere[wholesaler] ?? 0 };
  return profile === undefined ? base : { ...base, ...profile };
}

/** Whether the bulk check (`verfuegbarkeitAnfragenBulk`) reports the PZN: units for the next tour exist. */
export function inStock(pzn: Pzn, wholesaler = ''): boolean {
  return articleFor(pzn, wholesaler).stock > 0;
}
