/**
 * Codec benchmark (research/perf-baselines.md §1–2): our typed decode/encode of the 50-article
 * availability answer and the 500-position order answer against a generic fast-xml-parser 5.12.1
 * parse and node-soap 1.13.0's WSDL-typed `xmlToObject` of the same bytes. All cases run in one process,
 * interleaved run by run, after a warm-up; each figure is the median of 3 runs (µs per operation).
 * `ours decodeResponse` takes the fast path for answers in plain form (xml/plain.ts), which both
 * generated answers are; `ours general path` is the same decoder without it (parseXml + readResponse),
 * as every answer that is not in plain form is decoded.
 *
 * Run with `npm run bench:codec` (compiles with tsc first: tsx's module wrappers would distort the
 * figures). Writes bench/results/codec.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import soap from 'soap';
import { bestellen, bestellenCodec } from '../../src/msv3/operations/bestellen.js';
import { defineOperation } from '../../src/msv3/operations/operation.js';
import {
  verfuegbarkeitAnfragen,
  verfuegbarkeitAnfragenCodec,
} from '../../src/msv3/operations/verfuegbarkeit-anfragen.js';
import type { DecodeResult } from '../../src/msv3/result.js';
import { validateEnvelopes, XSD_DIR, xsdUnavailableReason } from '../../src/msv3/test-support/xsd.js';
import { be500Request, be500Response, va50Request, va50Response } from './envelopes.js';

const RESULTS = join(process.cwd(), 'bench', 'results', 'codec.json');

interface Case {
  name: string;
  iterations: number;
  run: () => unknown;
}

function okValue<T>(result: DecodeResult<T>, what: string): T {
  if (result.kind !== 'ok') throw new Error(`${what} did not decode: ${JSON.stringify(result)}`);
  return result.value;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function validate(envelopes: Record<string, string>): Promise<string> {
  if (xsdUnavailableReason !== null) {
    console.warn(`[bench] XSD validation SKIPPED: ${xsdUnavailableReason}`);
    return `skipped: ${xsdUnavailableReason}`;
  }
  // extractPayload expects the payload right after <env:Body>; the pretty-printed files indent it.
  const compactBody = (xml: string) =>
    xml.replace(/<env:Body>\s+/, '<env:Body>').replace(/\s+<\/env:Body>/, '</env:Body>');
  const names = Object.keys(envelopes);
  const results = await validateEnvelopes(
    2,
    names.map((n) => compactBody(envelopes[n]!)),
  );
  const failed = names.filter((_, i) => !results[i]!.valid);
  if (failed.length > 0) {
    throw new Error(
      `generated envelopes fail the XSD: ${failed.join(', ')}\n${results.map((r) => r.errors).join('\n')}`,
    );
  }
  return `all ${names.length} valid (xmllint, ${join(XSD_DIR, 'v2')})`;
}

async function main(): Promise<void> {
  // Decoded from bytes like a transport's body (the generators' concatenations would be rope strings).
  const asReceived = (s: string) => Buffer.from(s, 'utf8').toString('utf8');
  const xml = {
    va50Request: asReceived(va50Request()),
    va50Response: asReceived(va50Response()),
    be500Request: asReceived(be500Request()),
    be500Response: asReceived(be500Response()),
  };
  const validation = await validate(xml);

  // Models for the encoders come from our own request decoder; the answers are checked for content.
  const va50Model = okValue(verfuegbarkeitAnfragen.decodeRequest(xml.va50Request), 'va50 request').request;
  const be500Model = okValue(bestellen.decodeRequest(xml.be500Request), 'be500 request').request;
  const va50Answer = okValue(verfuegbarkeitAnfragen.decodeResponse(xml.va50Response), 'va50 response');
  const be500Answer = okValue(bestellen.decodeResponse(xml.be500Response), 'be500 response');
  const va50Parts = va50Answer.articles.flatMap((a) => a.parts);
  const be500Parts = be500Answer.subOrders[0]!.positions.flatMap((p) => p.parts);
  const content = {
    va50: {
      articles: va50Answer.articles.length,
      parts: va50Parts.length,
      nil:
        va50Parts.filter((p) => p.deliveryTime === null).length +
        va50Parts.filter((p) => p.quantity === null).length,
      substitutions: va50Answer.articles.filter((a) => a.substitution !== undefined).length,
    },
    be500: {
      positions: be500Answer.subOrders[0]!.positions.length,
      parts: be500Parts.length,
      nil: be500Parts.filter((p) => p.deliveryTime === null).length,
      substitutions: be500Answer.subOrders[0]!.positions.filter((p) => p.substitution !== undefined).length,
    },
  };

  // The same decoders without their fast path for plain answers (parseXml + readResponse), which
  // every answer that is not in plain form (comments, references, other declarations …) takes.
  const vaGeneral = defineOperation({ ...verfuegbarkeitAnfragenCodec, readResponsePlain: undefined });
  const beGeneral = defineOperation({ ...bestellenCodec, readResponsePlain: undefined });
  if (
    JSON.stringify(okValue(vaGeneral.decodeResponse(xml.va50Response), 'va50 general')) !==
      JSON.stringify(va50Answer) ||
    JSON.stringify(okValue(beGeneral.decodeResponse(xml.be500Response), 'be500 general')) !==
      JSON.stringify(be500Answer)
  ) {
    throw new Error('the general path and the fast path decode differently');
  }

  const fxp = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, parseTagValue: false });
  const wsdl = join(XSD_DIR, 'v2');
  const soapVa = await soap.createClientAsync(join(wsdl, 'Msv3VerfuegbarkeitAnfragenService.wsdl'));
  const soapBe = await soap.createClientAsync(join(wsdl, 'Msv3BestellenService.wsdl'));

  // Decoded as the gateway decodes by default (MSV3_TOLERATE_DEVIATIONS); the last case is the
  // answer with node-soap's two tolerated deviations (docs/msv3.md "Tolerated deviations").
  const tolerant = { tolerate: true };
  const va50Deviating = xml.va50Response
    .replace(/<m:verfuegbarkeitAnfragenResponse>/, '<verfuegbarkeitAnfragenResponse xmlns="urn:msv3:v2">')
    .replace('</m:verfuegbarkeitAnfragenResponse>', '</verfuegbarkeitAnfragenResponse>')
    .replace(' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"', '');
  const deviating = verfuegbarkeitAnfragen.decodeResponse(va50Deviating, undefined, tolerant);
  if (
    deviating.kind !== 'ok' ||
    JSON.stringify(deviating.value) !== JSON.stringify(va50Answer) ||
    JSON.stringify(deviating.deviations) !== '["qualified_return","undeclared_xsi_prefix"]'
  ) {
    throw new Error(
      `the deviating answer is not read as the plain one: ${JSON.stringify(deviating).slice(0, 300)}`,
    );
  }

  const VA = 10_000;
  const BE = 1_000;
  const cases: Case[] = [
    {
      name: 'ours decodeResponse va50',
      iterations: VA,
      run: () => verfuegbarkeitAnfragen.decodeResponse(xml.va50Response, undefined, tolerant),
    },
    {
      name: 'ours general path va50',
      iterations: VA / 2,
      run: () => vaGeneral.decodeResponse(xml.va50Response, undefined, tolerant),
    },
    { name: 'fast-xml-parser parse va50', iterations: VA / 5, run: () => fxp.parse(xml.va50Response) },
    {
      name: 'node-soap xmlToObject va50',
      iterations: VA / 5,
      run: () => soapVa.wsdl.xmlToObject(xml.va50Response),
    },
    {
      name: 'ours decodeResponse be500',
      iterations: BE,
      run: () => bestellen.decodeResponse(xml.be500Response, undefined, tolerant),
    },
    {
      name: 'ours general path be500',
      iterations: BE / 2,
      run: () => beGeneral.decodeResponse(xml.be500Response, undefined, tolerant),
    },
    { name: 'fast-xml-parser parse be500', iterations: BE / 5, run: () => fxp.parse(xml.be500Response) },
    {
      name: 'node-soap xmlToObject be500',
      iterations: BE / 10,
      run: () => soapBe.wsdl.xmlToObject(xml.be500Response),
    },
    {
      name: 'ours encodeRequest va50',
      iterations: VA,
      run: () => verfuegbarkeitAnfragen.encodeRequest(2, va50Model),
    },
    { name: 'ours encodeRequest be500', iterations: BE, run: () => bestellen.encodeRequest(2, be500Model) },
    {
      name: 'ours tolerated deviations va50',
      iterations: VA / 5,
      run: () => verfuegbarkeitAnfragen.decodeResponse(va50Deviating, undefined, tolerant),
    },
  ];

  let sink = 0;
  // Each timed case starts on a clean heap, so no case pays for another's garbage (needs --expose-gc).
  const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const time = (c: Case, iterations: number): number => {
    collect();
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) sink += c.run() === undefined ? 0 : 1;
    return Number(process.hrtime.bigint() - start) / 1000 / iterations;
  };
  for (const c of cases) time(c, Math.max(20, Math.floor(c.iterations / 5)));
  const runs = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let r = 0; r < 3; r++) for (const c of cases) runs.get(c.name)!.push(time(c, c.iterations));

  const medians = Object.fromEntries(cases.map((c) => [c.name, median(runs.get(c.name)!)]));
  const m = (name: string) => medians[name]!;
  const ratios = {
    'fast-xml-parser ÷ ours, va50': m('fast-xml-parser parse va50') / m('ours decodeResponse va50'),
    'node-soap ÷ ours, va50': m('node-soap xmlToObject va50') / m('ours decodeResponse va50'),
    'fast-xml-parser ÷ ours, be500': m('fast-xml-parser parse be500') / m('ours decodeResponse be500'),
    'node-soap ÷ ours, be500': m('node-soap xmlToObject be500') / m('ours decodeResponse be500'),
  };
  const targets = {
    'decode va50 < 100 µs': m('ours decodeResponse va50') < 100,
    'fast-xml-parser ÷ ours ≥ 5 (both)':
      ratios['fast-xml-parser ÷ ours, va50'] >= 5 && ratios['fast-xml-parser ÷ ours, be500'] >= 5,
    'node-soap ÷ ours ≥ 10 (both)':
      ratios['node-soap ÷ ours, va50'] >= 10 && ratios['node-soap ÷ ours, be500'] >= 10,
  };

  console.log(
    `\nMSV3 codec benchmark — node ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}`,
  );
  console.log(`XSD: ${validation}`);
  console.log(
    `sizes: va50 request ${xml.va50Request.length} B, response ${xml.va50Response.length} B; be500 request ${xml.be500Request.length} B, response ${xml.be500Response.length} B`,
  );
  console.log(`content: ${JSON.stringify(content)}\n`);
  console.log(`${'case'.padEnd(32)} ${'median µs/op'.padStart(13)}   runs`);
  for (const c of cases) {
    const rs = runs
      .get(c.name)!
      .map((v) => v.toFixed(1))
      .join(' / ');
    console.log(`${c.name.padEnd(32)} ${m(c.name).toFixed(1).padStart(13)}   ${rs}`);
  }
  console.log('');
  for (const [k, v] of Object.entries(ratios)) console.log(`${k.padEnd(32)} ${v.toFixed(1).padStart(12)}×`);
  for (const [k, v] of Object.entries(targets)) console.log(`target ${k}: ${v ? 'met' : 'NOT met'}`);

  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cpu: `${cpus().length}× ${cpus()[0]?.model ?? 'unknown'}`,
        method:
          'one process, cases interleaved run by run, full GC before each timed case, warm-up = iterations/5, median of 3 runs, µs per op',
        xsd: validation,
        bytes: Object.fromEntries(Object.entries(xml).map(([k, v]) => [k, v.length])),
        content,
        runs: Object.fromEntries(runs),
        medians,
        ratios,
        targets,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwrote ${RESULTS} (sink ${sink > 0 ? 'ok' : 'empty'})`);
}

await main();
