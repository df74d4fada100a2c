/**
 * Structured properties through a test server's HTTP API: URNs, definitions, entities to put values on,
 * and the set (P3) and patch (P4) requests of seed-interface.md. Each takes the server as its first
 * argument; the requests return the raw `Response` so that a test can assert on a rejection.
 */
import { enc, text, type TestServer } from './testServer.ts';

export type Definition = Record<string, unknown>;
export type Value = { string: string } | { double: number };
export type ApiVersion = 'v2' | 'v3';
/** One entry of the structuredProperties aspect: a property and its values on one entity. */
export type Assignment = { propertyUrn: string; values: Value[] };

/** `test.x` → `urn:li:structuredProperty:test.x` */
export const propertyUrn = (qualifiedName: string) => `urn:li:structuredProperty:${qualifiedName}`;

/** `orders` → `urn:li:dataset:(urn:li:dataPlatform:hive,orders,PROD)` */
export const datasetUrn = (name: string) => `urn:li:dataset:(urn:li:dataPlatform:hive,${name},PROD)`;

/** A minimal valid definition of `qualifiedName` (a SINGLE string for datasets), with `overrides` applied. */
export function definitionOf(qualifiedName: string, overrides: Definition = {}): Definition {
  return {
    qualifiedName,
    valueType: 'urn:li:dataType:svc.string',
    cardinality: 'SINGLE',
    entityTypes: ['urn:li:entityType:svc.dataset'],
    ...overrides,
  };
}

/** The seed's `io.acryl.privacy.retentionTime` (number, MULTIPLE, dataset and dataFlow, allowed 30/60/365), under `qualifiedName`. */
export function retentionTimeDefinition(qualifiedName: string) {
  return {
    qualifiedName,
    valueType: 'urn:li:dataType:svc.number',
    description: 'Retention Time is used to figure out how long to retain records in a dataset',
    displayName: 'Retention Time',
    cardinality: 'MULTIPLE',
    entityTypes: ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'],
    allowedValues: [
      { value: { double: 30 }, description: '30 days, usually reserved for datasets that are ephemeral and contain pii' },
      { value: { double: 60 }, description: 'Use this for datasets that drive monthly reporting but contain pii' },
      { value: { double: 365 }, description: 'Use this for non-sensitive data that can be retained for longer' },
    ],
  };
}

/** P1/P6: writes a definition (create or update); v3 wraps it in {"value"}. */
export function writeDefinition(s: TestServer, urn: string, definition: Definition, v: ApiVersion = 'v3'): Promise<Response> {
  return s.request(`/openapi/${v}/entity/structuredProperty/${enc(urn)}/propertyDefinition?createIfNotExists=false`, {
    method: 'POST',
    body: JSON.stringify(v === 'v3' ? { value: definition } : definition),
  });
}

/** Creates a property `qualifiedName` (`definitionOf` with `overrides`), which must be accepted; returns its URN. */
export async function createProperty(s: TestServer, qualifiedName: string, overrides: Definition = {}): Promise<string> {
  const urn = propertyUrn(qualifiedName);
  await text(await writeDefinition(s, urn, definitionOf(qualifiedName, overrides)), 200);
  return urn;
}

/** Makes an entity exist by writing its status; returns its URN. */
export async function createEntity(s: TestServer, entityType: string, urn: string): Promise<string> {
  await text(await s.request(`/openapi/v3/entity/${entityType}/${enc(urn)}/status?createIfNotExists=false`, { method: 'POST', body: '{"value":{"removed":false}}' }), 200);
  return urn;
}

/** Makes the dataset `datasetUrn(name)` exist; returns its URN. */
export const createDataset = (s: TestServer, name: string) => createEntity(s, 'dataset', datasetUrn(name));

/** P3: sets (replaces) the structured properties of an entity. */
export function setValues(s: TestServer, urn: string, properties: Assignment[], v: ApiVersion = 'v3', entityType = 'dataset'): Promise<Response> {
  const value = { properties };
  return s.request(`/openapi/${v}/entity/${entityType}/${enc(urn)}/structuredProperties?createIfNotExists=false`, {
    method: 'POST',
    body: JSON.stringify(v === 'v3' ? { value } : value),
  });
}

/** P4: patches the structured properties of an entity with `patch` (see `addOp`, `removeOp`). */
export function patchValues(s: TestServer, urn: string, patch: unknown[], v: ApiVersion = 'v3', entityType = 'dataset'): Promise<Response> {
  return s.request(`/openapi/${v}/entity/${entityType}/${enc(urn)}/structuredProperties`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json-patch+json', accept: 'application/json' },
    body: JSON.stringify({ patch, arrayPrimaryKeys: { properties: ['propertyUrn'] } }),
  });
}

/** The patch operation that adds (or replaces) the values of one property. */
export const addOp = (propertyUrn: string, values: Value[]) => ({ op: 'add', path: `/properties/${propertyUrn}`, value: { propertyUrn, values } });

/** The patch operation that removes one property. */
export const removeOp = (propertyUrn: string) => ({ op: 'remove', path: `/properties/${propertyUrn}` });

/** The structured properties of an entity as the v2 API reads them (soft-deleted and stale values hidden). */
export async function readValues(s: TestServer, urn: string, entityType = 'dataset'): Promise<unknown[]> {
  return JSON.parse(await text(await s.request(`/openapi/v2/entity/${entityType}/${enc(urn)}/structuredProperties`), 200)).value.properties;
}
