import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// A static bundle: the main API host serves dist/ at / (server feature web-ui). JSX is compiled
// for Preact by esbuild itself, so no Babel preset is needed.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { conditions: ['source'] },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: true, assetsInlineLimit: 0 },
  server: { proxy: { '/v1': 'http://127.0.0.1:8080' } },
});
