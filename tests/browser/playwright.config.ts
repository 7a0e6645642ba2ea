import { defineConfig } from '@playwright/test';
import { CHROMIUM_LAUNCH_OPTIONS } from '../support/chromium.mjs';

/**
 * Browser end-to-end tests: Debian's Chromium (never a downloaded browser), driven by Playwright,
 * against the real test server on 127.0.0.1. Build first (`npm run build`); `npm test` does.
 */
export default defineConfig({
  testDir: '.',
  testMatch: /.*\.spec\.ts/,
  timeout: 180_000,
  workers: 1,
  reporter: [['list']],
  outputDir: '../.cache/playwright-output',
  use: {
    browserName: 'chromium',
    launchOptions: CHROMIUM_LAUNCH_OPTIONS,
  },
});
