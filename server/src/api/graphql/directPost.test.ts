import { test } from 'node:test';
import assert from 'node:assert/strict';
import { directParams } from './directPost.ts';

const post = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', headers, body });

test('a JSON POST of GraphQL parameters, answered as application/json, is served directly', () => {
  for (const accept of [undefined, '*/*', 'application/json', 'Application/JSON; charset=utf-8']) {
    const body = { query: '{ __typename }', variables: { a: 1 }, operationName: 'Q', extensions: null };
    assert.equal(directParams(post(body, accept ? { accept } : {})), body, String(accept));
  }
});

test('any other request is left to yoga', () => {
  const cases: [string, ReturnType<typeof post> | { method: string; headers: Record<string, string>; body: unknown }][] = [
    ['a GET', { method: 'GET', headers: {}, body: undefined }],
    ['GraphQL over HTTP’s media type', post({ query: '{ a }' }, { accept: 'application/graphql-response+json' })],
    ['a list of media types', post({ query: '{ a }' }, { accept: 'application/json, text/event-stream' })],
    ['a browser’s Origin (CORS)', post({ query: '{ a }' }, { origin: 'http://example.com' })],
    ['a batch', post([{ query: '{ a }' }])],
    ['no query', post({ variables: {} })],
    ['a query that is not a string', post({ query: 1 })],
    ['an unknown parameter', post({ query: '{ a }', extra: 1 })],
    ['variables that are not an object', post({ query: '{ a }', variables: '{}' })],
    ['an operation name that is not a string', post({ query: '{ a }', operationName: 1 })],
    ['extensions that are not an object', post({ query: '{ a }', extensions: [] })],
  ];
  for (const [what, req] of cases) assert.equal(directParams(req as never), undefined, what);
});
