import { defineConfig } from 'vitest/config';

// Unit tests in Node: the TS package (inline execution of the real WebAssembly core), the test
// server and the conformance canonicalizer. Browser tests run under Playwright (tests/browser).
export default defineConfig({
  test: {
    include: ['web/src/**/*.test.ts', 'tests/server/**/*.test.ts', 'tests/support/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
  },
});
