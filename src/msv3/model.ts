/**
 * Types and conversions shared by several MSV3 operations. Operation-specific models live in
 * `operations/<operation>.ts` beside their codec.
 *
 * Conventions: field names are English camelCase; enum values are the MSV3 wire values verbatim
 * (`Normal`, `NachtBetrieb`, …) so nothing is lost in translation; PZNs are 8-digit strings.
 */

export type { Msv3Version } from './envelope.js';

/** An 8-digit PZN string, e.g. `04114918`. On the wire it is an xs:long without leading zeros. */
export type Pzn = string;

/** `4114918` → `04114918`. Wire values longer than 8 digits (EANs) are kept as they are. */
export function pznFromWire(value: string): Pzn {
  const digits = value.trim().replace(/^\+/, '');
  if (!/^[0-9]{1,18}$/.test(digits)) throw new RangeError(`'${value}' is not a PZN`);
  const stripped = digits.replace(/^0+(?=[0-9])/, '');
  return stripped.length >= 8 ? stripped : stripped.padStart(8, '0');
}

/** `04114918` → `4114918` (xs:long, no leading zeros). */
export function pznToWire(pzn: Pzn): string {
  if (!/^[0-9]{1,18}$/.test(pzn)) throw new RangeError(`'${pzn}' is not a PZN`);
  return pzn.replace(/^0+(?=[0-9])/, '');
}

/** Left-pads 1–8 user digits to the canonical 8-digit form. */
export function normalisePzn(input: string): Pzn {
  return input.padStart(8, '0');
}

/**
 * The check digit the first seven digits of an 8-digit PZN call for (docs/glossary.md "PZN"): each digit
 * weighted by its position (1 to 7), summed, modulo 11; null when that is 10, as no PZN is issued then.
 * An old 7-digit PZN keeps its check digit when padded with a leading zero (its weights were 2 to 7).
 */
export function pznCheckDigit(pzn: Pzn): number | null {
  // Char codes, not `Number(pzn[i])`: a Pzn is digits only, and this runs for every item of a request.
  // The seven weights written out rather than looped over (docs/performance.md "Smaller steps").
  const sum =
    pzn.charCodeAt(0) +
    pzn.charCodeAt(1) * 2 +
    pzn.charCodeAt(2) * 3 +
    pzn.charCodeAt(3) * 4 +
    pzn.charCodeAt(4) * 5 +
    pzn.charCodeAt(5) * 6 +
    pzn.charCodeAt(6) * 7 -
    48 * 28;
  const digit = sum % 11;
  return digit === 10 ? null : digit;
}

export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Quantity bounds per version (docs/msv3.md "Version differences"): v1 1..9999, v2 1..99999. */
export function maxQuantity(version: 1 | 2): number {
  return version === 1 ? 9_999 : 99_999;
}

export const AUFTRAGSARTEN = ['NORMAL', 'STAPEL', 'SONDER', 'VERSAND'] as const;
export type Auftragsart = (typeof AUFTRAGSARTEN)[number];

export const LIEFERVORGABEN = ['Normal', 'MaxVerbund', 'MaxNachlieferung', 'MaxDispo'] as const;
export type Liefervorgabe = (typeof LIEFERVORGABEN)[number];

export const SUBSTITUTIONSGRUENDE = ['Nachfolgeprodukt', 'ReUndParallelImport', 'Vorschlag'] as const;
export type Substitutionsgrund = (typeof SUBSTITUTIONSGRUENDE)[number];

/** Availability part types (VerfuegbarkeitRueckmeldungTyp). */
export const VERFUEGBARKEIT_TYPEN = [
  'Normal',
  'Verbund',
  'Nachlieferung',
  'Dispo',
  'NichtLieferbar',
] as const;
export type VerfuegbarkeitTyp = (typeof VERFUEGBARKEIT_TYPEN)[number];

/** Order part types (BestellungRueckmeldungTyp): the availability types plus four "not delivered, but …". */
export const BESTELLUNG_TYPEN = [
  ...VERFUEGBARKEIT_TYPEN,
  'KeineLieferungAberNormalMoeglich',
  'KeineLieferungAberVerbundMoeglich',
  'KeineLieferungAberNachlieferungMoeglich',
  'KeineLieferungAberDispoMoeglich',
] as const;
export type BestellungTyp = (typeof BESTELLUNG_TYPEN)[number];

/** Defect reasons per version; `Teildefekt` exists only in availability answers. */
const DEFEKTGRUENDE_V1 = [
  'KeineAngabe',
  'FehltZurzeit',
  'NichtLieferbar',
  'NurDirekt',
  'NichtGefuehrt',
  'ArtikelNrUnbekannt',
  'AusserHandel',
  'KeinBezug',
  'Teildefekt',
  'Transportausschluss',
] as const;
const DEFEKTGRUENDE_V2 = [
  'KeineAngabe',
  'FehltZurzeit',
  'HerstellerNichtLieferbar',
  'NurDirekt',
  'NichtGefuehrt',
  'ArtikelNrUnbekannt',
  'AusserHandel',
  'KeinBezug',
  'Transportausschluss',
  'Teildefekt',
] as const;
export type Defektgrund = (typeof DEFEKTGRUENDE_V1)[number] | (typeof DEFEKTGRUENDE_V2)[number];

export function defektgruende(version: 1 | 2, forOrders: boolean): readonly Defektgrund[] {
  const all: readonly Defektgrund[] = version === 1 ? DEFEKTGRUENDE_V1 : DEFEKTGRUENDE_V2;
  return forOrders ? all.filter((g) => g !== 'Teildefekt') : all;
}

/** The content of every MSV3 fault bean, also used in-band as `Auftragsfehler`. */
export interface Msv3FaultInfo {
  errorCode: string;
  userText: string;
  technicalText: string;
}
