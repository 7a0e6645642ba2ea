import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The explorer page: a static build (relative URLs, so it can be served from any path) that the
// range server hosts at `/`. The package's Web Worker and `.wasm` are emitted as assets.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
  },
  worker: { format: 'es' },
});
