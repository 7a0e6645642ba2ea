/**
 * The I/O floor of a bulk query: the byte ranges parquet-skim's run of the same query read (each
 * `[path, Range]` in the server's log, in order), moved with bare `fetch` in the fewest rounds —
 * the first request of each file (opening: its footer) all at once, then every other one at once
 * (the browser keeps its own per-host limit). No decoding: what the transport costs for the bytes
 * parquet-skim chose.
 */
async function move(url, range) {
  // `no-store`: past Chromium's HTTP cache, which would make requests to one URL wait for each
  // other (see web/src/io/http.ts).
  const response = await fetch(url, { headers: { Range: range }, cache: 'no-store' });
  if (response.status !== 206) throw new Error(`floor: ${response.status} for ${range}`);
  await response.arrayBuffer();
}

/**
 * Moves every `[path, range]` at once — at most `IN_FLIGHT` requests outstanding: thousands of
 * fetches started together fail in Chromium (net::ERR_INSUFFICIENT_RESOURCES), and the browser
 * sends no more than its per-host limit at a time anyway.
 */
const IN_FLIGHT = 256;
async function moveAll(ranges) {
  let next = 0;
  const lane = async () => {
    while (next < ranges.length) {
      const [path, range] = ranges[next++];
      await move(path, range);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, ranges.length) }, lane));
}

export async function setup({ ranges }) {
  if (!Array.isArray(ranges) || ranges.length === 0) throw new Error('floor: no ranges of parquet-skim to move');
  const seen = new Set();
  const footers = [];
  const rest = [];
  for (const [path, range] of ranges) {
    (seen.has(path) ? rest : footers).push([path, range]);
    seen.add(path);
  }
  return {
    async run() {
      await moveAll(footers);
      await moveAll(rest);
      return { floor: true };
    },
    dispose() {},
  };
}
