/**
 * GraphiQL in a browser (`GET /api/graphql` asking for HTML) works without internet access: the page
 * names only files that svc serves itself, open as the page is.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/testServer.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(() => s.close());

/** The page's own files: its `src` and `href` attributes, and the editor workers its script names. */
function namedFiles(page: string): string[] {
  const attributes = [...page.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
  const workers = /const workers = (\{.*?\});/.exec(page);
  assert.ok(workers, 'the page names its editor workers');
  return [...attributes, ...Object.values(JSON.parse(workers[1]!) as Record<string, string>)];
}

test('GraphiQL works offline: its page names no other origin, and svc serves every file it names without a token', async () => {
  const res = await fetch(`${s.url}/api/graphql`, { headers: { accept: 'text/html' } });
  assert.equal(res.status, 200);
  const page = await res.text();
  assert.doesNotMatch(page, /\bhttps?:|\/\/[a-z]/i, 'no URL of another origin (a CDN) in the page');
  const files = namedFiles(page);
  assert.ok(files.length >= 6, `script, styles, icon and three workers: ${files.join(', ')}`);
  for (const path of files) {
    assert.match(path, /^\/api\/graphql\//);
    const file = await fetch(`${s.url}${path}`);
    assert.equal(file.status, 200, path);
    assert.match(file.headers.get('content-type') ?? '', /^(text\/javascript|text\/css|image\/)/, path);
    assert.ok((await file.arrayBuffer()).byteLength > 0, path);
  }
  // The script the page loads defines what the page then calls.
  const script = files.find((f) => f.endsWith('/graphiql.js'))!;
  assert.match(page, /YogaGraphiQL\.renderYogaGraphiQL\(/);
  assert.match(await (await fetch(`${s.url}${script}`)).text(), /YogaGraphiQL/);
});

test('a GraphiQL file the page does not name is not found', async () => {
  const page = await (await fetch(`${s.url}/api/graphql`, { headers: { accept: 'text/html' } })).text();
  const script = namedFiles(page).find((f) => f.endsWith('/graphiql.js'))!;
  for (const path of [script.replace('/graphiql.js', '/nothing.js'), script.replace(/\/graphiql\/[^/]+\//, '/graphiql/0.0.0/')]) {
    assert.equal((await fetch(`${s.url}${path}`)).status, 404, path);
  }
});
