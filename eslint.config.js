// ESLint with typescript-eslint's type-checked rules on every TypeScript file of the project, the
// layering of src/ (who may import whom), and one rule of our own (eslint/no-unyielded-work.js).
// `npm test` runs it; the tree is kept at zero problems.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import noUnyieldedWork from './eslint/no-unyielded-work.js';

/** Imports a folder of src/ may not make: the layers of docs/architecture.md, Layers, enforced. */
const layer = (folder, forbidden, why) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': ['error', {
      patterns: forbidden.map((name) => ({ group: [`**/${name}/*`, `../${name}/*`, `../../${name}/*`], message: `src/${folder} may not import src/${name}: ${why}` })),
    }],
  },
});

export default tseslint.config(
  {
    ignores: ['dist/', 'node_modules/', 'coverage/', 'test-output/', 'bench/results/', 'data/', 'scratch/',
      // Deliberately wrong code that test/contract/lint.test.ts lints to prove the rules bite.
      'test/lint/fixtures/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { local: { rules: { 'no-unyielded-work': noUnyieldedWork } } },
    rules: {
      // The rules the store's fast paths rely on, spelled out even where the preset has them.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-expressions': 'error',
      'local/no-unyielded-work': 'error',
      // Fastify handlers and plugins are async by contract, with or without an await inside.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  layer('schemas', ['domain', 'db', 'store', 'http', 'web', 'console', 'images', 'import', 'cli', 'coordination'], 'the contract depends on nothing of the service'),
  layer('domain', ['db', 'store', 'http', 'web', 'console', 'images', 'import', 'cli', 'coordination'], 'pure rules, no I/O'),
  layer('db', ['store', 'http', 'web', 'console', 'images', 'import', 'cli', 'coordination', 'client'], 'the database layer knows no resource'),
  layer('store', ['http', 'web', 'console', 'images', 'import', 'cli', 'coordination', 'client'], 'the store answers to any caller'),
  layer('images', ['http', 'web', 'console', 'import', 'cli', 'coordination', 'client'], 'the image pipeline (fetch, derive, store, queue worker) serves the server, the console and the CLI alike'),
  layer('import', ['db', 'store', 'http', 'web', 'console', 'images', 'cli', 'coordination', 'client'], 'one file reader for push and the console, with neither inside'),
  layer('importer', ['http', 'web', 'console', 'images', 'cli', 'coordination', 'client'], 'previews and applies a read file for the console and feeds alike, through src/store'),
  layer('client', ['db', 'store', 'http', 'web', 'console', 'images', 'import', 'cli', 'coordination'], 'the client ships without the server'),
  layer('web', ['console', 'cli'], 'public pages know nothing of the console'),
  layer('console', ['cli', 'client', 'coordination'], 'the console writes through src/store, as the API does'),
  {
    // Kysely's documented migration signature takes the database as Kysely<any>: a migration must not
    // depend on the table types of a later schema.
    files: ['src/db/migrations/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read JSON answers as `any` on purpose: the assertions are the type check.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
    rules: { ...tseslint.configs.disableTypeChecked.rules, 'local/no-unyielded-work': 'off' },
  },
);
