/**
 * `npm run bench -- <name> [args…]` runs bench/<name>.ts. Each benchmark prints its figures and
 * exits; results worth keeping go in docs/benchmarks.md with the command and the machine.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.replace(/\.ts$/, ''));
const name = process.argv[2];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>\navailable: ${available.join(', ') || '(none yet)'}`);
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(path.join(here, `${name}.ts`)).href);
