import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../lib/clock.js';
import { vertragsdatenAbfragen } from '../msv3/operations/vertragsdaten-abfragen.js';
import { CLIENT_ID, type Sandbox, startSandbox } from './test-support/sandbox.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ clock: manualClock() });
});
afterAll(() => sandbox.close());

const contract = (options: { username?: string; version?: 1 | 2; manualQuery?: boolean } = {}) =>
  sandbox.ok(
    vertragsdatenAbfragen,
    {
      clientSoftwareId: CLIENT_ID,
      ...(options.version === 1 ? {} : { manualQuery: options.manualQuery ?? true }),
    },
    options,
  );

describe('vertragsdatenAbfragen', () => {
  it('v2: everything agreed except VERSAND, the tours as order windows, special days ahead', async () => {
    const c = await contract({ username: 'NL01\\apo4711' });
    expect(c.customerId).toBe('NL01\\apo4711');
    expect(c.automaticRetrieval).toBe(false);
    expect(c.validFrom).toBeUndefined();
    expect(c).toMatchObject({
      substitutionAgreed: true,
      specificAvailabilityAgreed: true,
      bulkAvailabilityAgreed: true,
      takeBackOffersAgreed: true,
      orderTypes: {
        NORMAL: { maxFreeOrderLabels: 5 },
        STAPEL: { agreed: true },
        SONDER: { agreed: true },
        VERSAND: { agreed: false, completeContainersOnly: false },
      },
    });
    expect(c.orderWindows).toHaveLength(16);
    expect(c.orderWindows.slice(0, 3)).toEqual([
      { day: 'Mo', cutoff: '08:30:00', mainOrderTime: { day: 'Mo', time: '08:00:00' } },
      { day: 'Mo', cutoff: '11:30:00', mainOrderTime: { day: 'Mo', time: '11:00:00' } },
      { day: 'Mo', cutoff: '16:00:00', mainOrderTime: { day: 'Mo', time: '15:30:00' } },
    ]);
    expect(c.orderWindows.filter((w) => w.day === 'Sa')).toHaveLength(1);
    expect(c.orderWindows.filter((w) => w.day === 'So')).toHaveLength(0);
    expect(c.specialDays).toEqual([
      { date: '2026-12-24', windows: [{ cutoff: '08:30:00', mainOrderTime: '08:00:00' }] },
      { date: '2026-12-25', windows: [] },
      { date: '2026-12-26', windows: [] },
      { date: '2026-12-31', windows: [{ cutoff: '08:30:00', mainOrderTime: '08:00:00' }] },
      { date: '2027-01-01', windows: [] },
    ]);
  });

  it('v2: AutomatischerAbruf echoes an automatic daily fetch (manuelleAbfrage=false)', async () => {
    expect((await contract({ manualQuery: false })).automaticRetrieval).toBe(true);
  });

  it('v1: GueltigAb instead of AutomatischerAbruf, no special days', async () => {
    const c = await contract({ version: 1 });
    expect(c.validFrom).toBe('2013-10-01');
    expect(c.automaticRetrieval).toBeUndefined();
    expect(c.specialDays).toEqual([]);
    expect(c.orderWindows).toHaveLength(16);
  });

  it('switches terms off by documented parts of the user name, case-insensitively', async () => {
    const c = await contract({ username: 'Apo9NoBulkNORETURNSnosubstUnspecificNormalOnly' });
    expect(c).toMatchObject({
      bulkAvailabilityAgreed: false,
      takeBackOffersAgreed: false,
      substitutionAgreed: false,
      specificAvailabilityAgreed: false,
      orderTypes: { STAPEL: { agreed: false }, SONDER: { agreed: false }, VERSAND: { agreed: false } },
    });
    expect((await contract({ username: 'apo9versand' })).orderTypes.VERSAND).toMatchObject({
      agreed: true,
      maxFreeOrderLabels: 1,
    });
  });
});
