import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every battery gateway gets a catalogue whose live and test servers are on loopback: the shipped one
 * names the wholesalers' real servers, which a live key would reach.
 */

export interface CatalogueEntry {
  id: string;
  version: 1 | 2;
  live?: string;
  test?: string;
}

export function writeLoopbackCatalogue(folder: string, entries: readonly CatalogueEntry[]): string {
  for (const entry of entries) {
    for (const url of [entry.live, entry.test]) {
      if (url !== undefined && !/^http:\/\/(127\.\d+\.\d+\.\d+|\[::1\]|localhost)(:\d+)?\//.test(url))
        throw new Error(`battery catalogue URL ${url} is not on loopback`);
    }
  }
  const file = join(folder, 'wholesalers.json');
  const server = (url: string | undefined) => (url === undefined ? {} : { baseUrl: url });
  writeFileSync(
    file,
    JSON.stringify({
      wholesalers: entries.map((e) => ({
        id: e.id,
        name: `Battery ${e.id}`,
        version: e.version,
        ...(e.live === undefined ? {} : { live: server(e.live) }),
        ...(e.test === undefined ? {} : { test: server(e.test) }),
      })),
    }),
  );
  return file;
}
