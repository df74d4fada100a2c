import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { ageMillis, cutoffMillis, OLDER_THAN_PATTERN } from './olderThan.ts';

const DAY = 86_400_000;
const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('olderThan', () => {
  test('reads a whole number and a unit, short or written out, with or without a space', () => {
    const cases: [string, number][] = [
      ['30d', 30 * DAY],
      ['720h', 720 * 3_600_000],
      ['90 days', 90 * DAY],
      ['1 day', DAY],
      ['2w', 14 * DAY],
      ['1 week', 7 * DAY],
      ['1y', 365.25 * DAY],
      ['2 years', 2 * 365.25 * DAY],
      ['45 minutes', 45 * 60_000],
      ['90m', 90 * 60_000],
      ['10s', 10_000],
      ['3 hrs', 3 * 3_600_000],
    ];
    for (const [text, millis] of cases) assert.equal(ageMillis(text), millis, text);
  });

  test('refuses what could be read two ways, or none', () => {
    for (const text of ['', 'soon', '90', '0d', '030d', '1.5h', '0.5ms', '1M', '30D', '1 month', '1mo', 'P30D', ' 30d', '30d ', '30  days', '-1d', '1000000000000d']) {
      assert.equal(ageMillis(text), undefined, text);
    }
  });

  test('the cut-off is the age before now, undefined when it goes back further than a time can be written', () => {
    assert.equal(cutoffMillis('1d', 10 * DAY), 9 * DAY);
    assert.equal(cutoffMillis('1 week', 0), -7 * DAY);
    assert.equal(cutoffMillis('bogus', 0), undefined);
    assert.equal(cutoffMillis('285000y', -1e14), undefined);
  });

  test('the TruncationJob CRD validates spec.olderThan with the same pattern (crds/ and the chart’s copy)', () => {
    for (const file of ['crds/truncationjobs.catalog.svc.dev.yaml', 'charts/svc/crds/truncationjobs.catalog.svc.dev.yaml']) {
      const crd = parse(readFileSync(join(ROOT, file), 'utf8'));
      const olderThan = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.olderThan;
      assert.deepEqual(
        olderThan['x-kubernetes-validations'].map((v: { rule: string }) => v.rule),
        [`self.matches('${OLDER_THAN_PATTERN}')`],
        file,
      );
    }
  });
});
