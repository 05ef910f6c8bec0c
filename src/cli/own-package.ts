/** tickline's own package.json: two folders up from this file, in a checkout (src/cli) as installed (dist/cli). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The root of this tickline installation: a checkout, or node_modules/tickline. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface OwnPackage {
  readonly version: string;
  readonly devDependencies: Readonly<Record<string, string>>;
}

export function ownPackage(): OwnPackage {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as OwnPackage;
}
