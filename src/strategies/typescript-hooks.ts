/**
 * Module hooks for a quant's TypeScript strategy: a `.ts` file outside node_modules is an ES module,
 * whatever its folder's package.json says. tsx alone follows the package type, and a `.ts` file in a
 * CommonJS (or type-less) folder is then required as CommonJS: that fails with "Cannot require() ES
 * Module ... in a cycle", or resolves the CommonJS builds of rxjs and zod, second copies beside the ones
 * the framework uses. Registered after tsx, so this resolve runs first and tsx compiles the file.
 */
import type { ResolveHook } from 'node:module';

export const resolve: ResolveHook = async (specifier, context, nextResolve) => {
  const resolved = await nextResolve(specifier, context);
  if (resolved.format === 'commonjs' && isQuantTypeScript(resolved.url)) return { ...resolved, format: 'module' };
  return resolved;
};

function isQuantTypeScript(url: string): boolean {
  const path = url.split('?')[0] ?? url;
  return path.startsWith('file:') && path.endsWith('.ts') && !path.includes('/node_modules/');
}
