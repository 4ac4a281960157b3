import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import {
  readTour,
  runTourWithFetch,
  type Started,
  startGatewayAsNpmStartDoes,
  type TourRun,
} from './readme-tour.js';

/**
 * A docs page's "## Walkthrough" run as printed against `npm start`: its commands are read out of the
 * page and sent as their exact HTTP requests (test/readme-tour.ts), so editing the page changes what
 * runs. Call inside a `describe`; the returned function gives the run once `beforeAll` has made it.
 */
export function walkthroughOf(docsPage: string): () => TourRun {
  const page = readFileSync(new URL(`../docs/${docsPage}`, import.meta.url), 'utf8');
  let started: Started | undefined;
  let run: TourRun | undefined;
  beforeAll(async () => {
    started = await startGatewayAsNpmStartDoes();
    run = await runTourWithFetch(readTour(page, '## Walkthrough'), started.server.url, started.key);
  }, 60_000);
  afterAll(async () => {
    await started?.server.close();
    if (started !== undefined) rmSync(started.folder, { recursive: true, force: true });
  });
  return () => {
    if (run === undefined) throw new Error(`the walkthrough of docs/${docsPage} did not run`);
    return run;
  };
}
