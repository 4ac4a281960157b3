import { describe, expect, it } from 'vitest';
import { customWholesalerId, slugOf } from './custom.js';

describe('custom wholesaler ids', () => {
  it('slugs the name: lower case, umlauts spelt out, accents dropped, at most 24 characters', () => {
    expect(slugOf('Hausapotheke Nord')).toBe('hausapotheke-nord');
    expect(slugOf('Großhandel Müller & Söhne')).toBe('grosshandel-mueller-soeh');
    expect(slugOf('  Café Crème  ')).toBe('cafe-creme');
    expect(slugOf('---')).toBe('wholesaler');
    expect(slugOf('Ωμέγα')).toBe('wholesaler');
  });

  it('is stable for account, mode and endpoint, and differs when any of them differs', () => {
    const live = { accountId: 'acct_1', mode: 'live' as const };
    const id = customWholesalerId(live, 'Nord', 'https://h.example/msv3/v2.0');
    expect(id).toMatch(/^custom-nord-[0-9a-f]{6}$/);
    expect(customWholesalerId(live, 'Nord', 'https://h.example/msv3/v2.0')).toBe(id);
    expect(customWholesalerId({ ...live, mode: 'test' }, 'Nord', 'https://h.example/msv3/v2.0')).not.toBe(id);
    expect(
      customWholesalerId({ ...live, accountId: 'acct_2' }, 'Nord', 'https://h.example/msv3/v2.0'),
    ).not.toBe(id);
    expect(customWholesalerId(live, 'Nord', 'https://h.example/msv3/v1.0')).not.toBe(id);
  });
});
