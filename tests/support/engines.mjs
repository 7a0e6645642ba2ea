/**
 * The three browser engines, driven the one way each can be here (browsers cannot be downloaded,
 * so each is the Debian package):
 * - Chromium (`chromium`) through Playwright (playwright-core), a fresh context per page;
 * - Firefox ESR (`firefox-esr`) through puppeteer-core over WebDriver BiDi, a fresh browser
 *   context per page;
 * - WebKit, Safari's engine (`webkit2gtk-driver`'s WebKitWebDriver driving its MiniBrowser),
 *   under Xvfb, a fresh WebDriver session (a new MiniBrowser) per page.
 *
 * `launchEngine(name, { timeoutMs, jsc })` resolves to `{ name, version, open(url), close() }`
 * (`jsc`: JavaScriptCore options for WebKit, as `JSC_*` environment variables); `open(url)` to a page
 * with `waitFor(selector)` (attached, not visible), `evaluate(fn, arg)` (fn is serialized: it
 * may not close over anything; it may return a promise) and `close()`.
 */
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';
import { CHROMIUM_LAUNCH_OPTIONS } from './chromium.mjs';

export const ENGINES = ['chromium', 'firefox', 'webkit'];

/** Starts `name`; see the module doc. */
export async function launchEngine(name, { timeoutMs = 60_000, jsc = {} } = {}) {
  if (name === 'chromium') return launchChromium(timeoutMs);
  if (name === 'firefox') return launchFirefox(timeoutMs);
  if (name === 'webkit') return launchWebKit(timeoutMs, jsc);
  throw new Error(`unknown engine ${name}; expected one of ${ENGINES.join(', ')}`);
}

async function launchChromium(timeoutMs) {
  // BENCH_CHROMIUM_ARGS (space-separated) adds flags, e.g. to try a V8 setting in one run.
  const extra = (process.env.BENCH_CHROMIUM_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const browser = await chromium.launch({
    ...CHROMIUM_LAUNCH_OPTIONS,
    args: [...CHROMIUM_LAUNCH_OPTIONS.args, ...extra],
  });
  return {
    name: 'chromium',
    version: `Chromium ${browser.version()}`,
    async open(url) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(url);
      return {
        waitFor: (selector) => page.waitForSelector(selector, { state: 'attached', timeout: timeoutMs }),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

async function launchFirefox(timeoutMs) {
  const { default: puppeteer } = await import('puppeteer-core');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
    protocol: 'webDriverBiDi',
  });
  return {
    name: 'firefox',
    version: (await browser.version()).replace(/^firefox\//i, 'Firefox '),
    async open(url) {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.goto(url);
      return {
        waitFor: (selector) => page.waitForSelector(selector, { timeout: timeoutMs }),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

const MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

async function launchWebKit(timeoutMs, jscOptions = {}) {
  const { Builder } = await import('selenium-webdriver');
  let webDriver = await startWebKitDriver(jscOptions);
  const capabilities = {
    browserName: 'MiniBrowser',
    'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
  };
  // A MiniBrowser that fails to start leaves WebKitWebDriver waiting forever (seen once in ~300
  // sessions with a build on the two cores, and three times in one day's engines bench, each
  // after 5-13 sessions of the bench page; 25 bare sessions in a row started in ~180 ms). Give up
  // on it after a while, start a new driver and ask again: twice, then fail.
  const session = async () => {
    for (let attempt = 1; ; attempt++) {
      let timer;
      const started = new Builder().usingServer(webDriver.server).withCapabilities(capabilities).build();
      started.catch(() => undefined);
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`MiniBrowser did not start within ${SESSION_START_MS / 1000} s`)),
          SESSION_START_MS,
        );
      });
      try {
        return await Promise.race([started, timeout]);
      } catch (error) {
        if (attempt === SESSION_ATTEMPTS) {
          webDriver.stop();
          throw error;
        }
        console.warn(`webkit: ${error.message} (attempt ${attempt}); restarting WebKitWebDriver`);
        webDriver.stop();
        webDriver = await startWebKitDriver(jscOptions);
      } finally {
        clearTimeout(timer);
      }
    }
  };
  const probe = await session();
  const version = (await probe.getCapabilities()).get('browserVersion');
  await probe.quit();
  return {
    name: 'webkit',
    version: `WebKitGTK ${version}`,
    async open(url) {
      const driver = await session();
      await driver.manage().setTimeouts({ script: timeoutMs, pageLoad: timeoutMs });
      await driver.get(url);
      return {
        async waitFor(selector) {
          const end = Date.now() + timeoutMs;
          while (!(await driver.executeScript(`return document.querySelector(${JSON.stringify(selector)}) !== null`))) {
            if (Date.now() > end) throw new Error(`${selector} did not appear within ${timeoutMs} ms`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        },
        evaluate: (fn, arg) =>
          driver
            .executeAsyncScript(
              `const done = arguments[arguments.length - 1];
             Promise.resolve((${fn.toString()})(arguments[0])).then(
               (value) => done({ value }),
               (error) => done({ error: String(error && error.stack || error) }),
             );`,
              arg,
            )
            .then((r) => {
              if (r.error !== undefined) throw new Error(r.error);
              return r.value;
            }),
        close: () => driver.quit(),
      };
    },
    async close() {
      webDriver.stop();
    },
  };
}

/** Longest wait for a MiniBrowser session to start, and how many drivers to ask before failing. */
const SESSION_START_MS = 60_000;
const SESSION_ATTEMPTS = 3;

/**
 * WebKitWebDriver under its own Xvfb display (the driver and the MiniBrowsers it starts share
 * it), on a free port: `{ server, stop() }` once it answers `/status`.
 */
async function startWebKitDriver(jscOptions) {
  const port = await freePort();
  const child = spawn('xvfb-run', ['-a', 'WebKitWebDriver', `--port=${port}`], {
    detached: true,
    stdio: 'ignore',
    // JavaScriptCore reads its options (JSC_*) from the environment of the web process it runs in.
    env: { ...process.env, ...jscOptions },
  });
  const stop = (signal = 'SIGTERM') => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const server = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const status = await fetch(`${server}/status`);
      if (status.ok) return { server, stop: () => stop() };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      stop('SIGKILL');
      throw new Error('WebKitWebDriver did not start within 30 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function freePort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
