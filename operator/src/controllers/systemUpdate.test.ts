import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { JOB_SETTINGS_ANNOTATION, jobNameOf, jobSettingsOf } from './systemUpdate.ts';

const withSettings = (raw: string | undefined): V1Deployment => ({ metadata: { name: 'svc', annotations: raw === undefined ? {} : { [JOB_SETTINGS_ANNOTATION]: raw } } });

test('the Job name cannot be a hook Job\'s, and stays within 63 characters', () => {
  assert.equal(jobNameOf('rel-svc', '3'), 'rel-svc-system-update-op-3');
  const long = jobNameOf('a'.repeat(60), '12');
  assert.equal(long.length, 63);
  assert.match(long, /^a+-system-update-op-12$/);
});

test('the settings take the chart\'s values, and its defaults without the annotation', () => {
  assert.deepEqual(jobSettingsOf(withSettings(undefined)), { backoffLimit: 3, activeDeadlineSeconds: 1800 });
  assert.deepEqual(jobSettingsOf(withSettings('{"backoffLimit":0,"activeDeadlineSeconds":600,"ttlSecondsAfterFinished":null,"resources":{"limits":{"memory":"1Gi"}}}')), {
    backoffLimit: 0,
    activeDeadlineSeconds: 600,
    ttlSecondsAfterFinished: undefined,
    resources: { limits: { memory: '1Gi' } },
  });
  assert.equal(jobSettingsOf(withSettings('{"ttlSecondsAfterFinished":86400}')).ttlSecondsAfterFinished, 86400);
});

test('bad settings are refused, naming every bad field', () => {
  for (const raw of ['backoffLimit: 3', '3', '[]', 'null']) assert.throws(() => jobSettingsOf(withSettings(raw)), /catalog\.svc\.dev\/system-update-job must be a JSON object/);
  assert.throws(() => jobSettingsOf(withSettings('{"backoffLimit":-1,"activeDeadlineSeconds":"1h","resources":[]}')), (err: Error) => {
    assert.match(err.message, /backoffLimit must be an integer of at least 0, got -1/);
    assert.match(err.message, /activeDeadlineSeconds must be an integer of at least 1, got "1h"/);
    assert.match(err.message, /resources must be an object/);
    return true;
  });
});
