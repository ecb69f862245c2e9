// The API reference page as a developer sees it: Debian's chromium (driven by playwright-core) opens /docs on
// a real server, every endpoint of the spec shows up with its method and path, and the page loads nothing
// from anywhere but the server itself (the machines here, and many operators, have no internet).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, skipWithoutChromium } from '../helpers/chromium.ts';
import { type Env, type Server, startServer, tempEnv } from '../helpers/harness.ts';

// The spec's endpoint table, each path with its GET, HEAD and OPTIONS operations.
const ENDPOINTS = [
  '/api/v1/me',
  '/api/v1/databases',
  '/api/v1/databases/{id}/games',
  '/api/v1/games',
  '/api/v1/games/{id}',
  '/api/v1/changes',
].flatMap((path) => ['GET', 'HEAD', 'OPTIONS'].map((method) => `${method} ${path}`));

describe('/docs in a browser', { skip: skipWithoutChromium }, () => {
  let env: Env;
  let server: Server;
  let browser: Browser;

  before(async () => {
    env = tempEnv();
    server = await startServer(env);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    env?.cleanup();
  });

  test('lists every endpoint with its method, loading nothing from outside the server', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));

    const answer = await page.goto(`${server.base}/docs`);
    assert.equal(answer?.status(), 200);
    assert.match(answer?.headers()['content-security-policy'] ?? '', /default-src 'self'/);
    await page
      .locator('.opblock')
      .nth(ENDPOINTS.length - 1)
      .waitFor({ timeout: 30_000 });
    assert.match((await page.locator('.info .title').textContent()) ?? '', /chessport API/);

    const shown = await page.locator('.opblock-summary').evaluateAll((blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
        const path = block.querySelector('.opblock-summary-path')?.textContent ?? '';
        return `${method} ${path}`;
      }),
    );
    // Swagger UI puts zero-width spaces into long paths so they can wrap.
    const endpoints = shown.map((text) => text.replace(/\u200b/g, '').trim());
    assert.deepEqual(endpoints.sort(), [...ENDPOINTS].sort());

    const origin = new URL(server.base).origin;
    const outside = requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
    assert.deepEqual(outside, [], 'requests that left the server');
    assert.ok(
      requested.some((url) => url.includes('/json')),
      'the page fetched the document from the server',
    );
    assert.deepEqual(problems, [], 'console errors (a Content Security Policy violation would show here)');
    await page.close();
  });
});
