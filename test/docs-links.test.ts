import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The documentation links to itself a great deal (docs/performance.md alone is the target of links
 * from the CHANGELOG, most docs pages and bench/results/HISTORY.md), and a renamed heading or a moved
 * page breaks such a link without anything else noticing. Every relative link of every Markdown file
 * of the repository is checked here: the file it names exists, and where it names a heading of a
 * Markdown file (`page.md#anchor`, or `#anchor` within the page), a heading of that page makes that
 * anchor by GitHub's rules. Links to other sites (http, https, mailto) are not followed.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SKIPPED_FOLDERS = new Set(['node_modules', '.git', 'dist', '.scratch']);

/** The repository's Markdown files: tracked or new (not ignored), as git lists them; a walk without git. */
function markdownFiles(): string[] {
  const listed = spawnSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (listed.status === 0 && listed.stdout) {
    const files = listed.stdout.split('\0').filter((file) => file !== '' && existsSync(join(ROOT, file)));
    return [...new Set(files)].sort();
  }
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) walk(join(folder, entry.name));
      } else if (entry.name.endsWith('.md')) found.push(relative(ROOT, join(folder, entry.name)));
    }
  };
  walk(ROOT);
  return found.sort();
}

interface MarkdownLine {
  /** 1-based, as an editor shows it. */
  number: number;
  text: string;
}

/** The lines outside fenced code blocks (``` or ~~~, closed by a fence of the same kind at least as long). */
function proseLines(markdown: string): MarkdownLine[] {
  const lines: MarkdownLine[] = [];
  let fence: { char: string; length: number } | undefined;
  markdown.split(/\r?\n/).forEach((text, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(text);
    if (fence) {
      const closing = marker?.[1];
      if (closing?.[0] === fence.char && closing.length >= fence.length && text.trim() === closing)
        fence = undefined;
      return;
    }
    if (marker?.[1]) {
      fence = { char: marker[1][0] ?? '`', length: marker[1].length };
      return;
    }
    lines.push({ number: index + 1, text });
  });
  return lines;
}

/** Inline code spans blanked out (same length), so that a link shown as code is not taken for one. */
function withoutCodeSpans(text: string): string {
  return text.replace(/(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g, (span) => ' '.repeat(span.length));
}

/** A heading's text as GitHub renders it: link targets, emphasis markers, code backticks and HTML dropped. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*+/g, '')
    .replace(/(^|[^\p{L}\p{N}_])_+([^_]+?)_+(?=[^\p{L}\p{N}_]|$)/gu, '$1$2')
    .trim();
}

/**
 * The anchors a Markdown page offers: one per heading, made as GitHub makes them (lowercase; every
 * character but letters, digits, marks, spaces, hyphens and underscores removed; each space a hyphen;
 * a repeated anchor gets -1, -2, …), and any HTML `id` or `name` written into the page.
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const occurrences = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    for (const [, id] of text.matchAll(/<a\s[^>]*?(?:id|name)="([^"]+)"/g)) if (id) anchors.add(id);
    const heading = /^ {0,3}#{1,6}(?:[ \t]+(.*))?$/.exec(text);
    if (!heading) continue;
    const slug = headingText(heading[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}_ -]/gu, '')
      .replace(/ /g, '-');
    let anchor = slug;
    while (occurrences.has(anchor)) {
      const count = (occurrences.get(slug) ?? 0) + 1;
      occurrences.set(slug, count);
      anchor = `${slug}-${count}`;
    }
    occurrences.set(anchor, 0);
    anchors.add(anchor);
  }
  return anchors;
}

interface Link {
  file: string;
  line: number;
  /** As written between the parentheses. */
  target: string;
}

/** The inline links and images of a page, `[text](target)` and `[text](<target> "title")`. */
function linksOf(file: string, markdown: string): Link[] {
  const links: Link[] = [];
  const inline =
    /\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*(<[^>]*>|(?:[^()\s]|\([^()\s]*\))*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
  for (const { number, text } of proseLines(markdown)) {
    for (const match of withoutCodeSpans(text).matchAll(inline)) {
      const target = (match[1] ?? '').replace(/^<|>$/g, '');
      links.push({ file, line: number, target });
    }
  }
  return links;
}

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/** What is wrong with a relative link, or undefined when its file (and heading) exist. */
function problemOf(link: Link, anchorsByPage: (path: string) => Set<string>): string | undefined {
  const hash = link.target.indexOf('#');
  const pathPart = decodeURI(hash === -1 ? link.target : link.target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
  const path =
    pathPart === ''
      ? join(ROOT, link.file)
      : pathPart.startsWith('/')
        ? join(ROOT, pathPart)
        : resolve(ROOT, dirname(link.file), pathPart);
  const shown = relative(ROOT, path) || '.';
  if (!existsSync(path)) return `no file ${shown}`;
  if (anchor === undefined || anchor === '' || !path.endsWith('.md') || !statSync(path).isFile())
    return undefined;
  if (!anchorsByPage(path).has(anchor)) return `no heading in ${shown} makes the anchor #${anchor}`;
  return undefined;
}

describe('documentation links', () => {
  it('makes anchors from headings as GitHub does', () => {
    const page = [
      '# Performance',
      '## Instructions per request (`npm run bench:gateway -- --instructions`)',
      "### Node's own ticks",
      '## Targets: the gateway close to the pass-through',
      '## Fast paths, measured',
      '## Fast paths, measured',
      '### Über `FAST_PATH_DECODING` — 2.0× [the baseline](#performance) ##',
      '```md',
      '## Not a heading',
      '```',
    ].join('\n');
    expect([...anchorsOf(page)]).toEqual([
      'performance',
      'instructions-per-request-npm-run-benchgateway------instructions',
      'nodes-own-ticks',
      'targets-the-gateway-close-to-the-pass-through',
      'fast-paths-measured',
      'fast-paths-measured-1',
      'über-fast_path_decoding--20-the-baseline',
    ]);
  });

  it('every relative link in the Markdown files points to an existing file and heading', () => {
    const files = markdownFiles();
    expect(files).toContain('README.md');
    const anchorCache = new Map<string, Set<string>>();
    const anchorsByPage = (path: string) => {
      let anchors = anchorCache.get(path);
      if (!anchors) {
        anchors = anchorsOf(readFileSync(path, 'utf8'));
        anchorCache.set(path, anchors);
      }
      return anchors;
    };
    const problems: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const link of linksOf(file, readFileSync(join(ROOT, file), 'utf8'))) {
        if (link.target === '' || EXTERNAL.test(link.target)) continue;
        checked++;
        const problem = problemOf(link, anchorsByPage);
        if (problem) problems.push(`${link.file}:${link.line}: (${link.target}): ${problem}`);
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(problems, `broken links:\n${problems.join('\n')}`).toEqual([]);
  });
});
