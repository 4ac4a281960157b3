import { execFileSync } from 'node:child_process';

/** Text extraction through poppler's `pdftotext`; `.ci/run` installs it, a user's machine may not have it. */
function findPdftotext(): boolean {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const HAVE_PDFTOTEXT = findPdftotext();
if (!HAVE_PDFTOTEXT) console.warn('PDF text checks are SKIPPED: pdftotext not found (install poppler-utils)');

/** The text of a PDF, or null when `pdftotext` is not installed (structural checks still run). */
export function pdfText(pdf: Buffer): string | null {
  if (!HAVE_PDFTOTEXT) return null;
  return execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8');
}
