/**
 * The errors of reading a URL, each a {@link ParquetSkimError} with its stable code and a message
 * that says what was expected, what was found and what to do.
 *
 * Errors that a retry can change (`HTTP_STATUS`, `TIMEOUT`, `NETWORK`) know how to say how many
 * attempts were made ({@link RetryableError.withAttempts}).
 */
import { type ErrorCode, ParquetSkimError } from '../errors.js';

/** An error whose message depends on how many attempts were made. */
export class RetryableError extends ParquetSkimError {
  constructor(
    code: ErrorCode,
    private readonly describe: (attempts: number) => string,
    readonly attempts = 1,
    /** `HTTP_STATUS`: the status, and the `Range` it answered. */
    readonly answered?: { status: number; range: string },
  ) {
    super(code, describe(attempts));
  }

  /** The same error after `attempts` attempts. */
  withAttempts(attempts: number): RetryableError {
    return new RetryableError(this.code, this.describe, attempts, this.answered);
  }
}

/** The hint after an HTTP status. */
function statusHint(status: number, range: string): string {
  if (status === 401 || status === 403) return 'check the credentials (headers, credentials mode) and the URL';
  if (status === 404 || status === 410) return 'check the URL: the file is not there';
  if (status === 416 && range === 'bytes=0-3') return 'the file is empty, or the server refuses range requests';
  if (status === 416) return 'the file is shorter than expected: it may have been replaced';
  if ([429, 502, 503, 504].includes(status)) return 'the server is unavailable; try later, or raise `retries`';
  return 'check the URL, credentials and that the server allows range requests';
}

/** The errors of reading `url`. */
export function httpErrors(url: string) {
  return {
    /**
     * The server answered `range` with an error `status`. `note` says what the reader had tried
     * before, when this request was its way around it (a refused suffix range).
     */
    httpStatus(status: number, range: string, attempts: number, note?: string): RetryableError {
      return new RetryableError(
        'HTTP_STATUS',
        (n) =>
          `${note === undefined ? '' : `${note}; then `}expected 206 Partial Content for ${range} of ${url}, but the server answered ${status}${n > 1 ? ` ${n} times in a row` : ''}; ${statusHint(status, range)}`,
        attempts,
        { status, range },
      );
    },
    timeout(ms: number, attempts: number): RetryableError {
      return new RetryableError(
        'TIMEOUT',
        (n) =>
          `expected an answer from ${url} within ${ms} ms, but none came complete (${n} attempt${n === 1 ? '' : 's'}); the server is slow or stalled: try again, or raise \`timeoutMs\``,
        attempts,
      );
    },
    network(detail: string): RetryableError {
      return new RetryableError(
        'NETWORK',
        (n) =>
          `the request for ${url} failed: ${detail}${n > 1 ? ` (${n} attempts)` : ''}. Check the network, the URL, the server's CORS headers (allow Range; expose Content-Range, Content-Length, ETag), and that it sends ranges without a Content-Encoding such as gzip (browsers refuse those: net::ERR_CONTENT_DECODING_FAILED in the console)`,
      );
    },
    contentEncoding(detail: string): ParquetSkimError {
      return new ParquetSkimError(
        'CONTENT_ENCODING',
        `expected the file's own bytes from ${url}, but ${detail}; serve Parquet files without Content-Encoding (they are compressed already), e.g. exclude them from the server's gzip/brotli compression`,
      );
    },
    rangeNotSupported(detail: string): ParquetSkimError {
      return new ParquetSkimError(
        'RANGE_NOT_SUPPORTED',
        `expected the server to honour the Range header for ${url}, but ${detail}; serve the file from a server that supports HTTP range requests`,
      );
    },
    badContentRange(detail: string): ParquetSkimError {
      return new ParquetSkimError(
        'BAD_CONTENT_RANGE',
        `expected a Content-Range matching the request for ${url}, but ${detail}`,
      );
    },
    fileChanged(detail: string): ParquetSkimError {
      return new ParquetSkimError(
        'FILE_CHANGED',
        `expected ${url} to stay the same during reading, but it changed (${detail}); open the file again`,
      );
    },
    /** An HTML page where the file's bytes were expected; `evidence` says how it showed. */
    htmlPage(evidence: string): ParquetSkimError {
      return new ParquetSkimError(
        'INVALID_FILE',
        `expected a Parquet file at ${url}, but the server sent an HTML page (${evidence}): is the URL right? Dev servers (Vite, webpack) answer a path that does not exist with their index.html`,
      );
    },
  };
}
