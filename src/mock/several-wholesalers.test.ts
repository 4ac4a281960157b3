import { describe, expect, it } from 'vitest';
import { articleFor } from './catalogue.js';
import { wholesalerOfTenant } from './endpoint-path.js';
import { SCENARIO_PZNS, transportScenarioIn } from './scenarios.js';

describe('scenario articles that differ by wholesaler', () => {
  it('reads the wholesaler from the last segment of the tenant path', () => {
    expect(wholesalerOfTenant('sandbox/0123abcd/alliance')).toBe('alliance');
    expect(wholesalerOfTenant('')).toBe('');
  });

  it.each([
    [SCENARIO_PZNS.ONLY_AT_ALLIANCE.pzn, { phoenix: 0, alliance: 500, sanacorp: 0, noweda: 0 }],
    [SCENARIO_PZNS.ONLY_AT_SANACORP.pzn, { phoenix: 0, alliance: 0, sanacorp: 500, noweda: 0 }],
    [SCENARIO_PZNS.SHORT_EVERYWHERE.pzn, { phoenix: 3, alliance: 4, sanacorp: 5, noweda: 0 }],
  ])('%s holds the documented stock at each wholesaler, and nothing else', (pzn, stock) => {
    for (const [wholesaler, units] of Object.entries(stock)) {
      const article = articleFor(pzn, wholesaler);
      expect({ wholesaler, stock: article.stock }).toEqual({ wholesaler, stock: units });
      expect(article).toMatchObject({ networkStock: 0, backOrder: false, specialProcurement: false });
    }
  });

  it('makes noweda, and only noweda, fail for DOWN_AT_NOWEDA', () => {
    const pzns = [SCENARIO_PZNS.DOWN_AT_NOWEDA.pzn, '04114918'];
    expect(transportScenarioIn(pzns, 'noweda')).toBe('SERVER_FAULT');
    expect(transportScenarioIn(pzns, 'phoenix')).toBeUndefined();
    expect(articleFor(SCENARIO_PZNS.DOWN_AT_NOWEDA.pzn, 'phoenix').stock).toBeGreaterThan(0);
  });
});
