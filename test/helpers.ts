/** The test harness (startApp, tenant, client, freshDatabase) lives in test/support/app.ts; this entry point stays for the imports that name it. */
export * from './support/app.js';
