/**
 * GraphQL through a test server's HTTP API (`POST /api/graphql`): the raw answer, the data of an
 * answer that must have no errors, or the one error of an answer that must fail.
 */
import assert from 'node:assert/strict';
import type { TestServer } from './testServer.ts';

export interface GraphQLError {
  message: string;
  locations?: { line: number; column: number }[];
  path?: string[];
  extensions?: { code?: number | string; type?: string; [k: string]: unknown };
}

export interface GraphQLAnswer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: GraphQLError[]; extensions?: Record<string, unknown> };
}

export async function graphql(s: TestServer, query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GraphQLAnswer> {
  const res = await s.request('/api/graphql', { method: 'POST', body: JSON.stringify({ query, variables }), ...(token !== undefined ? { token } : {}) });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as GraphQLAnswer['body'] };
}

/** The data of an answer that must be HTTP 200 without errors, carrying an `extensions` object. */
export async function gqlData<T = Record<string, any>>(s: TestServer, query: string, variables?: Record<string, unknown>, token?: string | null): Promise<T> {
  const a = await graphql(s, query, variables, token);
  assert.equal(a.status, 200, JSON.stringify(a.body));
  assert.equal(a.body.errors, undefined, JSON.stringify(a.body.errors));
  assert.deepEqual(typeof a.body.extensions, 'object', 'every response carries an extensions object');
  return a.body.data as T;
}

/** The single error of an answer that must be HTTP 200 with one error (and an `extensions` object). */
export async function gqlError(s: TestServer, query: string, variables?: Record<string, unknown>, token?: string | null): Promise<GraphQLError> {
  const a = await graphql(s, query, variables, token);
  assert.equal(a.status, 200, JSON.stringify(a.body));
  assert.equal(a.body.errors?.length, 1, JSON.stringify(a.body));
  assert.deepEqual(typeof a.body.extensions, 'object', 'every response carries an extensions object');
  return a.body.errors[0]!;
}
