// One lint config for every package: type-aware rules, and the import rules that keep the
// server's shape (docs/architecture.md): no import cycles, features reached only through their
// index.ts, nothing importing the composition root, layers pointing one way.
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import { readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';

const server = 'packages/server/src';
const features = readdirSync(new URL(`./${server}/features`, import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
// The composition root and start-up: they import everything, and nothing imports them.
const root = `${server}/{container,service,main,app,index,openapi-document,operator-tasks}.ts`;

const boundaries = [
  ...features.map((feature) => ({
    target: `${server}/features/${feature}/**`,
    from: `${server}/features/!(${feature})/**`,
    except: ['**/features/*/index.ts'],
    message: 'Reach another feature only through its index.ts.',
  })),
  {
    target: [`${server}/features/**`, `${server}/http/**`, `${server}/db/**`, `${server}/lib/**`, `${server}/domain/**`],
    from: root,
    message: 'Nothing imports the composition root or start-up; they are wired from the top.',
  },
  { target: `${server}/lib/**`, from: [`${server}/features/**`, `${server}/http/**`, `${server}/db/**`, `${server}/domain/**`], message: 'lib/ holds small pure helpers that depend on nothing of the service.' },
  { target: `${server}/domain/**`, from: [`${server}/features/**`, `${server}/http/**`, `${server}/db/**`], message: 'domain/ holds the shared types and rules; it depends on no layer.' },
  { target: `${server}/db/**`, from: [`${server}/features/**`, `${server}/http/**`], message: 'The store knows nothing of features or HTTP.' },
  { target: `${server}/http/**`, from: `${server}/features/**`, message: 'The HTTP layer knows nothing of features; the root hands it what it needs.' },
  {
    target: `${server}/features/**/!(*-routes|index|*.test).ts`,
    from: `${server}/http/**`,
    message: 'Services and stores know nothing of HTTP; only *-routes.ts files use http/.',
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'bench/results/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { project: ['./tsconfig.test.json', './packages/dashboard/tsconfig.json'], tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver': undefined,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['./tsconfig.test.json', './packages/dashboard/tsconfig.json'], noWarnOnMultipleProjects: true })],
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
      // Fastify's plugins and hooks are async functions by contract (no `done` callback), and so
      // are methods implementing a Promise-returning interface; an await is not what they lack.
      '@typescript-eslint/require-await': 'off',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: boundaries }],
    },
  },
  {
    files: [`${server}/features/**/*-{service,store}.ts`],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', '@fastify/*'], message: 'Services and stores know nothing of HTTP.' }] }],
    },
  },
  {
    // config.ts alone reads the environment (tests and benches set up their own processes).
    files: ['packages/server/src/**/*.ts', 'packages/cli/src/**/*.ts'],
    ignores: ['packages/server/src/config.ts', 'packages/cli/src/environment.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through config.ts' }],
    },
  },
  {
    // Tests read JSON answers as `any` (light-my-request) and let expect() judge them.
    files: ['**/*.test.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['packages/cli/src/**/*.ts', 'bench/**/*.ts', '.ci/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // Plain JavaScript examples and deployment scripts for users: no TypeScript program to type-check them against.
    files: ['docs/examples/**/*.mjs', 'deploy/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', fetch: 'readonly', Buffer: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'no-console': 'off', 'import-x/no-cycle': 'off', 'import-x/no-restricted-paths': 'off' },
  },
);
