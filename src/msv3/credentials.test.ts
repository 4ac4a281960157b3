import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { basicAuthorization, createCredentials } from './credentials.js';

describe('credentials', () => {
  it('builds the Basic header from UTF-8 bytes, keeping a backslash in the user name', () => {
    expect(basicAuthorization({ username: 'PLA\\apotheke1', password: 'Gehe!m-ß' })).toBe(
      'Basic UExBXGFwb3RoZWtlMTpHZWhlIW0tw58=',
    );
  });

  it('refuses a user name with a colon, without echoing it', () => {
    expect(() => basicAuthorization({ username: 'geheim:teil', password: 'x' })).toThrow(
      'MSV3 user name must not contain ":"',
    );
  });

  it('shows [redacted] wherever a wrapped login could be printed or serialised', () => {
    const credentials = createCredentials('PLA\\apotheke1', 'Gehe!m-ß');
    expect(credentials.username).toBe('PLA\\apotheke1');
    expect(credentials.password).toBe('Gehe!m-ß');
    const renderings = [
      JSON.stringify({ credentials }),
      inspect({ credentials }, { depth: null, showHidden: true }),
      String(credentials),
      `${credentials}`,
      JSON.stringify({ ...credentials }),
      Object.keys(credentials).join(),
    ];
    for (const rendering of renderings) {
      expect(rendering).not.toContain('Gehe!m');
      expect(rendering).not.toContain('apotheke1');
    }
    expect(JSON.stringify({ credentials })).toBe('{"credentials":"[redacted]"}');
    expect(inspect(credentials)).toBe('Credentials [redacted]');
  });
});
