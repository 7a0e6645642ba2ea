import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The page Playwright drives: the real package (through its npm name), built like an app would.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../.cache/harness', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('index.html', import.meta.url)),
      },
    },
  },
  worker: { format: 'es' },
});
