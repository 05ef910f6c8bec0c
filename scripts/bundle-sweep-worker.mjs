// The sweep worker of dist/ as one file (`npm run build` runs this after tsc). A pool thread that runs
// it loads its code in about half the time it takes to load the hundred modules and the packages they
// import one by one (docs/bench.md, "Issue 30, fourth turn"). Only a sweep of a built-in strategy runs
// it: a strategy file imports tickline's modules from dist/, and beside a bundle those would be second
// copies (their classes and module state not the bundle's).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const outfile = path.join(dist, 'optimize', 'sweep-worker-bundle.js');

/**
 * Each module's `import.meta.url` as the URL of its own file in dist/, written relative to the bundle:
 * paths a module finds from its place (a worker's entry, a loader hook, `createRequire`) stay right, and
 * the bundle holds no machine's path.
 */
const ownUrls = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(dist)) return undefined;
      const contents = await readFile(args.path, 'utf8');
      if (!contents.includes('import.meta.url')) return undefined;
      const relative = path.relative(path.dirname(outfile), args.path).split(path.sep).join('/');
      const own = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
      return {
        contents: contents.replaceAll('import.meta.url', own),
        loader: 'js',
        resolveDir: path.dirname(args.path),
      };
    });
  },
};

await build({
  entryPoints: [path.join(dist, 'optimize', 'sweep-worker.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Native add-ons and packages that load files of their own stay outside; none is loaded unless used.
  external: ['better-sqlite3', 'esbuild', '@duckdb/node-api', 'tsx', 'tsx/*'],
  // CommonJS packages inside an ES module bundle still call require for Node's own modules.
  banner: {
    js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
  },
  plugins: [ownUrls],
  logLevel: 'warning',
});
