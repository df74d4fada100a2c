/**
 * The project's CRDs (`crds/`) on the real kube-apiserver (`KUBECONFIG`): they install and become
 * Established, their defaults apply, their validation rules accept the short forms people write by
 * hand and reject invalid objects with the documented messages, every field has a description for
 * `kubectl explain`, and their short names clash with no built-in resource.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  PatchStrategy,
  loadYaml,
  setHeaderOptions,
  type V1CustomResourceDefinition,
  type V1JSONSchemaProps,
} from '@kubernetes/client-node';
import { applyCrd, kubeClients } from '../support/kubeClients.ts';

const { kc, extensions, objects } = kubeClients();

const crdDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');
const group = 'catalog.svc.dev';
const version = 'v1alpha1';
const namespace = 'default';
const apiVersion = `${group}/${version}`;
const props = { group, version, namespace, plural: 'structuredproperties' };
const jobs = { group, version, namespace, plural: 'truncationjobs' };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const run = `${process.pid}-${Date.now()}`;
let seq = 0;
const uniqueName = (prefix: string) => `${prefix}-${run}-${++seq}`;

// loadYaml turns the YAML into the client's model (`default` → `_default`, ...); a plain parse would
// be serialized without the fields the model names differently.
const crds = ['structuredproperties', 'truncationjobs'].map((plural) =>
  loadYaml<V1CustomResourceDefinition>(readFileSync(join(crdDir, `${plural}.${group}.yaml`), 'utf8')),
);

async function established(name: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const crd = await extensions.readCustomResourceDefinition({ name });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} not Established within 30 s`);
}

/** The HTTP status and the API server's message of a rejected request. */
async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body = typeof err.body === 'string' ? (JSON.parse(err.body) as { message?: string }) : err.body;
    return { code: err.code, message: String((body as { message?: string } | undefined)?.message ?? err.message) };
  }
  throw new Error('expected the API server to reject the request');
}

/** GET on the API server with the kubeconfig's credentials; `accept` picks e.g. the Table form. */
async function getJson<T>(path: string, accept = 'application/json'): Promise<T> {
  const cluster = kc.getCurrentCluster()!;
  const opts: RequestOptions = { method: 'GET', headers: { Accept: accept } };
  await kc.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, cluster.server), opts, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (data += chunk));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(JSON.parse(data) as T)
          : reject(new Error(`GET ${path}: ${res.statusCode} ${data}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Paths of the fields under `schema` that have no description, e.g. `spec.allowedValues[].stringValue`
 * (`[]` for an array's items). kubectl explain prints `<no description>` for each.
 */
function undescribed(schema: V1JSONSchemaProps, path = ''): string[] {
  const missing = path && !schema.description ? [path] : [];
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    missing.push(...undescribed(field, path ? `${path}.${name}` : name));
  }
  if (schema.items) missing.push(...undescribed(schema.items as V1JSONSchemaProps, `${path}[]`));
  return missing;
}

function property(spec: Record<string, unknown>, name = uniqueName('sp')) {
  return {
    apiVersion,
    kind: 'StructuredProperty',
    metadata: { name },
    spec: {
      qualifiedName: `io.svc.test.${name.replace(/-/g, '')}`,
      valueType: 'urn:li:dataType:svc.string',
      entityTypes: ['urn:li:entityType:svc.dataset'],
      ...spec,
    },
  };
}

function job(spec: Record<string, unknown>, name = uniqueName('tj')) {
  return {
    apiVersion,
    kind: 'TruncationJob',
    metadata: { name },
    spec: { entityType: 'dataset', aspect: 'datasetProfile', ...spec },
  };
}

type Obj = {
  metadata: { name: string; generation: number };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
};
const created: { ref: typeof props; name: string }[] = [];

async function createProperty(body: ReturnType<typeof property>): Promise<Obj> {
  const obj = (await objects.createNamespacedCustomObject({ ...props, body })) as Obj;
  created.push({ ref: props, name: obj.metadata.name });
  return obj;
}

async function createJob(body: ReturnType<typeof job>): Promise<Obj> {
  const obj = (await objects.createNamespacedCustomObject({ ...jobs, body })) as Obj;
  created.push({ ref: jobs, name: obj.metadata.name });
  return obj;
}

async function rejectedProperty(spec: Record<string, unknown>) {
  return rejection(objects.createNamespacedCustomObject({ ...props, body: property(spec) }));
}

async function rejectedJob(spec: Record<string, unknown>) {
  return rejection(objects.createNamespacedCustomObject({ ...jobs, body: job(spec) }));
}

describe('CRDs', () => {
  before(async () => {
    for (const crd of crds) await applyCrd(extensions, crd);
    for (const crd of crds) await established(crd.metadata!.name!);
    // Established can precede serving by a moment.
    const deadline = Date.now() + 30_000;
    for (const ref of [props, jobs]) {
      while (Date.now() < deadline) {
        try {
          await objects.listNamespacedCustomObject(ref);
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
  });

  after(async () => {
    for (const { ref, name } of created) {
      await objects.deleteNamespacedCustomObject({ ...ref, name }).catch(() => undefined);
    }
  });

  it('are structural, in group catalog.svc.dev v1alpha1, with a status subresource', () => {
    for (const crd of crds) {
      assert.equal(crd.spec.group, group);
      assert.deepEqual(
        crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources?.status !== undefined]),
        [[version, true, true, true]],
      );
    }
    assert.deepEqual(
      crds.map((c) => c.spec.names.kind),
      ['StructuredProperty', 'TruncationJob'],
    );
  });

  it('are accepted by the API server with their names', async () => {
    for (const crd of crds) {
      const live = await extensions.readCustomResourceDefinition({ name: crd.metadata!.name! });
      const names = live.status?.conditions?.find((c) => c.type === 'NamesAccepted');
      assert.equal(names?.status, 'True', names?.message);
      const nonStructural = live.status?.conditions?.find((c) => c.type === 'NonStructuralSchema');
      assert.equal(nonStructural, undefined, nonStructural?.message);
    }
  });

  it('use short names no built-in resource uses', async () => {
    type Resources = { resources: { name: string; shortNames?: string[] }[] };
    const taken = new Set<string>();
    const collect = (list: Resources) => {
      for (const r of list.resources) {
        if (r.name.includes('/')) continue;
        taken.add(r.name);
        for (const s of r.shortNames ?? []) taken.add(s);
      }
    };
    collect(await getJson<Resources>('/api/v1'));
    const groups = await getJson<{ groups: { name: string; preferredVersion: { groupVersion: string } }[] }>('/apis');
    for (const g of groups.groups) {
      if (g.name !== group) collect(await getJson<Resources>(`/apis/${g.preferredVersion.groupVersion}`));
    }
    const ours = crds.flatMap((c) => [...(c.spec.names.shortNames ?? []), c.spec.names.singular!]);
    assert.deepEqual(ours, ['sp', 'structuredproperty', 'tj', 'truncationjob']);
    for (const name of ours) assert.ok(!taken.has(name), `${name} is already a built-in resource name`);
    // The API server lists the short names for kubectl.
    const served = await getJson<Resources>(`/apis/${apiVersion}`);
    assert.deepEqual(
      served.resources
        .filter((r) => !r.name.includes('/'))
        .map((r) => [r.name, r.shortNames])
        .sort(),
      [
        ['structuredproperties', ['sp']],
        ['truncationjobs', ['tj']],
      ],
    );
  });

  it('describe every field', () => {
    const missing = crds.flatMap((crd) =>
      undescribed(crd.spec.versions[0]!.schema!.openAPIV3Schema!)
        // The API server refuses a description on metadata (only `type: object` is allowed there) and
        // publishes ObjectMeta's own; the next test checks that.
        .filter((path) => path !== 'metadata')
        .map((path) => `${crd.spec.names.kind} ${path}`),
    );
    assert.deepEqual(missing, []);
  });

  it('publish a description of every field for kubectl explain', async () => {
    type Published = { components: { schemas: Record<string, V1JSONSchemaProps> } };
    const kinds = crds.map((c) => c.spec.names.kind);
    const missing = async () => {
      const doc = await getJson<Published>(`/openapi/v3/apis/${apiVersion}`).catch(() => undefined);
      if (!doc) return [`/openapi/v3/apis/${apiVersion} (not published)`];
      return kinds.flatMap((kind) => {
        const schema = doc.components.schemas[`dev.svc.catalog.${version}.${kind}`];
        return schema ? undescribed(schema).map((path) => `${kind} ${path}`) : [`${kind} (not published)`];
      });
    };
    // The API server publishes the group version, and rebuilds it, a moment after a CRD changes.
    const deadline = Date.now() + 30_000;
    let last = await missing();
    while (last.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      last = await missing();
    }
    assert.deepEqual(last, []);
  });

  describe('StructuredProperty', () => {
    it('applies defaults: cardinality SINGLE, deletionPolicy Soft, immutable left unset', async () => {
      const obj = await createProperty(property({}));
      assert.equal(obj.spec.cardinality, 'SINGLE');
      assert.equal(obj.spec.deletionPolicy, 'Soft');
      assert.equal('immutable' in obj.spec, false);
    });

    it('keeps number and string allowed values as written', async () => {
      const numbers = await createProperty(
        property({
          valueType: 'urn:li:dataType:svc.number',
          cardinality: 'MULTIPLE',
          version: '20240614080000',
          allowedValues: [{ numberValue: 0.5, description: 'half' }, { numberValue: 30 }],
          deletionPolicy: 'Hard',
          immutable: true,
        }),
      );
      assert.deepEqual(numbers.spec.allowedValues, [{ numberValue: 0.5, description: 'half' }, { numberValue: 30 }]);
      assert.equal(numbers.spec.deletionPolicy, 'Hard');
      const strings = await createProperty(
        property({ allowedValues: [{ stringValue: 'PII' }, { stringValue: '30' }] }),
      );
      assert.deepEqual(strings.spec.allowedValues, [{ stringValue: 'PII' }, { stringValue: '30' }]);
    });

    it('rejects a version that is not 14 digits', async () => {
      for (const bad of ['2024061408', '2024061408000a', '2024.06.14.08']) {
        const { code, message } = await rejectedProperty({ version: bad });
        assert.equal(code, 422);
        assert.match(message, /spec\.version: Invalid value: .*version must be 14 digits \(yyyyMMddHHmmss\)/);
      }
    });

    it('rejects a qualifiedName with spaces', async () => {
      for (const bad of ['io.svc.has space', 'io.svc.tab\there']) {
        const { code, message } = await rejectedProperty({ qualifiedName: bad });
        assert.equal(code, 422);
        assert.match(message, /spec\.qualifiedName: Invalid value: .*qualifiedName must not contain spaces/);
      }
    });

    it('rejects a cardinality other than SINGLE or MULTIPLE, and an unknown deletionPolicy', async () => {
      const cardinality = await rejectedProperty({ cardinality: 'MANY' });
      assert.equal(cardinality.code, 422);
      assert.match(
        cardinality.message,
        /spec\.cardinality: Unsupported value: "MANY": supported values: "SINGLE", "MULTIPLE"/,
      );
      const policy = await rejectedProperty({ deletionPolicy: 'Later' });
      assert.match(
        policy.message,
        /spec\.deletionPolicy: Unsupported value: "Later": supported values: "Soft", "Hard", "Orphan"/,
      );
    });

    it('accepts the short forms of valueType and entityTypes the server accepts', async () => {
      const numbers = await createProperty(
        property({
          valueType: 'number',
          entityTypes: ['dataset', 'dataFlow'],
          allowedValues: [{ numberValue: 30 }, { numberValue: 90 }],
        }),
      );
      assert.equal(numbers.spec.valueType, 'number');
      assert.deepEqual(numbers.spec.entityTypes, ['dataset', 'dataFlow']);
      const numberForms = ['NUMBER', 'urn:li:dataType:number', 'urn:li:dataType:NUMBER', 'urn:li:dataType:svc.number'];
      for (const valueType of numberForms) {
        const obj = await createProperty(property({ valueType, allowedValues: [{ numberValue: 1 }] }));
        assert.equal(obj.spec.valueType, valueType);
      }
      const entityTypes = ['urn:li:entityType:dataset', 'urn:li:entityType:svc.dataFlow', 'DATASET'];
      const urns = await createProperty(property({ valueType: 'urn:li:dataType:number', entityTypes }));
      assert.deepEqual(urns.spec.entityTypes, entityTypes);
      const strings = await createProperty(
        property({ valueType: 'string', allowedValues: [{ stringValue: 'PII' }] }),
      );
      assert.equal(strings.spec.valueType, 'string');
    });

    it('rejects valueType and entityTypes that are neither type URNs nor short forms', async () => {
      for (const valueType of ['not a type!', 'urn:li:dataType:', 'urn:li:entityType:svc.dataset', 'svc:number']) {
        const { code, message } = await rejectedProperty({ valueType });
        assert.equal(code, 422, valueType);
        assert.match(
          message,
          /spec\.valueType: Invalid value: .*valueType must be a data type such as number or urn:li:dataType:svc.number/,
          valueType,
        );
      }
      for (const entityType of ['urn:li:dataset:x', 'data set', 'urn:li:entityType:', 'urn:li:dataType:svc.string']) {
        const { code, message } = await rejectedProperty({ entityTypes: ['dataset', entityType] });
        assert.equal(code, 422, entityType);
        assert.match(
          message,
          new RegExp(
            'spec\\.entityTypes\\[1\\]: Invalid value: .*' +
              'each entityTypes item must be an entity type such as dataset or urn:li:entityType:svc\\.dataset',
          ),
          entityType,
        );
      }
      const none = await rejectedProperty({ entityTypes: [] });
      assert.match(none.message, /spec\.entityTypes: Invalid value: .*should have at least 1 items/);
    });

    it('rejects allowed values that give both or neither of stringValue and numberValue, or the wrong one', async () => {
      const both = await rejectedProperty({ allowedValues: [{ stringValue: 'a', numberValue: 1 }] });
      assert.match(
        both.message,
        /spec\.allowedValues\[0\]: Invalid value: .*exactly one of stringValue or numberValue/,
      );
      const neither = await rejectedProperty({ allowedValues: [{ description: 'no value' }] });
      assert.match(neither.message, /exactly one of stringValue or numberValue/);
      const numberTypes = [
        'number',
        'NUMBER',
        'svc.number',
        'urn:li:dataType:number',
        'urn:li:dataType:NUMBER',
        'urn:li:dataType:svc.number',
        'urn:li:dataType:svc.Number',
      ];
      for (const valueType of numberTypes) {
        const wrong = await rejectedProperty({ valueType, allowedValues: [{ stringValue: '1' }] });
        assert.equal(wrong.code, 422, valueType);
        assert.match(
          wrong.message,
          /spec: Invalid value: .*allowedValues of a number property must use numberValue/,
          valueType,
        );
      }
      for (const valueType of ['urn:li:dataType:svc.string', 'string', 'date', 'urn:li:dataType:svc.numbers']) {
        const wrongString = await rejectedProperty({ valueType, allowedValues: [{ numberValue: 1 }] });
        assert.match(
          wrongString.message,
          /allowedValues of a number property must use numberValue; of any other type, stringValue/,
          valueType,
        );
      }
    });

    it('refuses to change qualifiedName but accepts other changes', async () => {
      const obj = await createProperty(property({}));
      const changed = await rejection(
        objects.patchNamespacedCustomObject(
          { ...props, name: obj.metadata.name, body: { spec: { qualifiedName: 'io.svc.other' } } },
          merge,
        ),
      );
      assert.equal(changed.code, 422);
      assert.match(changed.message, /spec\.qualifiedName: Invalid value: .*qualifiedName is immutable/);
      const updated = (await objects.patchNamespacedCustomObject(
        { ...props, name: obj.metadata.name, body: { spec: { displayName: 'Retention', cardinality: 'MULTIPLE' } } },
        merge,
      )) as Obj;
      assert.equal(updated.spec.displayName, 'Retention');
      assert.equal(updated.metadata.generation, 2);
    });

    it('takes status through the subresource and shows it in the printer columns', async () => {
      const obj = await createProperty(property({ version: '20250101000000' }));
      const urn = `urn:li:structuredProperty:${String(obj.spec.qualifiedName)}`;
      const entityTypes = ['urn:li:entityType:svc.dataset', 'urn:li:entityType:svc.dataFlow'];
      const written = (await objects.patchNamespacedCustomObjectStatus(
        {
          ...props,
          name: obj.metadata.name,
          body: {
            status: {
              observedGeneration: 1,
              urn,
              valueType: 'urn:li:dataType:svc.string',
              entityTypes,
              version: '20250101000000',
              lastSyncTime: '2026-01-01T00:00:00Z',
              conditions: [
                {
                  type: 'Ready',
                  status: 'True',
                  reason: 'Synced',
                  message: 'the server holds this definition',
                  lastTransitionTime: '2026-01-01T00:00:00Z',
                  observedGeneration: 1,
                },
              ],
            },
          },
        },
        merge,
      )) as Obj;
      assert.equal(written.status?.valueType, 'urn:li:dataType:svc.string');
      assert.deepEqual(written.status?.entityTypes, entityTypes);
      const badCondition = await rejection(
        objects.patchNamespacedCustomObjectStatus(
          {
            ...props,
            name: obj.metadata.name,
            body: {
              status: {
                conditions: [
                  {
                    type: 'Ready',
                    status: 'Maybe',
                    reason: 'x',
                    message: '',
                    lastTransitionTime: '2026-01-01T00:00:00Z',
                  },
                ],
              },
            },
          },
          merge,
        ),
      );
      assert.match(badCondition.message, /status\.conditions\[0\]\.status: Unsupported value: "Maybe"/);

      type Table = { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
      const table = await getJson<Table>(
        `/apis/${apiVersion}/namespaces/${namespace}/structuredproperties/${obj.metadata.name}`,
        'application/json;as=Table;v=v1;g=meta.k8s.io',
      );
      const columns = table.columnDefinitions.map((c) => c.name);
      assert.deepEqual(columns, [
        'Name',
        'Qualified Name',
        'Value Type',
        'Cardinality',
        'Version',
        'Ready',
        'URN',
        'Deletion',
        'Age',
      ]);
      const cells = table.rows[0]!.cells;
      assert.deepEqual(cells.slice(0, 8), [
        obj.metadata.name,
        obj.spec.qualifiedName,
        'urn:li:dataType:svc.string',
        'SINGLE',
        '20250101000000',
        'True',
        urn,
        'Soft',
      ]);
    });
  });

  describe('TruncationJob', () => {
    it('shows the next run as the time it is, not as a date column (kubectl prints a time to come as <invalid>)', async () => {
      const obj = await createJob(job({ olderThan: '30d', schedule: '@hourly' }));
      type Table = { columnDefinitions: { name: string; type: string }[]; rows: { cells: unknown[] }[] };
      const table = await getJson<Table>(`/apis/${apiVersion}/namespaces/${namespace}/truncationjobs/${obj.metadata.name}`, 'application/json;as=Table;v=v1;g=meta.k8s.io');
      const nextRun = table.columnDefinitions.find((c) => c.name === 'Next Run');
      assert.equal(nextRun?.type, 'string');
    });

    it('applies defaults: dryRun true, batchSize 10000', async () => {
      const obj = await createJob(job({ olderThan: '30d' }));
      assert.equal(obj.spec.dryRun, true);
      assert.equal(obj.spec.batchSize, 10000);
      assert.equal('timeoutSeconds' in obj.spec, false);
      assert.equal('schedule' in obj.spec, false);
    });

    it('accepts a fixed cut-off run once and a relative one on a schedule of five or six fields', async () => {
      const once = await createJob(
        job({ endTimeMillis: 1_718_352_000_000, dryRun: false, batchSize: 500, timeoutSeconds: 600 }),
      );
      assert.equal(once.spec.endTimeMillis, 1_718_352_000_000);
      assert.equal(once.spec.dryRun, false);
      for (const schedule of ['0 3 * * *', '*/15 * * * 1-5', '@daily', '*/5 * * * * *', '30 0 3 * * 1-5', '0 3 * JAN,JUL MON-FRI']) {
        const scheduled = await createJob(job({ olderThan: '720h', schedule }));
        assert.equal(scheduled.spec.schedule, schedule);
      }
    });

    it('requires exactly one of olderThan and endTimeMillis', async () => {
      for (const spec of [{}, { olderThan: '30d', endTimeMillis: 1 }]) {
        const { code, message } = await rejectedJob(spec);
        assert.equal(code, 422);
        assert.match(message, /spec: Invalid value: .*exactly one of olderThan or endTimeMillis must be set/);
      }
    });

    it('takes the ages the CLI’s --older-than takes (one grammar, contract/olderThan.ts)', async () => {
      for (const olderThan of ['30 days', '1y', '2 weeks', '90m']) assert.equal((await createJob(job({ olderThan }))).spec.olderThan, olderThan);
    });

    it('rejects malformed durations, schedules and batch sizes', async () => {
      for (const olderThan of ['0d', '1.5h', 'P30D', '1M', '30D', '1 month']) {
        assert.match(
          (await rejectedJob({ olderThan })).message,
          /olderThan must be a positive whole number followed by s, m, h, d or w/,
        );
      }
      for (const schedule of ['every day', '0 3 * *', '0 0 3 * * * 2026', '@sometimes', 'CRON_TZ=UTC 0 3 * * *', 'TZ=Europe/Paris 0 3 * * *', '0 3 ? * *', '0 3 * * 1#2', '@annually', '@midnight']) {
        const { code, message } = await rejectedJob({ olderThan: '1d', schedule });
        assert.equal(code, 422, schedule);
        assert.match(
          message,
          new RegExp(
            'spec\\.schedule: Invalid value: .*' +
              'schedule must be a cron expression with five fields, or six with a leading seconds field, or @hourly',
          ),
          schedule,
        );
      }
      assert.match(
        (await rejectedJob({ endTimeMillis: 5, schedule: '@daily' })).message,
        /a scheduled TruncationJob needs olderThan, not a fixed endTimeMillis/,
      );
      assert.match(
        (await rejectedJob({ olderThan: '1d', batchSize: 0 })).message,
        /spec\.batchSize: Invalid value: 0: spec\.batchSize in body should be greater than or equal to 1/,
      );
      assert.match((await rejectedJob({ olderThan: '1d', entityType: '' })).message, /spec\.entityType/);
    });

    it('takes status through the subresource', async () => {
      const obj = await createJob(job({ olderThan: '7d', schedule: '@hourly', dryRun: false }));
      const status = {
        observedGeneration: 1,
        taskId: 'node-1:42',
        counts: { total: 201, toDelete: 10, deleted: 10 },
        lastRun: {
          startTime: '2026-01-01T00:00:00Z',
          completionTime: '2026-01-01T00:00:02Z',
          endTimeMillis: 1_767_225_600_000,
          dryRun: false,
          message: 'Delete 10 out of 201 rows (4.98%). ',
        },
        nextRun: '2026-01-01T01:00:00Z',
      };
      const written = (await objects.patchNamespacedCustomObjectStatus(
        { ...jobs, name: obj.metadata.name, body: { status } },
        merge,
      )) as Obj;
      assert.deepEqual(written.status, status);
      assert.equal(written.metadata.generation, 1);
    });
  });
});
