// Minimal UTF-8 TextEncoder / TextDecoder for the jsc shell, which has neither (the wasm-bindgen glue needs them).
globalThis.TextEncoder = class {
  encode(s) {
    const out = [];
    for (let i = 0; i < s.length; i++) {
      const c = s.codePointAt(i);
      if (c > 0xffff) i++;
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return new Uint8Array(out);
  }
};
globalThis.TextDecoder = class {
  decode(b) {
    if (!b) return '';
    let s = '';
    for (let i = 0; i < b.length; ) {
      let c = b[i++];
      if (c >= 0xf0) {
        c = ((c & 7) << 18) | ((b[i++] & 63) << 12) | ((b[i++] & 63) << 6) | (b[i++] & 63);
      } else if (c >= 0xe0) {
        c = ((c & 15) << 12) | ((b[i++] & 63) << 6) | (b[i++] & 63);
      } else if (c >= 0xc0) {
        c = ((c & 31) << 6) | (b[i++] & 63);
      }
      s += String.fromCodePoint(c);
    }
    return s;
  }
};
