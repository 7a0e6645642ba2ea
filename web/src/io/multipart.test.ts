import { describe, expect, it } from 'vitest';
import { byterangesBoundary, multiRangeHeader, parseByteranges } from './multipart.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const encode = (s: string) => new TextEncoder().encode(s);

/** A body as nginx writes it: an empty line, then each part, then the close delimiter. */
function nginxBody(boundary: string, parts: Array<{ start: number; data: string; total: number }>): Uint8Array {
  let body = '';
  for (const { start, data, total } of parts) {
    body += `\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes ${start}-${start + data.length - 1}/${total}\r\n\r\n${data}`;
  }
  return encode(`${body}\r\n--${boundary}--\r\n`);
}

describe('several ranges in one request', () => {
  it('asks for each range inclusively, in one header', () => {
    expect(
      multiRangeHeader([
        { start: 0, end: 4 },
        { start: 100, end: 200 },
      ]),
    ).toBe('bytes=0-3,100-199');
  });

  it('finds the boundary of a multipart/byteranges answer only', () => {
    expect(byterangesBoundary('multipart/byteranges; boundary=00000000000000000002')).toBe('00000000000000000002');
    expect(byterangesBoundary('Multipart/ByteRanges;charset=x; Boundary="a b:c"')).toBe('a b:c');
    expect(byterangesBoundary('application/octet-stream')).toBeUndefined();
    expect(byterangesBoundary('multipart/byteranges')).toBeUndefined();
    expect(byterangesBoundary(null)).toBeUndefined();
  });

  it('takes each part by the length its Content-Range names, whatever its bytes hold', () => {
    const boundary = 'THIS_STRING_SEPARATES';
    // The second part's bytes contain the delimiter itself and line ends.
    const tricky = `\r\n--${boundary}\r\nnot a header\r\n\r\n`;
    const body = nginxBody(boundary, [
      { start: 0, data: 'PAR1', total: 5000 },
      { start: 4000, data: tricky, total: 5000 },
    ]);
    const parts = parseByteranges(body, boundary);
    expect(parts.map(({ start, end, total }) => ({ start, end, total }))).toEqual([
      { start: 0, end: 4, total: 5000 },
      { start: 4000, end: 4000 + tricky.length, total: 5000 },
    ]);
    expect(parts.map((p) => text(p.data))).toEqual(['PAR1', tricky]);
  });

  it('reads bodies without a preamble, with bare line feeds, and with a part of one byte', () => {
    const body = encode('--b\nContent-Range: bytes 7-7/10\n\nx\n--b\ncontent-range:bytes 8-9/10\n\nyz\n--b--');
    const parts = parseByteranges(body, 'b');
    expect(parts.map((p) => [p.start, p.end, text(p.data)])).toEqual([
      [7, 8, 'x'],
      [8, 10, 'yz'],
    ]);
  });

  it('says what is wrong with a body not in the form', () => {
    const good = nginxBody('b', [
      { start: 0, data: 'abcd', total: 100 },
      { start: 50, data: 'efgh', total: 100 },
    ]);
    expect(() => parseByteranges(good, 'other')).toThrow("expected the boundary '--other', found none");
    // Cut inside the second part.
    expect(() => parseByteranges(good.subarray(0, good.length - 12), 'b')).toThrow(
      'part 2 (bytes 50-53/100) promised 4 bytes, the body has 1 left',
    );
    expect(() => parseByteranges(good.subarray(0, 30), 'b')).toThrow(
      'expected a part header line ending in CRLF, found the end of the body',
    );
    const noRange = encode('\r\n--b\r\nContent-Type: text/plain\r\n\r\nabcd\r\n--b--\r\n');
    expect(() => parseByteranges(noRange, 'b')).toThrow('expected a Content-Range header in part 1');
    const badRange = encode('\r\n--b\r\nContent-Range: bytes 5-1/100\r\n\r\nabcd\r\n--b--\r\n');
    expect(() => parseByteranges(badRange, 'b')).toThrow("part 1's Content-Range 'bytes 5-1/100'");
    const longer = encode('\r\n--b\r\nContent-Range: bytes 0-1/100\r\n\r\nabcd\r\n--b--\r\n');
    expect(() => parseByteranges(longer, 'b')).toThrow('expected the boundary after part 1 (bytes 0-1/100)');
  });
});
