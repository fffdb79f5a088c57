import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { GUARD_EXAMPLES } from '../src/openapi-examples.ts';
import { buildGuard, testDatabaseTargets } from './helper.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'];

test('the /docs page: "Try it out" on POST /detect starts from the example and Execute answers 200 (headless Chromium)', {
  skip: fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (run .ci/install-chromium)`,
}, async (t) => {
  const { app } = await buildGuard(t, testDatabaseTargets()[0]!);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
  });
  t.after(async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  });

  const page = await context.newPage();
  await page.goto(`${base}/docs`);
  const operation = page.locator('#operations-detect-post_detect');
  await operation.locator('.opblock-summary').click();
  await operation.locator('.try-out__btn').click();
  const body = JSON.parse(await operation.locator('textarea.body-param__text').inputValue());
  assert.deepEqual(body, GUARD_EXAMPLES['POST /detect']!.body, 'the editable body is the example, not a generated one');

  const answered = page.waitForResponse(
    (response) => response.url() === `${base}/detect` && response.request().method() === 'POST',
  );
  await operation.locator('button.execute').click();
  const response = await answered;
  assert.equal(response.status(), 200, await response.text());
  const result = await response.json();
  assert.equal(result.contains_pii, true);
  assert.deepEqual(Object.keys(result.breakdown).sort(), ['EMAIL', 'PHONE_NUMBER']);
});
