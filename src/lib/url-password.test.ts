import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubPasswords, withoutPassword } from './url-password.js';

describe('connection URLs without their password', () => {
  it('keeps user, host, port and database, and drops the password', () => {
    expect(withoutPassword('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(withoutPassword('redis://:secret@127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(withoutPassword('postgres://msv3:p%40ss%3Aw%2Frd@db.internal:5432/msv3')).toBe(
      'postgres://msv3@db.internal:5432/msv3',
    );
    expect(withoutPassword('postgresql://msv3@db/msv3?sslmode=require&password=secret')).toBe(
      'postgresql://msv3@db/msv3?sslmode=require',
    );
    expect(withoutPassword('not a url')).toBe('(not a URL)');
  });

  it('scrubs the password from a message, as written and decoded', () => {
    const url = 'postgres://msv3:p%40ss%3Aw%2Frd@db/msv3?sslpassword=key-pass';
    expect(scrubPasswords('p@ss:w/rd, p%40ss%3Aw%2Frd and key-pass', url)).toBe('***, *** and ***');
  });

  it('never shows a password, whatever its characters', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 6, maxLength: 30 }), (password) => {
        const url = `postgres://msv3:${encodeURIComponent(password)}@db.internal:5432/msv3`;
        expect(withoutPassword(url)).toBe('postgres://msv3@db.internal:5432/msv3');
        expect(scrubPasswords(`failed for ${password}`, url)).not.toContain(password);
      }),
    );
  });
});
