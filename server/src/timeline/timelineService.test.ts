import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AspectHistory, EntityService, StoredAspect } from '../entities/entityService.ts';
import { SYSTEM } from '../auth/authorize.ts';
import { SvcError } from '../shared/errors.ts';
import { DEFAULT_LOOKBACK_MS, TimelineService } from './timelineService.ts';

const URN = 'urn:li:dataset:(urn:li:dataPlatform:hive,t,PROD)';
const NOW = 10 * DEFAULT_LOOKBACK_MS;

const version = (aspect: string, number: number, time: number, value: unknown): StoredAspect => ({ urn: URN, aspect, version: number, number, value, systemMetadata: {}, createdOn: new Date(time), createdBy: `urn:li:corpuser:w${number}` });

/** A timeline over a fixed history; `asked` records the window each read asked for. */
function timelineOver(history: Record<string, AspectHistory>) {
  const asked: { aspects: string[]; from: number; to: number }[] = [];
  const entities = {
    history: async (_p: unknown, _t: unknown, aspects: string[], from: Date, to: Date) => {
      asked.push({ aspects, from: from.getTime(), to: to.getTime() });
      return new Map(Object.entries(history).filter(([a]) => aspects.includes(a)));
    },
  } as unknown as EntityService;
  return { timeline: new TimelineService(entities, () => NOW), asked };
}

const tags = (...t: string[]) => ({ tags: t.map((tag) => ({ tag })) });

test('aspects one write changed share a transaction; versions rise by the highest change of each; stamps name each aspect\'s version then', async () => {
  const { timeline } = timelineOver({
    globalTags: { before: version('globalTags', 1, NOW - 5_000, tags('urn:li:tag:a')), changes: [version('globalTags', 2, NOW - 3_000, tags('urn:li:tag:a', 'urn:li:tag:b')), version('globalTags', 3, NOW - 1_000, tags())] },
    ownership: { before: undefined, changes: [version('ownership', 1, NOW - 3_000, { owners: [{ owner: 'urn:li:corpuser:o', type: 'DATAOWNER' }] })] },
    status: { before: undefined, changes: [version('status', 1, NOW - 2_000, { removed: true })] },
  });
  const txs = await timeline.changes(SYSTEM, URN, { categories: ['TAG', 'OWNERSHIP', 'LIFECYCLE'], raw: false });
  assert.deepEqual(
    txs.map((t) => [t.timestamp, t.actor, t.semVer, t.semVerChange, t.versionStamp, t.changeEvents.map((e) => `${e.category} ${e.operation} ${e.modifier ?? ''}`)]),
    [
      [NOW - 3_000, 'urn:li:corpuser:w2', '0.0.0-computed', 'MINOR', 'globalTags:2;ownership:1', ['TAG ADD urn:li:tag:b', 'OWNERSHIP ADD urn:li:corpuser:o']],
      [NOW - 2_000, 'urn:li:corpuser:w1', '1.0.0-computed', 'MAJOR', 'globalTags:2;ownership:1;status:1', ['LIFECYCLE SOFT_DELETE ']],
      [NOW - 1_000, 'urn:li:corpuser:w3', '1.1.0-computed', 'MINOR', 'globalTags:3;ownership:1;status:1', ['TAG REMOVE urn:li:tag:a', 'TAG REMOVE urn:li:tag:b']],
    ],
  );
});

test('the window: a week back from now by default (-1 and 0 as absent); the end\'s millisecond included; a start after the end refused', async () => {
  const { timeline, asked } = timelineOver({});
  await timeline.changes(SYSTEM, URN, { categories: ['TAG'], raw: false });
  await timeline.changes(SYSTEM, URN, { categories: ['TAG'], startTime: -1, endTime: 0, raw: false });
  await timeline.changes(SYSTEM, URN, { categories: ['TAG'], startTime: 5, endTime: 9, raw: false });
  await timeline.changes(SYSTEM, URN, { categories: ['TAG'], startTime: -Number.MAX_SAFE_INTEGER, endTime: Number.MAX_SAFE_INTEGER, raw: false });
  assert.deepEqual(asked.map((a) => [a.from, a.to]), [
    [NOW - DEFAULT_LOOKBACK_MS, NOW + 1],
    [NOW - DEFAULT_LOOKBACK_MS, NOW + 1],
    [5, 10],
    [0, 8.64e15],
  ]);
  assert.deepEqual(asked[0]!.aspects, ['globalTags', 'schemaMetadata', 'editableSchemaMetadata']);
  await assert.rejects(timeline.changes(SYSTEM, URN, { categories: ['TAG'], startTime: 10, endTime: 9, raw: false }), (e: unknown) => e instanceof SvcError && e.code === 'VALIDATION');
  await assert.rejects(timeline.changes(SYSTEM, 'urn:li:nope', { categories: ['TAG'], raw: false }), (e: unknown) => e instanceof SvcError && e.code === 'INVALID_URN');
});
