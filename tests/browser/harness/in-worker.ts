/** A user's own Web Worker using parquet-skim: the core's fetch must work in Worker scope. */
import { createReader } from 'parquet-skim';

self.onmessage = async (event: MessageEvent<{ url: string; columns: string[] }>) => {
  try {
    const reader = await createReader({ workers: 0 });
    const file = await reader.open(event.data.url, { footerReadBytes: 64 * 1024 });
    const table = await file.scan({ columns: event.data.columns }).toTable();
    self.postMessage({ ok: true, rows: table.numRows, requests: file.requestLog().length });
    reader.dispose();
  } catch (error) {
    self.postMessage({ ok: false, error: `${(error as Error).name}: ${(error as Error).message}` });
  }
};
