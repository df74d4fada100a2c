/**
 * GraphiQL served by svc itself: the page at `/api/graphql` (a browser asking for HTML) and its script,
 * styles, editor workers and icon under `/api/graphql/graphiql/<version>/`, taken from
 * `@graphql-yoga/render-graphiql` (the build of GraphiQL that yoga's default page loads from unpkg.com,
 * released with yoga). The page names nothing of another origin, so GraphiQL works where the browser
 * or the server has no internet access; yoga's default page stayed at "Loading svc GraphQL..." there.
 *
 * The files (9 MB) are read by the first request for one of them. A new version of the package is a new
 * URL, so browsers keep them for good.
 */
import { createRequire } from 'node:module';
import type { Request, Response } from 'express';
import type { GraphiQLOptions } from 'graphql-yoga';
import { SvcError } from '../../shared/errors.ts';
import { GRAPHQL_PATH } from './endpoint.ts';

const VERSION = (createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json') as { version: string }).version;

/** Where the files are served: `GET /api/graphql/graphiql/<version>/<file>`, open as the page is. */
export const GRAPHIQL_FILES_ROUTE = `${GRAPHQL_PATH}/graphiql/:version/:file`;
const BASE = `${GRAPHQL_PATH}/graphiql/${VERSION}`;

/** Monaco's web workers by the label it asks for them under. */
const WORKERS = { editorWorkerService: 'editor.worker.js', json: 'json.worker.js', graphql: 'graphql.worker.js' };

interface GraphiQLFile {
  type: string;
  body: Buffer;
}

let files: Promise<Map<string, GraphiQLFile>> | undefined;

async function loadFiles(): Promise<Map<string, GraphiQLFile>> {
  const build = await import('@graphql-yoga/render-graphiql/graphiql');
  const js = (text: string): GraphiQLFile => ({ type: 'text/javascript; charset=utf-8', body: Buffer.from(text) });
  const icon = /^data:([\w/.+-]+);base64,(.*)$/s.exec(build.favicon);
  if (!icon) throw new Error('@graphql-yoga/render-graphiql: its favicon is not a base64 data URL');
  return new Map([
    ['graphiql.js', js(build.js)],
    ['graphiql.css', { type: 'text/css; charset=utf-8', body: Buffer.from(build.css) }],
    [WORKERS.editorWorkerService, js(build.editorWorkerService)],
    [WORKERS.json, js(build.jsonWorker)],
    [WORKERS.graphql, js(build.graphqlWorker)],
    ['favicon.ico', { type: icon[1]!, body: Buffer.from(icon[2]!, 'base64') }],
  ]);
}

/** Serves one of the files the page names (404 for any other, or for another version's). */
export async function serveGraphiQLFile(req: Request, res: Response): Promise<void> {
  const { version, file } = req.params as { version: string; file: string };
  files ??= loadFiles().catch((err: unknown) => {
    files = undefined;
    throw err;
  });
  const found = version === VERSION ? (await files).get(file) : undefined;
  if (!found) throw new SvcError('NOT_FOUND', `No GraphiQL file at ${req.path}: the page at ${GRAPHQL_PATH} names the files there are`);
  res.set({ 'content-type': found.type, 'cache-control': 'public, max-age=31536000, immutable' }).send(found.body);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON that cannot end the script element it is written in. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

/** The page (yoga's `renderGraphiQL`): render-graphiql's page, with its inlined files named by URL instead. */
export function renderGraphiQL(options: GraphiQLOptions): string {
  const workers = Object.fromEntries(Object.entries(WORKERS).map(([label, file]) => [label, `${BASE}/${file}`]));
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title ?? 'GraphiQL')}</title>
    <link rel="icon" href="${BASE}/favicon.ico" />
    <link rel="stylesheet" href="${BASE}/graphiql.css" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${scriptJson(workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
    </script>
    <script src="${BASE}/graphiql.js"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(options)});
    </script>
  </body>
</html>
`;
}
