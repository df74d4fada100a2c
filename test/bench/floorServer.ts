/**
 * The bare HTTP server of `bench:http-floor`: Node's `http`, one `JSON.parse` of the body and one upsert
 * of the aspect row through `pg` per request (the raw side's statement), no rule, history, record or
 * search, and a JSON answer.
 * DATABASE_URL, PORT and POOL_SIZE come from the environment; it prints `ready` once it listens.
 */
import http from 'node:http';
import pg from 'pg';
import { RAW_TABLE, RAW_UPSERT } from './benchSupport.ts';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 16) });
await pool.query(RAW_TABLE);

http
  .createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { value: unknown };
      // /openapi/v3/entity/<type>/<urn>/<aspect>
      const [, , , , , urn, aspect] = (req.url ?? '').split('?')[0]!.split('/');
      const systemMetadata = { lastObserved: Date.now(), runId: 'bench' };
      pool
        .query(RAW_UPSERT, [decodeURIComponent(urn!), aspect, JSON.stringify(body.value), JSON.stringify(systemMetadata)])
        .then(() => {
          const out = JSON.stringify({ urn: decodeURIComponent(urn!), [aspect!]: { value: body.value, systemMetadata } });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
          res.end(out);
        })
        .catch((err: Error) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(err.message);
        });
    });
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
