// One lint config for every package. Type-aware rules are kept to the ones that catch bugs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // config.ts alone reads the environment (tests and benches set up their own processes).
    files: ['packages/server/src/**/*.ts', 'packages/cli/src/**/*.ts'],
    ignores: ['packages/server/src/config.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through config.ts' }],
    },
  },
  {
    files: ['packages/cli/src/**/*.ts', 'bench/**/*.ts', '.ci/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
