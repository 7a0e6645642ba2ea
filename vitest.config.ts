import { defineConfig } from 'vitest/config';

// Unit tests in Node: the TS package (inline execution of the real WebAssembly core), the test
// server and the conformance canonicalizer; and the smoke test of the three browser engines
// (tests/engines: Debian's Chromium, Firefox ESR and WebKitGTK, driven from Node). The rest of
// the browser tests run under Playwright (tests/browser).
export default defineConfig({
  test: {
    include: [
      'web/src/**/*.test.ts',
      'tests/server/**/*.test.ts',
      'tests/support/**/*.test.ts',
      'tests/engines/**/*.test.ts',
    ],
    environment: 'node',
    testTimeout: 30_000,
  },
});
