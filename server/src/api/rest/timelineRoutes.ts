/**
 * `GET /openapi/v2/timeline/v1/{urn}?categories=TAG,OWNER&startTime=&endTime=&raw=`: an entity's
 * timeline, what `datahub timeline` calls (both client lines), answered as DataHub's timeline API
 * answers it: a list of change transactions, oldest first (timeline/timelineService.ts).
 */
import type { Router } from 'express';
import { CHANGE_CATEGORIES, parseCategories } from '../../timeline/categories.ts';
import { SEMANTIC_CHANGES } from '../../timeline/changes.ts';
import type { TimelineService } from '../../timeline/timelineService.ts';
import { principalOf } from '../auth.ts';
import { sendJson } from '../json.ts';
import { queryParams } from './queryParams.ts';
import { serve, type Operations } from './openapi/operations.ts';
import { errors, json, param, ref, type Obj } from './openapi/parts.ts';

export const TIMELINE_QUERY = queryParams({
  categories: { type: 'list', required: true, description: `The categories of change, comma-separated or repeated, in any case: ${CHANGE_CATEGORIES.join(', ')} (OWNER is OWNERSHIP)` },
  startTime: { type: 'integer', default: -1, minimum: -Number.MAX_SAFE_INTEGER, description: 'Changes at or after this time (epoch milliseconds); -1: a week before the end' },
  endTime: { type: 'integer', default: 0, minimum: -Number.MAX_SAFE_INTEGER, description: 'Changes at or before this time (epoch milliseconds); 0: now' },
  // The CLI's --raw sends Python's spelling of true (`raw=True`).
  raw: { type: 'enum', values: ['true', 'false', 'True', 'False'], default: 'false', description: 'Add each transaction’s JSON Patch of the aspects it changed (rawDiff)' },
  includeVersionSet: { type: 'boolean', default: false, description: 'Taken for DataHub’s 1.x CLI and without effect: svc does not merge the timelines of a version set' },
});

/** The shapes of a timeline, DataHub's `ChangeTransaction` and `ChangeEvent`. */
export const TIMELINE_SCHEMAS: Obj = {
  ChangeEvent: {
    type: 'object',
    properties: {
      entityUrn: { type: 'string', description: 'What changed: the entity, or one of its fields (a schemaField URN)' },
      category: { enum: CHANGE_CATEGORIES },
      operation: { enum: ['ADD', 'MODIFY', 'REMOVE', 'CREATE', 'SOFT_DELETE', 'REINSTATE'] },
      modifier: { type: 'string', description: 'The thing added, removed or changed: a tag, term, owner, domain or property URN, a field URN, a link' },
      parameters: { type: 'object', additionalProperties: true, description: 'What the event says of it, by category (tagUrn, termUrn, ownerUrn and ownerType, domainUrn, propertyUrn and propertyValues, fieldPath, description, …)' },
      auditStamp: ref('AuditStamp'),
      semVerChange: { enum: SEMANTIC_CHANGES },
      description: { type: 'string' },
    },
    required: ['entityUrn', 'category', 'operation', 'auditStamp', 'semVerChange', 'description'],
  },
  ChangeTransaction: {
    type: 'object',
    properties: {
      timestamp: { type: 'integer', description: 'When the change was written (epoch milliseconds)' },
      actor: { type: 'string' },
      semVer: { type: 'string', description: 'The entity’s computed version after this change: 0.0.0-computed for the first of the timeline' },
      semVerChange: { enum: SEMANTIC_CHANGES },
      changeEvents: { type: 'array', items: ref('ChangeEvent') },
      versionStamp: { type: 'string', description: 'The version number of each aspect read, then: globalTags:2;ownership:1' },
      rawDiff: { type: 'array', items: { type: 'object', properties: { op: { type: 'string' }, path: { type: 'string' }, value: {} } }, description: 'With raw=true: a JSON Patch of the aspects changed, under their names' },
    },
    required: ['timestamp', 'actor', 'semVer', 'semVerChange', 'changeEvents', 'versionStamp'],
  },
};

/** The timeline route and its OpenAPI operation. */
export const TIMELINE_API = {
  getTimeline: {
    method: 'get',
    path: '/openapi/v2/timeline/v1/{urn}',
    tags: ['timeline'],
    summary: 'What changed in an entity, in the categories asked for: change transactions, oldest first (DataHub’s timeline API)',
    description:
      'Computed from consecutive versions of the aspects each category reads, the newest 1,000 of each aspect in the window. An entity that does not exist has no changes ([]); an unknown category is a 400 naming the categories.',
    parameters: [param('urn', 'path', { type: 'string' }, 'The entity’s URN, percent-encoded'), ...TIMELINE_QUERY.openapi()],
    responses: { '200': { description: 'The changes, oldest first', content: json({ type: 'array', items: ref('ChangeTransaction') }) }, ...errors },
  },
} satisfies Operations;

export function timelineRoutes(router: Router, timeline: TimelineService): void {
  serve(router, TIMELINE_API, {
    getTimeline: async (req, res) => {
      const q = TIMELINE_QUERY.parse(req);
      const categories = parseCategories(q.categories);
      sendJson(res, 200, await timeline.changes(principalOf(req), String(req.params.urn), { categories, startTime: q.startTime, endTime: q.endTime, raw: q.raw.toLowerCase() === 'true' }));
    },
  });
}
