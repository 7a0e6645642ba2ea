import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startRangeServer } from '../../tests/server/range-server.mjs';
import { linkOf } from './io/source.js';
import { createReader } from './reader.js';
import { wasmBuildFor } from './wasm-build.js';
import { checkWasmSimd, compileWasm, defaultWasmUrl } from './wasm-loader.js';

describe('WebAssembly SIMD', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('is present in this engine, and the core compiles', async () => {
    expect(() => checkWasmSimd()).not.toThrow();
    const reader = await createReader();
    reader.dispose();
  });

  it('missing: createReader rejects with UNSUPPORTED naming what is needed', async () => {
    // An engine without SIMD fails validation of any module using it; this one is made to.
    vi.spyOn(WebAssembly, 'validate').mockReturnValue(false);
    await expect(createReader()).rejects.toMatchObject({
      name: 'ParquetSkimError',
      code: 'UNSUPPORTED',
      message: expect.stringContaining('WebAssembly SIMD'),
    });
  });
});

describe('the build for each engine', () => {
  // User agents as the engines send them (2025-2026 releases).
  const agents: [string, 'simd' | 'no-simd'][] = [
    // Safari on macOS and iOS, and other iOS browsers (all JavaScriptCore).
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Safari/605.1.15',
      'no-simd',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1',
      'no-simd',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/138.0.7204.119 Mobile/15E148 Safari/604.1',
      'no-simd',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/141.0 Mobile/15E148 Safari/605.1.15',
      'no-simd',
    ],
    // WebKitGTK's MiniBrowser (the engine tests here).
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15',
      'no-simd',
    ],
    // V8 and SpiderMonkey.
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36',
      'simd',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36 Edg/138.0.0.0',
      'simd',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Mobile Safari/537.36',
      'simd',
    ],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0', 'simd'],
    ['Node.js/22', 'simd'],
    ['', 'simd'],
  ];
  it.each(agents)('%s: %s', (agent, build) => {
    expect(wasmBuildFor(agent)).toBe(build);
  });

  it('in Node: the SIMD build, named in the stats of a reader', async () => {
    expect(defaultWasmUrl().pathname).toMatch(/\/parquet_skim_wasm_simd_bg\.wasm$/);
    const reader = await createReader();
    expect(reader.stats().startup.wasmBuild).toBe('simd');
    reader.dispose();
  });
});

describe('the .wasm download', () => {
  it('is a body of its origin’s link: the meter counts it, streamed or not', async () => {
    const wasmDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'wasm');
    const streamed = await startRangeServer({ mounts: { '/': wasmDir } });
    // Named so that the server calls it application/octet-stream: compiled from the whole body.
    const plainDir = await mkdtemp(path.join(os.tmpdir(), 'skim-wasm-'));
    await copyFile(path.join(wasmDir, 'parquet_skim_wasm_simd_bg.wasm'), path.join(plainDir, 'core.bin'));
    const plain = await startRangeServer({ mounts: { '/': plainDir } });
    try {
      for (const url of [`${streamed.url}/parquet_skim_wasm_simd_bg.wasm`, `${plain.url}/core.bin`]) {
        expect(linkOf(url).bytesPerMs()).toBeUndefined();
        const module = await compileWasm(url);
        expect(WebAssembly.Module.exports(module).length).toBeGreaterThan(0);
        // Counted from the runtime's record of the download (Resource Timing), at the latest a
        // task after the compile.
        await vi.waitFor(() => expect(linkOf(url).bytesPerMs()).toBeGreaterThan(0));
      }
    } finally {
      await streamed.close();
      await plain.close();
      await rm(plainDir, { recursive: true, force: true });
    }
  });
});
