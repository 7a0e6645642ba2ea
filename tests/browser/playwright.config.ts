import { defineConfig } from '@playwright/test';

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
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
