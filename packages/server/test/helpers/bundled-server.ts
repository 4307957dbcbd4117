import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The service's sources bundled into plain JavaScript, as `npm run build` would give it but in
 * a moment, for tests that start and kill the process many times: a start then costs module
 * loading only, not a TypeScript transform per file. The telemetry writer's worker thread is a
 * second entry point beside main.js (startModuleWorker looks for its sibling). Dependencies stay
 * external and load from node_modules; the workspace's own packages are bundled from source.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const serverSrc = path.join(repoRoot, 'packages/server/src');

export interface BundledServer {
  /** The entry point: `node <main>` runs the service. */
  readonly main: string;
  remove(): void;
}

export async function bundleServer(): Promise<BundledServer> {
  // Three levels below packages/server (node_modules/.cache/<bundle>), so that paths the sources
  // resolve from their own location (the vendored .proto files, `../../../proto` from
  // features/otlp) land where they do from src/, and external packages resolve from node_modules.
  const cache = path.join(repoRoot, 'packages/server/node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  const outdir = mkdtempSync(path.join(cache, 'corral-bundle-'));
  await build({
    entryPoints: [path.join(serverSrc, 'main.ts'), path.join(serverSrc, 'features/telemetry/telemetry-sqlite-worker.ts')],
    outdir,
    entryNames: '[name]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    logLevel: 'silent',
    plugins: [{
      name: 'external-dependencies',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@corral/') ? undefined : { path: args.path, external: true }));
      },
    }],
  });
  return { main: path.join(outdir, 'main.js'), remove: () => rmSync(outdir, { recursive: true, force: true }) };
}
