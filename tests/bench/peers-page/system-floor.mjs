/**
 * The I/O floor of a bulk query: the byte ranges parquet-skim's run of the same query read (the
 * `Range` headers in the server's log, in order), moved with bare `fetch` in the fewest rounds —
 * the first request (opening: the footer), then every other one at once (the browser keeps its
 * own per-host limit). No decoding: what the transport costs for the bytes parquet-skim chose.
 */
async function move(url, range) {
  // `no-store`: past Chromium's HTTP cache, which would make requests to one URL wait for each
  // other (see web/src/io/http.ts).
  const response = await fetch(url, { headers: { Range: range }, cache: 'no-store' });
  if (response.status !== 206) throw new Error(`floor: ${response.status} for ${range}`);
  await response.arrayBuffer();
}

export async function setup({ url, ranges }) {
  if (!Array.isArray(ranges) || ranges.length === 0) throw new Error('floor: no ranges of parquet-skim to move');
  const [first, ...rest] = ranges;
  return {
    async run() {
      await move(url, first);
      await Promise.all(rest.map((range) => move(url, range)));
      return { floor: true };
    },
    dispose() {},
  };
}
