/**
 * One line of the battery's table: a check, its figures, and whether it held. `why` names the defect
 * when it did not (printed under the table).
 */
export interface Row {
  check: string;
  figures: string;
  pass: boolean;
  why?: string;
}

export function row(check: string, figures: string, pass: boolean, why?: string): Row {
  return why === undefined || pass ? { check, figures, pass } : { check, figures, pass, why };
}

/** A check that could not run at all (its set-up failed) fails with the reason. */
export function broken(check: string, error: unknown): Row {
  const message = error instanceof Error ? error.message : String(error);
  return { check, figures: 'did not run', pass: false, why: message.split('\n').slice(0, 3).join(' | ') };
}

/** A fixed-width text table; figures wrap at `width` characters. */
export function formatTable(rows: readonly Row[], width = 70): string {
  const checkWidth = Math.max(5, ...rows.map((r) => r.check.length));
  const lines = [`${'check'.padEnd(checkWidth)} | ${'figures'.padEnd(width)} | verdict`];
  lines.push(`${'-'.repeat(checkWidth)}-+-${'-'.repeat(width)}-+--------`);
  for (const r of rows) {
    const parts = wrap(r.figures, width);
    parts.forEach((part, i) => {
      const name = i === 0 ? r.check : '';
      const verdict = i === 0 ? (r.pass ? 'pass' : 'FAIL') : '';
      lines.push(`${name.padEnd(checkWidth)} | ${part.padEnd(width)} | ${verdict}`);
    });
  }
  return lines.join('\n');
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  out.push(line);
  return out;
}

/** Milliseconds as `1.2 s` or `340 ms`. */
export function duration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
