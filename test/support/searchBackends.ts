/**
 * The search backends every search-dependent test runs against: `postgres`, and `opensearch` on the
 * OpenSearch the harness started (`OPENSEARCH_URL`, set by `npm test`).
 */
export function opensearchUrl(): string {
  const url = process.env.OPENSEARCH_URL;
  if (!url) throw new Error('OPENSEARCH_URL is not set: run through `npm test`, which starts OpenSearch');
  return url;
}

/** Each backend's name and the server environment that selects it. */
export function searchBackends(): { name: string; env: Record<string, string> }[] {
  return [
    { name: 'postgres', env: { SEARCH_BACKEND: 'postgres' } },
    { name: 'opensearch', env: { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: opensearchUrl() } },
  ];
}
