import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listSettings } from '../src/config.js';
import { errorCatalogueTable } from '../src/http/error-catalogue-doc.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('opens with the two commands for a fresh machine', () => {
    const firstBlock = readme.slice(
      readme.indexOf('```sh'),
      readme.indexOf('```', readme.indexOf('```sh') + 5),
    );
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm test');
  });

  it('documents every configuration variable with its default', () => {
    for (const { env, schema } of listSettings()) {
      const shown = schema.default === undefined ? '(unset)' : `\`${String(schema.default)}\``;
      expect(readme).toContain(`| \`${env}\` | ${shown} |`);
    }
  });

  it('lists exactly the error catalogue', () => {
    expect(readme).toContain(errorCatalogueTable());
  });
});
