import { describe, expect, it } from 'vitest';
import { toLocalDateTime } from './local-date-time.js';

describe('toLocalDateTime', () => {
  it('keeps German wall-clock time and the offset the wholesaler wrote', () => {
    expect(toLocalDateTime('2025-03-18T14:30:00+01:00')).toEqual({
      local: '2025-03-18T14:30:00',
      offset: '+01:00',
    });
    expect(toLocalDateTime('2025-07-01T09:15:00+02:00')).toEqual({
      local: '2025-07-01T09:15:00',
      offset: '+02:00',
    });
  });

  it('converts other offsets to Europe/Berlin, across midnight and daylight saving time', () => {
    expect(toLocalDateTime('2025-03-18T13:30:00Z')).toEqual({ local: '2025-03-18T14:30:00', offset: 'Z' });
    expect(toLocalDateTime('2025-07-01T23:30:00Z').local).toBe('2025-07-02T01:30:00');
    expect(toLocalDateTime('2025-03-18T14:30:00+02:00').local).toBe('2025-03-18T13:30:00');
  });

  it('takes a time without offset as local and drops fractions of a second', () => {
    expect(toLocalDateTime('2025-03-18T14:30:00')).toEqual({ local: '2025-03-18T14:30:00', offset: null });
    expect(toLocalDateTime('2025-03-18T14:30:00.987+01:00').local).toBe('2025-03-18T14:30:00');
  });
});
