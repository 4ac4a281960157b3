import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/ARCHITECTURE.md stays true: its request diagram names files that exist and import one another in
 * that order; its layer list is the one dependency-cruiser enforces; its owners exist where it says.
 */

const root = new URL('..', import.meta.url).pathname;
const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8');

function block(kind: string): string[] {
  const start = doc.indexOf(`\`\`\`${kind}\n`);
  expect(start, `a \`\`\`${kind} block in docs/ARCHITECTURE.md`).toBeGreaterThanOrEqual(0);
  const body = doc.slice(start + kind.length + 4, doc.indexOf('```', start + kind.length + 4));
  return body.split('\n').filter((line) => line.trim() !== '');
}

/** The project files a module imports (relative specifiers, `.js` → `.ts`), type-only imports included. */
function importsOf(file: string): Set<string> {
  const source = readFileSync(join(root, file), 'utf8');
  const found = new Set<string>();
  for (const match of source.matchAll(/from\s+'(\.{1,2}\/[^']+)'/g)) {
    found.add(normalize(join(dirname(file), match[1]!)).replace(/\.js$/, '.ts'));
  }
  return found;
}

interface Rule {
  name: string;
  from: { path?: string };
}

const rules = (createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as { forbidden: Rule[] })
  .forbidden;

describe('docs/ARCHITECTURE.md', () => {
  it('draws one request through files that exist, each importing the next', () => {
    const files = block('flow').map((line) => line.split(/\s+/)[0]!);
    expect(files.length).toBeGreaterThanOrEqual(4);
    for (const file of files) expect(existsSync(join(root, file)), file).toBe(true);
    for (let i = 0; i + 1 < files.length; i++) {
      expect([...importsOf(files[i]!)], `${files[i]} imports ${files[i + 1]}`).toContain(files[i + 1]);
    }
  });

  it('lists the layers in the order dependency-cruiser enforces, with the folders its rules name', () => {
    const listed = block('layers').map((line) => {
      const [name, ...folders] = line.trim().split(/\s+/);
      return { name: name!, folders: folders.filter((f) => f !== '>') };
    });
    const enforced = rules
      .map((rule) => /^(.+)-imports-only-below$/.exec(rule.name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => m[1]!);
    // The rules go from the bottom layer up; the doc from the top down, with `top` above them all.
    expect(listed.map((l) => l.name)).toEqual(['top', ...[...enforced].reverse()]);
    for (const layer of listed.filter((l) => l.name !== 'top')) {
      const pattern = new RegExp(
        rules.find((r) => r.name === `${layer.name}-imports-only-below`)!.from.path!,
      );
      for (const folder of layer.folders)
        expect(pattern.test(`src/${folder}`), `${layer.name}: ${folder}`).toBe(true);
    }
  });

  it('orders the features as their rules do', () => {
    const features = block('layers')
      .find((line) => line.startsWith('features'))!
      .split(/\s+/)
      .slice(1)
      .filter((f) => f !== '>')
      .map((f) => f.replace(/\/$/, ''));
    const ruled = rules.map((r) => /^features-order-(.+)$/.exec(r.name)?.[1]).filter((f) => f !== undefined);
    expect(features).toEqual(ruled);
  });

  it('names owners that exist where it says', () => {
    const section = doc.slice(doc.indexOf('## One owner for each decision'), doc.indexOf('## Conventions'));
    const rows = [...section.matchAll(/^\| [^|]+ \| (.+) \|$/gm)].map((m) => m[1]!).slice(1);
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const row of rows) {
      const quoted = [...row.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const file = quoted.find((q) => q.startsWith('src/'));
      const owner = quoted.find((q) => !q.startsWith('src/'));
      expect(file, row).toBeDefined();
      expect(existsSync(join(root, file!)), file).toBe(true);
      if (owner !== undefined && /^[a-z][A-Za-z]+$/.test(owner)) {
        expect(readFileSync(join(root, file!), 'utf8'), `${owner} in ${file}`).toMatch(
          new RegExp(`function ${owner}\\b`),
        );
      }
    }
  });
});
