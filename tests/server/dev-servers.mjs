/**
 * dev-servers — the HTTP servers web developers reach for first, started for real, each serving a
 * directory of files on 127.0.0.1: Vite's dev and preview servers, `http-server`, `serve`,
 * `python3 -m http.server`, nginx, and the S3 and Azure Blob emulators (moto, Azurite).
 *
 * Design note
 * - Nothing here imitates a server: every one is the program users run, from the packages the
 *   README's setup installs (npm devDependencies, the Debian `nginx-light` package, `moto[server]`
 *   in tests/.venv). Their range handling is what the tests are about, so none is configured
 *   beyond what a user would do: a root directory, a port, and for the object stores the CORS
 *   rules their documentation gives for browsers and a bucket/container readable anonymously.
 * - Each starter spawns the process, waits until its port answers HTTP, and returns
 *   `{ name, origin, fileUrl(name), close() }`. `close()` kills the process group and resolves
 *   once it is gone. A server that does not come up in 30 s fails with its output.
 * - Vite is started through `node_modules/.bin/vite` (not `npx`, whose child outlives a kill).
 *   Its dev server serves `<root>/public/` at `/`; preview serves `<root>/dist/` (a build).
 * - The object stores get their files by their own APIs: moto accepts unsigned S3 calls, so
 *   plain `fetch` creates the bucket (public-read ACL) and its CORS rules; Azurite needs
 *   SharedKey signatures, so its setup uses `@azure/storage-blob` with the emulator's documented
 *   development account.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const bin = (name) => path.join(repoRoot, 'node_modules/.bin', name);

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `command` in its own process group and waits until `probeUrl` answers (any status).
 * Resolves to `{ close(), output() }` (the last 4000 characters it printed).
 */
async function spawnServer(name, command, args, probeUrl, options = {}) {
  const child = spawn(command, args, {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  const gone = new Promise((resolve) => {
    child.on('exit', () => {
      exited = true;
      resolve();
    });
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) throw new Error(`${name} exited before serving: ${output}`);
    try {
      await fetch(probeUrl, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        process.kill(-child.pid, 'SIGKILL');
        throw new Error(`${name} did not answer ${probeUrl} within 30 s: ${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const close = async () => {
    if (!exited) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }, 3000);
      await gone;
      clearTimeout(timer);
    }
  };
  return { close, output: () => output };
}

/** A server of files under `origin + prefix`. */
function served(name, origin, prefix, { close, output }) {
  return { name, origin, fileUrl: (file) => `${origin}${prefix}${file}`, close, output };
}

/** `vite` (dev): serves `<appDir>/public/` at `/` and the app itself. */
export async function startViteDev(appDir) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = [appDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort', '--logLevel', 'warn'];
  const server = await spawnServer('vite dev', bin('vite'), args, `${origin}/`);
  return served('vite (dev)', origin, '/', server);
}

/** `vite preview`: serves the app's build, `<appDir>/dist/` (public files included). */
export async function startVitePreview(appDir) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ['preview', appDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort'];
  const server = await spawnServer('vite preview', bin('vite'), args, `${origin}/`);
  return served('vite preview', origin, '/', server);
}

/** `http-server <root>` (npm), caching off as its README suggests for development. */
export async function startHttpServer(root) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = [root, '-p', String(port), '-a', '127.0.0.1', '-s', '-c-1'];
  const server = await spawnServer('http-server', bin('http-server'), args, `${origin}/`);
  return served('http-server', origin, '/', server);
}

/** `serve <root>` (npm). */
export async function startServe(root) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ['-l', `tcp://127.0.0.1:${port}`, '--no-clipboard', '--no-port-switching', root];
  const server = await spawnServer('serve', bin('serve'), args, `${origin}/`);
  return served('serve', origin, '/', server);
}

/** `python3 -m http.server --directory <root>`. */
export async function startPythonHttpServer(root) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const args = ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', root];
  const server = await spawnServer('python3 -m http.server', 'python3', args, `${origin}/`);
  return served('python3 -m http.server', origin, '/', server);
}

/** Debian's nginx with a minimal `root` configuration, run in the foreground. */
export async function startNginx(root) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const prefix = await makeTempDir('nginx');
  const temp = (name) => path.join(prefix, name);
  const config = `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${temp('nginx.pid')};
error_log ${temp('error.log')};
events { worker_connections 64; }
http {
  include /etc/nginx/mime.types;
  types { application/wasm wasm; }
  access_log off;
  client_body_temp_path ${temp('body')};
  proxy_temp_path ${temp('proxy')};
  fastcgi_temp_path ${temp('fastcgi')};
  uwsgi_temp_path ${temp('uwsgi')};
  scgi_temp_path ${temp('scgi')};
  server {
    listen 127.0.0.1:${port};
    root ${root};
  }
}
`;
  await writeFile(temp('nginx.conf'), config);
  const nginx = (await exists('/usr/sbin/nginx')) ? '/usr/sbin/nginx' : 'nginx';
  const args = ['-c', temp('nginx.conf'), '-p', prefix, '-g', 'daemon off;'];
  const server = await spawnServer('nginx', nginx, args, `${origin}/`);
  return served('nginx', origin, '/', server);
}

/** The CORS rules AWS documents for browsers reading objects with range requests. */
const S3_CORS = `<?xml version="1.0" encoding="UTF-8"?>
<CORSConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <CORSRule>
    <AllowedOrigin>*</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod>
    <AllowedMethod>HEAD</AllowedMethod>
    <AllowedHeader>*</AllowedHeader>
    <ExposeHeader>Content-Range</ExposeHeader>
    <ExposeHeader>Content-Length</ExposeHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <MaxAgeSeconds>3000</MaxAgeSeconds>
  </CORSRule>
</CORSConfiguration>`;

/** moto's S3 server with bucket `data` holding `files` of `root` (default all; public-read), CORS on. */
export async function startS3(root, files) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const moto = path.join(repoRoot, 'tests/.venv/bin/moto_server');
  const server = await spawnServer('moto_server', moto, ['-H', '127.0.0.1', '-p', String(port)], `${origin}/`);
  try {
    const s3 = async (method, target, body, headers = {}) => {
      const response = await fetch(`${origin}${target}`, { method, body, headers });
      if (!response.ok) throw new Error(`S3 ${method} ${target}: ${response.status} ${await response.text()}`);
    };
    await s3('PUT', '/data');
    await s3('PUT', '/data?cors', S3_CORS, { 'content-type': 'application/xml' });
    for (const file of files ?? (await filesOf(root))) {
      await s3('PUT', `/data/${file}`, await readFile(path.join(root, file)), { 'x-amz-acl': 'public-read' });
    }
  } catch (error) {
    await server.close();
    throw error;
  }
  return served('S3 (moto)', origin, '/data/', server);
}

/** Azurite's documented development account. */
const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** Azurite's Blob service with container `data` (anonymous blob reads) holding `files` of `root` (default all), CORS on. */
export async function startAzurite(root, files) {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const location = await makeTempDir('azurite');
  const args = [
    '--blobHost',
    '127.0.0.1',
    '--blobPort',
    String(port),
    '--location',
    location,
    '--silent',
    '--disableTelemetry',
    '--skipApiVersionCheck',
  ];
  const server = await spawnServer('azurite-blob', bin('azurite-blob'), args, `${origin}/`);
  try {
    const { BlobServiceClient, StorageSharedKeyCredential } = await import('@azure/storage-blob');
    const service = new BlobServiceClient(
      `${origin}/${AZURITE_ACCOUNT}`,
      new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
    );
    // The rules Azure's documentation gives for browser range reads.
    await service.setProperties({
      cors: [
        {
          allowedOrigins: '*',
          allowedMethods: 'GET,HEAD,OPTIONS',
          allowedHeaders: 'range,if-match,if-none-match',
          exposedHeaders: 'content-range,content-length,etag,last-modified',
          maxAgeInSeconds: 3600,
        },
      ],
    });
    const container = service.getContainerClient('data');
    await container.createIfNotExists({ access: 'blob' });
    for (const file of files ?? (await filesOf(root))) {
      await container.getBlockBlobClient(file).uploadFile(path.join(root, file));
    }
  } catch (error) {
    await server.close();
    throw error;
  }
  return served('Azure Blob (Azurite)', origin, `/${AZURITE_ACCOUNT}/data/`, server);
}

async function filesOf(root) {
  const names = [];
  for (const name of await readdir(root)) {
    if ((await stat(path.join(root, name))).isFile()) names.push(name);
  }
  return names;
}

function makeTempDir(name) {
  return mkdtemp(path.join(os.tmpdir(), `parquet-skim-${name}-`));
}

async function exists(file) {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
