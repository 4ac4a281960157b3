import { describe, expect, it } from 'vitest';
import { walkthroughOf } from './docs-walkthrough.js';

/** docs/multi-wholesaler.md's walkthrough works as printed against `npm start` (test/docs-walkthrough.ts). */

describe('docs/multi-wholesaler.md "Walkthrough"', () => {
  const run = walkthroughOf('multi-wholesaler.md');

  const compares = () => run().exchanges.filter((e) => e.request.method === 'POST');

  it('asks four wholesalers at once and reports the one that is down', () => {
    const first = compares()[0]!;
    expect(first.status).toBe(200);
    const body = first.json as {
      wholesalers: { wholesaler: string; status: string; error: { kind: string } | null }[];
    };
    expect(body.wholesalers.map((w) => [w.wholesaler, w.status, w.error?.kind ?? null])).toEqual([
      ['phoenix', 'ok', null],
      ['alliance', 'ok', null],
      ['sanacorp', 'ok', null],
      ['noweda', 'error', 'wholesaler_fault'],
    ]);
  });

  it('recommends where the goods are, in words', () => {
    const second = compares()[1]!;
    expect(second.status).toBe(200);
    const items = (
      second.json as {
        items: { pzn: string; recommendation: { wholesaler: string; units: number; reason: string } }[];
      }
    ).items;
    expect(items.map((i) => [i.pzn, i.recommendation.wholesaler, i.recommendation.units])).toEqual([
      ['09990300', 'alliance', 10],
      ['09990323', 'sanacorp', 5],
      ['04114918', 'phoenix', 2],
    ]);
    expect(items[0]!.recommendation.reason).toMatch(/^phoenix cannot deliver it; alliance delivers all 10/);
  });

  it('refuses a request without a login for every wholesaler, naming it, not the password', () => {
    const refused = compares()[2]!;
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      error: 'wholesaler_credentials_missing',
      wholesaler: 'alliance',
      param: 'X-MSV3-Credentials',
    });
    expect(JSON.stringify(refused.json)).not.toContain('geheim');
  });
});
