import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createHttpServer } from './app.ts';

test('requests and responses start out with the app prototypes, so Express has nothing to re-parent', async () => {
  const app = express();
  app.use(express.json());
  app.post('/echo/:id', (req, res) => {
    res.json({ id: req.params.id, flag: req.query.flag, body: req.body as unknown, ip: typeof req.ip });
  });
  const server = createHttpServer(app, 30_000);
  const seen: boolean[] = [];
  // Runs before the app's own listener, i.e. before Express could change anything.
  server.prependListener('request', (req, res) => {
    seen.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/echo/7?flag=yes`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: '7', flag: 'yes', body: { a: [1, 2] }, ip: 'string' });
    assert.deepEqual(seen, [true]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
