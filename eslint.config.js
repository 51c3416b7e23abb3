// ESLint with typescript-eslint's type-checked rules on every TypeScript file of the project, the
// layering of src/ (who may import whom), and one rule of our own (eslint/no-unyielded-work.js).
// `npm test` runs it; the tree is kept at zero problems.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import noUnyieldedWork from './eslint/no-unyielded-work.js';
import { ROOMS } from './eslint/rooms.js';

export { ROOMS };

/**
 * The rule of one room: for a file `depth` folders below it, a relative import climbing `depth + 1`
 * levels names a room of src/ (one climbing fewer stays inside the room).
 */
const layers = () => Object.entries(ROOMS).flatMap(([room, [allowed, why]]) => {
  const forbidden = Object.keys(ROOMS).filter((other) => other !== room && !allowed.includes(other));
  return [0, 1, 2].map((depth) => ({
    files: [`src/${room}/${'*/'.repeat(depth)}*.ts`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: forbidden.map((name) => ({
          // A regex, not a gitignore group: gitignore patterns cannot start with '../'.
          regex: `^${'\\.\\./'.repeat(depth + 1)}${name}/`,
          message: `src/${room} may import only ${allowed.length ? allowed.map((other) => `src/${other}`).join(', ') : 'no other room'}, not src/${name}: ${why} (eslint.config.js, ROOMS)`,
        })),
      }],
    },
  }));
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
  ...layers(),
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
