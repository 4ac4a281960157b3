import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ObservedGateway, send, startObservedGateway } from './observed-gateway.js';
import { until } from './until.js';

/**
 * The operator status page as an operator meets it: Debian's chromium opens `/status` of a real gateway
 * process, asks for the token (HTTP Basic), and shows one wholesaler up and one down, with their last
 * probe and the plots of the last hour, without loading anything from elsewhere. A pharmacy's API key
 * opens nothing. The screenshot goes to `.scratch/test-output/status-page/` (not committed).
 */
const CHROMIUM = '/usr/bin/chromium';
const MUST_RUN = process.env.CI === 'true';
const TOKEN = 'status-token-for-the-browser-test';
const OUTPUT = fileURLToPath(new URL('../.scratch/test-output/status-page/', import.meta.url));
const START_MS = 90_000;
const TEST_TIMEOUT_MS = 60_000;

if (!existsSync(CHROMIUM)) {
  describe('the status page in a browser', () => {
    if (MUST_RUN) {
      it('finds Debian’s chromium, which .ci/run installs', () => {
        expect(existsSync(CHROMIUM), `${CHROMIUM} is missing`).toBe(true);
      });
    } else {
      console.warn(`[tests] ${CHROMIUM} is missing: the browser test of the status page is skipped.`);
      it.skip(`skipped: ${CHROMIUM} is missing (CI installs it; apt-get install chromium)`, () => {});
    }
  });
} else {
  describe('the status page in a browser', { timeout: TEST_TIMEOUT_MS }, () => {
    let observed: ObservedGateway;
    let browser: Browser;
    let base: string;

    beforeAll(async () => {
      observed = await startObservedGateway({
        STATUS_PAGE_TOKEN: TOKEN,
        BREAKER_FAILURE_THRESHOLD: '1',
        WHOLESALER_PROBE_INTERVAL_MS: '1000',
      });
      base = observed.gateway.url;
      const live = { 'x-api-key': observed.liveKey, 'x-msv3-username': 'apotheke1', 'x-msv3-password': 'pw' };
      const call = (wholesaler: string) =>
        send(base, '/v1/availability', {
          method: 'POST',
          headers: live,
          body: { wholesaler, items: [{ pzn: '04114918', quantity: 1 }] },
        });
      for (let i = 0; i < 3; i++) expect((await call('phoenix')).status).toBe(200);
      expect((await call('offline')).status).toBe(502);
      // Both endpoints are in use now: wait for a probe round to have looked at each.
      await until(
        'a probe of both wholesalers',
        async () => {
          const page = await send(base, '/status', { headers: { authorization: `Bearer ${TOKEN}` } });
          return (page.body.match(/<dt>Last probe<\/dt><dd>(answers|down):/g) ?? []).length === 2
            ? true
            : undefined;
        },
        20_000,
      );
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    }, START_MS + 30_000);
    afterAll(async () => {
      await browser?.close();
      await observed?.close();
    });

    it('shows a wholesaler up and one down, with probes, plots and dependencies, and nothing from elsewhere', async () => {
      const context = await browser.newContext({
        viewport: { width: 1100, height: 900 },
        httpCredentials: { username: 'operator', password: TOKEN },
      });
      try {
        const page = await context.newPage();
        const requested: string[] = [];
        page.on('request', (request) => requested.push(request.url()));
        const response = await page.goto(`${base}/status`);
        expect(response?.status()).toBe(200);
        expect(await page.title()).toBe('msv3-gateway status (1 down)');

        const phoenix = page.locator('article[data-wholesaler="phoenix"][data-route="live"]');
        const offline = page.locator('article[data-wholesaler="offline"][data-route="live"]');
        await expect(phoenix.getAttribute('data-state')).resolves.toBe('up');
        await expect(offline.getAttribute('data-state')).resolves.toBe('down');
        await expect(phoenix.locator('h3').textContent()).resolves.toContain('phoenix (live) up');
        await expect(offline.textContent()).resolves.toMatch(/Circuit1 open \(of 1\)/);
        await expect(offline.textContent()).resolves.toMatch(/Last probedown: unreachable: ECONNREFUSED/);
        await expect(phoenix.textContent()).resolves.toMatch(/Last probeanswers: HTTP 401/);
        await expect(phoenix.textContent()).resolves.toMatch(
          /Last hour3 calls, 0 failed \(0 %\), p95 \d+ ms/,
        );
        // Two plots per wholesaler, drawn: phoenix's latency line has points, offline's failures a bar.
        await expect(page.locator('svg.plot').count()).resolves.toBe(4);
        await expect(
          phoenix.locator('svg.plot').first().locator('polyline, circle').count(),
        ).resolves.toBeGreaterThan(0);
        await expect(
          offline.locator('svg.plot').nth(1).locator('rect[fill="#c0392b"]').count(),
        ).resolves.toBe(1);
        const box = await phoenix.locator('svg.plot').first().boundingBox();
        expect(box?.width).toBeGreaterThan(200);

        const dependencies = await page.locator('table.deps').textContent();
        expect(dependencies).toMatch(/Databaseupsqlite, answered in \d+ ms/);
        expect(dependencies).toContain('Redisnot usedrate limits are counted in memory or in the database');
        expect(dependencies).toMatch(/Webhook backlogup0 waiting; delivery worker running/);

        expect(requested.every((url) => url.startsWith(`${base}/`))).toBe(true);
        mkdirSync(OUTPUT, { recursive: true });
        await page.screenshot({ path: join(OUTPUT, 'status.png'), fullPage: true });
      } finally {
        await context.close();
      }
    });

    it("refuses a pharmacy's API key, as the password, as its header and as a bearer token", async () => {
      const context = await browser.newContext({
        httpCredentials: { username: 'operator', password: observed.liveKey },
      });
      try {
        const page = await context.newPage();
        const refusals: Promise<unknown>[] = [];
        page.on('response', (response) => {
          if (new URL(response.url()).pathname === '/status') refusals.push(response.json());
        });
        // Chromium sends the key as the password and is refused: it shows the refusal, or gives up
        // (ERR_INVALID_AUTH_CREDENTIALS); either way no status.
        const outcome = await page.goto(`${base}/status`).then(
          (response) => response?.status(),
          (error: unknown) => String(error),
        );
        expect(outcome === 401 || /ERR_INVALID_AUTH_CREDENTIALS/.test(String(outcome)), String(outcome)).toBe(
          true,
        );
        await expect(page.locator('article').count()).resolves.toBe(0);
        expect(refusals.length).toBeGreaterThan(0);
        for (const body of await Promise.all(refusals))
          expect(body).toMatchObject({ error: 'status_token_invalid', error_code: '1107' });
        // The key where a pharmacy's software sends it, and as a bearer token (the context's own client:
        // chromium itself would wait for someone to type a password).
        for (const headers of [
          { 'x-api-key': observed.liveKey },
          { authorization: `Bearer ${observed.liveKey}` },
        ] as Record<string, string>[]) {
          const answer = await context.request.get(`${base}/status`, { headers });
          expect(answer.status()).toBe(401);
          expect(await answer.json()).toMatchObject({ error: 'status_token_invalid' });
        }
      } finally {
        await context.close();
      }
    });
  });
}
