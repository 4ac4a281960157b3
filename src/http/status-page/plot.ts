/**
 * Small inline SVG plots for the status page: no script, no external asset, readable without colour
 * (each plot has a title and its largest value written beside it).
 */

const WIDTH = 240;
const HEIGHT = 48;

/** `values` oldest first; undefined where there is nothing to show (no calls that minute). */
export function linePlot(values: readonly (number | undefined)[], title: string, unit: string): string {
  const max = niceMax(Math.max(0, ...values.filter((v): v is number => v !== undefined)));
  const step = values.length > 1 ? WIDTH / (values.length - 1) : WIDTH;
  const segments: string[] = [];
  let current: string[] = [];
  values.forEach((value, i) => {
    if (value === undefined) {
      if (current.length > 0) segments.push(current.join(' '));
      current = [];
      return;
    }
    current.push(`${(i * step).toFixed(1)},${y(value, max).toFixed(1)}`);
  });
  if (current.length > 0) segments.push(current.join(' '));
  const lines = segments
    .map((points) =>
      points.includes(' ')
        ? `<polyline points="${points}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/>`
        : `<circle cx="${points.split(',')[0]}" cy="${points.split(',')[1]}" r="1.5" fill="#1f5fbf"/>`,
    )
    .join('');
  return frame(title, `${format(max)} ${unit}`, lines);
}

/** Bars from 0 to `max`; a zero value draws nothing, an undefined one a faint tick (no calls). */
export function barPlot(
  values: readonly (number | undefined)[],
  title: string,
  max: number,
  unit: string,
): string {
  const width = WIDTH / Math.max(1, values.length);
  const bars = values
    .map((value, i) => {
      const x = (i * width).toFixed(1);
      if (value === undefined) return '';
      if (value <= 0)
        return `<rect x="${x}" y="${HEIGHT - 1}" width="${(width - 0.5).toFixed(1)}" height="1" fill="#9bc59d"/>`;
      const top = y(value, max);
      return `<rect x="${x}" y="${top.toFixed(1)}" width="${(width - 0.5).toFixed(1)}" height="${(HEIGHT - top).toFixed(1)}" fill="#c0392b"/>`;
    })
    .join('');
  return frame(title, `${format(max)} ${unit}`, bars);
}

function frame(title: string, top: string, content: string): string {
  return (
    `<svg class="plot" role="img" viewBox="0 0 ${WIDTH + 60} ${HEIGHT}" width="${WIDTH + 60}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">` +
    `<title>${title}</title>` +
    `<rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#f6f7f9" stroke="#d5d9e0"/>` +
    content +
    `<text x="${WIDTH + 4}" y="10" font-size="10" fill="#555">${top}</text>` +
    `<text x="${WIDTH + 4}" y="${HEIGHT - 2}" font-size="10" fill="#555">0</text>` +
    '</svg>'
  );
}

function y(value: number, max: number): number {
  const top = 2;
  return HEIGHT - 1 - (Math.min(value, max) / (max || 1)) * (HEIGHT - 1 - top);
}

/** 1, 2 or 5 times a power of ten, at least `value` (1 for nothing). */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= value) return factor * power;
  return 10 * power;
}

function format(value: number): string {
  return value >= 1000 ? `${Math.round(value / 100) / 10}k` : String(Math.round(value * 10) / 10);
}
