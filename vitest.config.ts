import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Two cores: two workers keep files isolated without oversubscribing the machine.
    maxWorkers: 2,
  },
});
