import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * The package's entry points (package.json "exports", compiled into dist/) resolved to their sources, so
 * code written as a user writes it (docs/examples) runs in the tests against the current sources.
 */
function entryPointSources(): { find: RegExp; replacement: string }[] {
  const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default: string }>;
  };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target !== 'string')
    .map(([subpath, target]) => ({
      find: new RegExp(`^${pkg.name}${subpath.slice(1)}$`),
      replacement: new URL(
        (target as { default: string }).default.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts'),
        import.meta.url,
      ).pathname,
    }));
}

export default defineConfig({
  resolve: { alias: entryPointSources() },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores: run files in parallel, but never more workers than cores.
    maxWorkers: 2,
  },
});
