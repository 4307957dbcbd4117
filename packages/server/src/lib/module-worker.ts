import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a sibling module of `callerUrl` (pass `import.meta.url`), named
 * without its extension. Built code runs the `.js` file; source runs (tsx, vitest) run the `.ts`
 * file, which a worker can only load once tsx's loader is registered in it, so a two-line
 * bootstrap registers it first. tsx is a development dependency, needed only in that case.
 */
export function startModuleWorker(callerUrl: string, sibling: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`${sibling}.js`, callerUrl), { workerData });
  const entry = new URL(`${sibling}.ts`, callerUrl).href;
  const tsxPackage = createRequire(callerUrl).resolve('tsx/package.json');
  const tsxApi = pathToFileURL(tsxPackage.replace(/package\.json$/, 'dist/esm/api/index.mjs')).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
