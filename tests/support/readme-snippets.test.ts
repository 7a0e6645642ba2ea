/**
 * Every TypeScript and JavaScript snippet of the README compiles under `strict` against the
 * package's own sources, as a user would paste it: a snippet that stops compiling (an API renamed,
 * an option dropped, `error` used as if it were not `unknown`) fails here.
 *
 * Each ```ts / ```js block is its own module. The names the README's prose introduces before a
 * snippet uses them (`input`, an `<input type="file">`; `reader`; `file`; `showLoginPrompt`, the
 * app's own) are declared in a shared preamble, and nothing else is: any other free name is an
 * error.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');

/** The fenced ```ts and ```js blocks, with the line each starts on. */
function snippets(markdown: string): Array<{ line: number; lang: string; code: string }> {
  const found: Array<{ line: number; lang: string; code: string }> = [];
  const fence = /^```(ts|js)\n([\s\S]*?)^```/gm;
  for (const match of markdown.matchAll(fence)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    found.push({ line, lang: match[1] as string, code: match[2] as string });
  }
  return found;
}

const PREAMBLE = `
declare global {
  /** An <input type="file"> of the page. */
  const input: HTMLInputElement;
  const reader: import('parquet-skim').Reader;
  const file: import('parquet-skim').ParquetFile;
  /** The app's own. */
  function showLoginPrompt(): void;
}
export {};
`;

function compile(files: Map<string, string>): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: ['node'],
    typeRoots: [path.join(repo, 'node_modules/@types')],
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    paths: { 'parquet-skim': [path.join(repo, 'web/src/index.ts')] },
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (name) => files.get(name) ?? read(name);
  host.fileExists = (name) => files.has(name) || exists(name);
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file === undefined || files.has(d.file.fileName))
    .map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      return `${d.file?.fileName ?? ''}:${where ? where.line + 1 : '?'}: ${text}`;
    });
}

describe('README snippets', () => {
  const blocks = snippets(readme);

  it('has the snippets this test is about', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
  });

  it('compile under strict against the package', () => {
    const dir = path.join(repo, 'tests/.cache/readme');
    const files = new Map<string, string>([[path.join(dir, 'preamble.ts'), PREAMBLE]]);
    for (const block of blocks) {
      // `export {}` makes each snippet a module (top-level await, no clashes between snippets).
      files.set(path.join(dir, `README.md-line-${block.line}.ts`), `${block.code}\nexport {};\n`);
    }
    const errors = compile(files);
    expect(errors, errors.join('\n')).toEqual([]);
  });
});
