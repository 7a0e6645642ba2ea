import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReader } from './reader.js';
import { checkWasmSimd } from './wasm-loader.js';

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
