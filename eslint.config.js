// ESLint (typescript-eslint, type-aware) for `make lint`, beside the import rules
// (.dependency-cruiser.cjs) and Prettier (.prettierrc.json). The rule choices are in
// docs/architecture.md ("Lint"); sizes: no product file over 450 lines and no function over 100.

import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-artifacts/**', 'ui/**', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Route handlers, hooks and interface methods are async by contract (fastify turns a throw
      // into the error reply only from an async handler), with or without an await inside.
      '@typescript-eslint/require-await': 'off',
      // `_` marks what is unused on purpose (a destructured field left out, a callback's argument).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests and benchmarks read JSON answers as they come; the assertions are the type checks.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['cmd/**/*.ts', 'pkg/**/*.ts', 'plugins/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 450 }],
      'max-lines-per-function': ['error', { max: 100, IIFEs: true }],
    },
  },
  {
    // Data tables, not logic (docs/architecture.md "Lint, format and sizes"): the OpenAPI
    // definitions of meta.k8s.io's types and the aggregated API's paths, written out as
    // kube-apiserver serves them, and the declarations of `serve`'s flags.
    files: ['pkg/server/aggregated/openapi-definitions.ts', 'pkg/server/aggregated/openapi.ts', 'cmd/agentplane/serve-flags.ts'],
    rules: { 'max-lines': 'off', 'max-lines-per-function': 'off' },
  },
);
