import { expect, test } from 'vitest';
import { client, startApp } from './helpers.js';

test('/healthz answers 200 ok while the database answers, and 503 service_unavailable once it does not', async () => {
  const t = await startApp();
  try {
    const anonymous = client(t);
    const ok = await anonymous.get('/healthz');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'ok' });

    await t.handle.close();
    const down = await anonymous.get('/healthz');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: 'service_unavailable', message: 'The database does not answer.' });
  } finally {
    await t.app.close();
  }
});
