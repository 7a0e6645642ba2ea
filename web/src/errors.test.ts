import { describe, expect, it } from 'vitest';
import { ParquetSkimError, serializeError, toSkimError } from './errors.js';

describe('errors', () => {
  it('keeps the code of an error that crossed postMessage', () => {
    const wasmError = Object.assign(new Error('expected a valid Parquet file, but …'), {
      name: 'ParquetSkimError',
      code: 'INVALID_FILE',
    });
    const crossed = structuredClone(serializeError(wasmError));
    const error = toSkimError(crossed);
    expect(error).toBeInstanceOf(ParquetSkimError);
    expect((error as ParquetSkimError).code).toBe('INVALID_FILE');
    expect(error.message).toBe('expected a valid Parquet file, but …');
  });

  it('turns unknown errors into INTERNAL and passes AbortError through', () => {
    const internal = toSkimError(new TypeError('boom'));
    expect((internal as ParquetSkimError).code).toBe('INTERNAL');
    expect(internal.message).toContain('boom');
    const abort = new DOMException('stop', 'AbortError');
    expect(toSkimError(abort)).toBe(abort);
    expect(toSkimError({ name: 'AbortError', message: 'stop' }).name).toBe('AbortError');
  });

  it('rejects codes it does not know as INTERNAL', () => {
    expect((toSkimError({ name: 'X', code: 'NOPE', message: 'm' }) as ParquetSkimError).code).toBe('INTERNAL');
  });
});
