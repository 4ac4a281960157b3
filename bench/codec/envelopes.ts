/**
 * Deterministic, realistic benchmark envelopes (research/perf-baselines.md §1), written by hand in the
 * style of the shared samples (prefixes `env:` and `m:`, 2-space indentation, unqualified wrapper
 * children). They are deliberately not produced by our encoders, so the decoders are measured on
 * independently written XML.
 */

const ENV_OPEN = (withXsi: boolean) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:m="urn:msv3:v2"${
    withXsi ? '\n              xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"' : ''
  }>\n  <env:Body>\n`;
const ENV_CLOSE = '  </env:Body>\n</env:Envelope>\n';

function uuid(seed: number): string {
  const hex = (n: number, len: number) => (n >>> 0).toString(16).padStart(len, '0').slice(-len);
  const a = Math.imul(seed + 1, 2654435761);
  const b = Math.imul(seed + 7, 40503);
  return `${hex(a, 8)}-${hex(b, 4)}-4${hex(a >>> 4, 3)}-a${hex(b >>> 3, 3)}-${hex(a ^ b, 8)}${hex(seed, 4)}`;
}

/**
 * Wire PZN (no leading zeros) with a right check digit (docs/glossary.md "PZN"), so the gateway asks
 * the wholesaler for every article instead of answering "invalid PZN" for it; every fourth one has a
 * leading zero as an 8-digit string. Distinct for distinct `i` below 900,000.
 */
function pzn(i: number): string {
  let first7 = i % 4 === 0 ? 100_000 + ((i * 7_919) % 900_000) : 1_000_000 + ((i * 104_729) % 9_000_000);
  for (;;) {
    const digits = String(first7).padStart(7, '0');
    let sum = 0;
    for (let d = 0; d < 7; d++) sum += Number(digits[d]) * (d + 1);
    // A remainder of 10 is no check digit: no PZN starts with these seven digits.
    if (sum % 11 !== 10) return String(Number(`${digits}${sum % 11}`));
    first7 += 1;
  }
}

const TOURS = ['Mittagstour', 'Abendtour 18 Uhr', 'Fruehtour', 'Nachmittagstour 2'];
const time = (i: number) =>
  `2025-03-${String(18 + (i % 3)).padStart(2, '0')}T${String(8 + (i % 10)).padStart(2, '0')}:30:00+01:00`;

interface Part {
  menge: number | null;
  typ: string;
  zeit: string | null;
  tour?: string;
  grund: string;
  tourId?: string;
  abweichung: boolean;
}

function part(p: Part, indent: string, withTourId: boolean): string {
  const i2 = `${indent}  `;
  let s = `${indent}<m:Anteile>\n`;
  s += p.menge === null ? `${i2}<m:Menge xsi:nil="true"/>\n` : `${i2}<m:Menge>${p.menge}</m:Menge>\n`;
  s += `${i2}<m:Typ>${p.typ}</m:Typ>\n`;
  s +=
    p.zeit === null
      ? `${i2}<m:Lieferzeitpunkt xsi:nil="true"/>\n`
      : `${i2}<m:Lieferzeitpunkt>${p.zeit}</m:Lieferzeitpunkt>\n`;
  if (p.tour !== undefined) s += `${i2}<m:Tour>${p.tour}</m:Tour>\n`;
  s += `${i2}<m:Grund>${p.grund}</m:Grund>\n`;
  if (withTourId && p.tourId !== undefined) s += `${i2}<m:TourId>${p.tourId}</m:TourId>\n`;
  s += `${i2}<m:Tourabweichung>${p.abweichung}</m:Tourabweichung>\n`;
  return `${s}${indent}</m:Anteile>\n`;
}

const BEDARF = ['direkt', 'unspezifisch', 'einsAusN'];

const VA50_ID = uuid(50);
const BE500_ID = uuid(500);

/** The 50 articles of `va50Request` / `va50Response`: wire PZN, quantity and `@Bedarf` (for JSON twins). */
export function va50Articles(): { pzn: string; quantity: number; bedarf: string }[] {
  return Array.from({ length: 50 }, (_, i) => ({
    pzn: pzn(i),
    quantity: 1 + ((i * 7) % 30),
    bedarf: BEDARF[i % 3]!,
  }));
}

/** `verfuegbarkeitAnfragen`, 50 articles, Bedarf rotating. */
export function va50Request(): string {
  let s = `${ENV_OPEN(false)}    <m:verfuegbarkeitAnfragen>\n      <clientSoftwareKennung>ExampleWawi 1.4.2</clientSoftwareKennung>\n`;
  s += `      <verfuegbarkeitsanfrage Id="${VA50_ID}">\n`;
  for (let i = 0; i < 50; i++) {
    s += `        <m:Artikel Bedarf="${BEDARF[i % 3]}">\n          <m:Pzn>${pzn(i)}</m:Pzn>\n          <m:Menge>${1 + ((i * 7) % 30)}</m:Menge>\n        </m:Artikel>\n`;
  }
  return `${s}      </verfuegbarkeitsanfrage>\n    </m:verfuegbarkeitAnfragen>\n${ENV_CLOSE}`;
}

/**
 * The 50-article answer: 10 articles each of (1) Normal with Tour, (2) Normal + Nachlieferung with nil
 * Lieferzeitpunkt, (3) Substitution + Normal, (4) Verbund (some Tourabweichung) + Dispo/Teildefekt with nil
 * Lieferzeitpunkt, (5) NichtLieferbar/HerstellerNichtLieferbar with nil Lieferzeitpunkt: 70 parts, 30 nil.
 */
export function va50Response(): string {
  let s = `${ENV_OPEN(true)}    <m:verfuegbarkeitAnfragenResponse>\n      <return Id="${VA50_ID}" RTyp="Spezifisch">\n`;
  const ind = '          ';
  for (let i = 0; i < 50; i++) {
    const menge = 1 + ((i * 7) % 30);
    const kind = i % 5;
    s += `        <m:Artikel>\n${ind}<m:AnfrageMenge>${menge}</m:AnfrageMenge>\n${ind}<m:AnfragePzn>${pzn(i)}</m:AnfragePzn>\n`;
    const normal = (m: number): Part => ({
      menge: m,
      typ: 'Normal',
      zeit: time(i),
      tour: TOURS[i % 4],
      grund: 'KeineAngabe',
      abweichung: false,
    });
    if (kind === 0) s += part(normal(menge), ind, false);
    else if (kind === 1) {
      const first = Math.ceil(menge / 2);
      s += part(normal(first), ind, false);
      if (menge - first > 0)
        s += part(
          {
            menge: menge - first,
            typ: 'Nachlieferung',
            zeit: null,
            grund: 'FehltZurzeit',
            abweichung: false,
          },
          ind,
          false,
        );
      else
        s += part(
          { menge: null, typ: 'Nachlieferung', zeit: null, grund: 'FehltZurzeit', abweichung: false },
          ind,
          false,
        );
    } else if (kind === 2) {
      s += `${ind}<m:Substitution>\n${ind}  <m:Substitutionsgrund>Nachfolgeprodukt</m:Substitutionsgrund>\n${ind}  <m:Grund>AusserHandel</m:Grund>\n${ind}  <m:LieferPzn>${pzn(i + 1000)}</m:LieferPzn>\n${ind}</m:Substitution>\n`;
      s += part(normal(menge), ind, false);
    } else if (kind === 3) {
      const first = Math.max(1, menge - 2);
      s += part(
        { menge: first, typ: 'Verbund', zeit: time(i + 1), grund: 'KeineAngabe', abweichung: i % 10 === 3 },
        ind,
        false,
      );
      s += part(
        {
          menge: menge - first > 0 ? menge - first : null,
          typ: 'Dispo',
          zeit: null,
          grund: 'Teildefekt',
          abweichung: false,
        },
        ind,
        false,
      );
    } else {
      s += part(
        {
          menge,
          typ: 'NichtLieferbar',
          zeit: null,
          grund: i % 2 === 0 ? 'HerstellerNichtLieferbar' : 'NichtGefuehrt',
          abweichung: false,
        },
        ind,
        false,
      );
    }
    s += '        </m:Artikel>\n';
  }
  return `${s}      </return>\n    </m:verfuegbarkeitAnfragenResponse>\n${ENV_CLOSE}`;
}

const LIEFERVORGABEN = ['Normal', 'MaxVerbund', 'MaxNachlieferung', 'MaxDispo'];
const SUB_ORDER_ID = uuid(501);

/** `bestellen`, one sub-order with 500 positions. */
export function be500Request(): string {
  let s = `${ENV_OPEN(false)}    <m:bestellen>\n      <clientSoftwareKennung>ExampleWawi 1.4.2</clientSoftwareKennung>\n`;
  s += `      <bestellung Id="${BE500_ID}" BestellSupportId="4711">\n`;
  s += `        <m:Auftraege Id="${SUB_ORDER_ID}" Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="4712">\n`;
  for (let i = 0; i < 500; i++) {
    s += `          <m:Positionen>\n            <m:Pzn>${pzn(i)}</m:Pzn>\n            <m:Menge>${2 + ((i * 13) % 40)}</m:Menge>\n            <m:Liefervorgabe>${LIEFERVORGABEN[i % 4]}</m:Liefervorgabe>\n          </m:Positionen>\n`;
  }
  return `${s}        </m:Auftraege>\n      </bestellung>\n    </m:bestellen>\n${ENV_CLOSE}`;
}

/**
 * The 500-position order answer: 125 positions each of (1) Normal with TourId, (2) Verbund, (3) Normal +
 * Nachlieferung (nil Lieferzeitpunkt), (4) Substitution + Normal + KeineLieferungAberDispoMoeglich (nil).
 */
export function be500Response(): string {
  let s = `${ENV_OPEN(true)}    <m:bestellenResponse>\n      <return Id="${BE500_ID}" BestellSupportId="4711" NachtBetrieb="false">\n`;
  s += `        <m:Auftraege Id="${SUB_ORDER_ID}" Auftragsart="NORMAL" Auftragskennung="K1" AuftragsSupportID="4712">\n`;
  const ind = '              ';
  for (let i = 0; i < 500; i++) {
    const menge = 2 + ((i * 13) % 40);
    const kind = i % 4;
    s += `          <m:Positionen>\n            <m:BestellPzn>${pzn(i)}</m:BestellPzn>\n            <m:BestellMenge>${menge}</m:BestellMenge>\n            <m:BestellLiefervorgabe>${LIEFERVORGABEN[i % 4]}</m:BestellLiefervorgabe>\n`;
    const normal = (m: number): Part => ({
      menge: m,
      typ: 'Normal',
      zeit: time(i),
      tour: TOURS[i % 4],
      grund: 'KeineAngabe',
      tourId: `T${10 + (i % 7)}`,
      abweichung: false,
    });
    const i2 = '            ';
    if (kind === 0) s += part(normal(menge), i2, true);
    else if (kind === 1)
      s += part(
        { menge, typ: 'Verbund', zeit: time(i + 1), grund: 'KeineAngabe', abweichung: i % 8 === 1 },
        i2,
        true,
      );
    else if (kind === 2) {
      s += part(normal(menge - 1), i2, true);
      s += part(
        { menge: 1, typ: 'Nachlieferung', zeit: null, grund: 'FehltZurzeit', abweichung: false },
        i2,
        true,
      );
    } else {
      s += `${i2}<m:Substitution>\n${ind}<m:Substitutionsgrund>ReUndParallelImport</m:Substitutionsgrund>\n${ind}<m:Grund>KeineAngabe</m:Grund>\n${ind}<m:LieferPzn>${pzn(i + 5000)}</m:LieferPzn>\n${i2}</m:Substitution>\n`;
      s += part(normal(menge - 1), i2, true);
      s += part(
        {
          menge: 1,
          typ: 'KeineLieferungAberDispoMoeglich',
          zeit: null,
          grund: 'FehltZurzeit',
          abweichung: false,
        },
        i2,
        true,
      );
    }
    s += '          </m:Positionen>\n';
  }
  return `${s}        </m:Auftraege>\n      </return>\n    </m:bestellenResponse>\n${ENV_CLOSE}`;
}
