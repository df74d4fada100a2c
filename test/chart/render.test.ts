/**
 * The Helm chart rendered with `helm template` for the default values and each profile (the bundled
 * Postgres, OpenSearch, operator mode, the Argo CD profile, one watched namespace): the objects and
 * the fields that matter, hook annotations from values, no hooks in operator mode, the CRDs identical
 * to `crds/`, `helm lint`, and the values schema rejecting bad values with a message naming them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { JOB_SETTINGS_ANNOTATION, SYSTEM_UPDATE_COMMAND } from '../../operator/src/controllers/systemUpdate.ts';
import { CHART, ROOT, envOf, find, helm, render, type Manifest } from '../support/chart.ts';

const DB = ['--set', 'database.existingSecret=db'];
const HOOK = 'helm.sh/hook';
const kinds = (docs: Manifest[]) => docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
const container = (d: Manifest, name?: string) => (d.spec.template.spec.containers as any[]).find((c) => !name || c.name === name);

describe('helm lint', () => {
  const profiles: [string, string[]][] = [
    ['an external database', DB],
    ['the Argo CD profile', [...DB, '-f', join(CHART, 'values-argocd.yaml')]],
    ['operator mode', [...DB, '--set', 'systemUpdate.mode=operator']],
    ['the bundled Postgres', ['--set', 'postgresql.enabled=true']],
    ['the Argo CD profile and the bundled Postgres', ['-f', join(CHART, 'values-argocd.yaml'), '--set', 'postgresql.enabled=true', '--set', 'postgresql.existingSecret=pg']],
  ];
  for (const [name, profile] of profiles) {
    test(`is clean (strict) with ${name}`, async () => {
      const out = await helm('lint', CHART, '--strict', ...profile);
      assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.doesNotMatch(out, /\[(ERROR|WARNING)\]/);
    });
  }
});

describe('default values (an external database)', () => {
  test('render the server, the operator with its RBAC, the admin-token Secret and the hook Job', async () => {
    const docs = await render(DB);
    assert.deepEqual(kinds(docs), [
      'ClusterRole/catalog-rel-svc-operator',
      'ClusterRoleBinding/catalog-rel-svc-operator',
      'Deployment/rel-svc',
      'Deployment/rel-svc-operator',
      'Job/rel-svc-system-update-1',
      'PodDisruptionBudget/rel-svc',
      'Role/rel-svc-operator-local',
      'RoleBinding/rel-svc-operator-local',
      'Secret/rel-svc-admin-token',
      'Service/rel-svc',
      'ServiceAccount/rel-svc-operator',
    ]);
    for (const d of docs) if (!d.kind.startsWith('Cluster')) assert.equal(d.metadata.namespace, 'catalog', `${d.kind}/${d.metadata.name}`);
  });

  test('the server: probes on /health and /ready, resources, non-root read-only, the database from its Secret', async () => {
    const docs = await render(DB);
    const server = find(docs, 'Deployment', 'rel-svc');
    const pod = server.spec.template.spec;
    const c = container(server, 'svc');
    assert.equal(c.image, 'ghcr.io/svc-dev/svc:0.1.0');
    assert.equal(c.livenessProbe.httpGet.path, '/health');
    assert.equal(c.readinessProbe.httpGet.path, '/ready');
    // A slow start is not a dead process: liveness waits for the startup probe (up to 5 minutes).
    assert.equal(c.startupProbe.httpGet.path, '/health');
    assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 300);
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    assert.deepEqual(c.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]);
    const env = envOf(c);
    assert.equal(env.DATABASE_URL, 'secret:db/DATABASE_URL');
    assert.equal(env.SVC_ADMIN_TOKEN, 'secret:rel-svc-admin-token/token');
    assert.equal(env.SEARCH_BACKEND, 'postgres');
    assert.equal(env.OPENSEARCH_URL, undefined);
    const service = find(docs, 'Service', 'rel-svc');
    assert.deepEqual(service.spec.selector, server.spec.selector.matchLabels);
    assert.deepEqual(find(docs, 'PodDisruptionBudget', 'rel-svc').spec.selector.matchLabels, server.spec.selector.matchLabels);
    assert.equal(find(docs, 'Secret', 'rel-svc-admin-token').metadata.annotations!['helm.sh/resource-policy'], 'keep');
    assert.equal(Buffer.from(find(docs, 'Secret', 'rel-svc-admin-token').data.token, 'base64').toString().length, 48);
  });

  test('the system-update Job: a pre-install,pre-upgrade hook per revision, bounded, without the admin token', async () => {
    const job = find(await render([...DB, '--set', 'systemUpdate.structuredProperties=false']), 'Job', 'rel-svc-system-update-1');
    assert.deepEqual(job.metadata.annotations, { [HOOK]: 'pre-install,pre-upgrade', 'helm.sh/hook-weight': '-5', 'helm.sh/hook-delete-policy': 'before-hook-creation' });
    assert.equal(job.spec.backoffLimit, 3);
    assert.equal(job.spec.activeDeadlineSeconds, 1800);
    assert.equal(job.spec.ttlSecondsAfterFinished, undefined, 'kept for its logs');
    assert.equal(job.spec.template.spec.restartPolicy, 'Never');
    const c = container(job);
    // The same command the operator gives the Jobs it creates in operator mode.
    assert.deepEqual(c.command, SYSTEM_UPDATE_COMMAND);
    const env = envOf(c);
    assert.equal(env.DATABASE_URL, 'secret:db/DATABASE_URL');
    assert.equal(env.ENABLE_STRUCTURED_PROPERTIES_SYSTEM_UPDATE, 'false');
    assert.equal(env.SVC_ADMIN_TOKEN, undefined, 'a pre-install hook runs before the release Secrets exist');
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  });

  test('the operator: the server URL and token, a Lease, least-privilege rules, no system-update Jobs in hook mode', async () => {
    const docs = await render(DB);
    const op = find(docs, 'Deployment', 'rel-svc-operator');
    assert.equal(op.spec.template.spec.serviceAccountName, 'rel-svc-operator');
    const c = container(op, 'operator');
    assert.deepEqual(c.command, ['node', 'dist/operator/src/main.js']);
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.startupProbe.httpGet.path, '/healthz');
    assert.ok(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold >= 300);
    const env = envOf(c);
    assert.equal(env.SVC_GMS_URL, 'http://rel-svc.catalog.svc:8080');
    assert.equal(env.SVC_GMS_TOKEN, 'secret:rel-svc-admin-token/token');
    assert.equal(env.SVC_OPERATOR_POD_NAMESPACE, 'field:metadata.namespace');
    assert.equal(env.SVC_OPERATOR_LEASE_NAME, 'rel-svc-operator');
    assert.equal(env.SVC_OPERATOR_NAMESPACE, undefined, 'every namespace');
    assert.equal(env.SVC_OPERATOR_SERVER_DEPLOYMENT, undefined);
    assert.deepEqual(find(docs, 'ClusterRole', 'catalog-rel-svc-operator').rules, [
      { apiGroups: ['catalog.svc.dev'], resources: ['structuredproperties', 'truncationjobs'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: ['catalog.svc.dev'], resources: ['structuredproperties/status', 'truncationjobs/status'], verbs: ['get', 'patch'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
    ]);
    assert.deepEqual(find(docs, 'Role', 'rel-svc-operator-local').rules, [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
    ]);
    const binding = find(docs, 'ClusterRoleBinding', 'catalog-rel-svc-operator');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'rel-svc-operator', namespace: 'catalog' }]);
  });

  test('without any database the render fails saying what to set', async () => {
    await assert.rejects(render(), /no database: set database\.existingSecret .*or postgresql\.enabled=true/);
  });
});

describe('values', () => {
  test('hook annotations come from values: one overridden, one dropped with an empty string, one added', async () => {
    const job = find(
      await render([...DB, '--set', 'systemUpdate.hook.annotations.helm\\.sh/hook-weight=7', '--set', 'systemUpdate.hook.annotations.helm\\.sh/hook-delete-policy=', '--set', 'systemUpdate.hook.annotations.team=data']),
      'Job',
      'rel-svc-system-update-1',
    );
    assert.deepEqual(job.metadata.annotations, { [HOOK]: 'pre-install,pre-upgrade', 'helm.sh/hook-weight': '7', team: 'data' });
  });

  test('the Job is keyed by the release revision, and its limits come from values', async () => {
    const docs = await render([...DB, '--set', 'systemUpdate.backoffLimit=1', '--set', 'systemUpdate.activeDeadlineSeconds=600', '--set', 'systemUpdate.ttlSecondsAfterFinished=86400']);
    const job = find(docs, 'Job', 'rel-svc-system-update-1');
    assert.equal(job.metadata.labels!['catalog.svc.dev/revision'], '1');
    assert.deepEqual([job.spec.backoffLimit, job.spec.activeDeadlineSeconds, job.spec.ttlSecondsAfterFinished], [1, 600, 86400]);
  });

  test('operator mode: no hooks at all; the operator gets the server Deployment and Job rights', async () => {
    const docs = await render([...DB, '--set', 'systemUpdate.mode=operator']);
    assert.deepEqual(
      docs.filter((d) => Object.keys(d.metadata.annotations ?? {}).some((k) => k.startsWith('helm.sh/hook'))).map((d) => d.metadata.name),
      [],
    );
    assert.equal(docs.filter((d) => d.kind === 'Job').length, 0);
    const env = envOf(container(find(docs, 'Deployment', 'rel-svc-operator')));
    assert.equal(env.SVC_OPERATOR_SERVER_DEPLOYMENT, 'rel-svc');
    assert.equal(env.SVC_OPERATOR_RELEASE, 'rel-svc');
    const rules = find(docs, 'Role', 'rel-svc-operator-local').rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    assert.deepEqual(rules.find((r) => r.apiGroups[0] === 'apps'), { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] });
    assert.deepEqual(rules.find((r) => r.apiGroups[0] === 'batch'), { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] });
  });

  test('operator mode: the systemUpdate values reach the operator on the server Deployment, without a rollout', async () => {
    const docs = await render([...DB, '--set', 'systemUpdate.mode=operator', '--set', 'systemUpdate.backoffLimit=1', '--set', 'systemUpdate.ttlSecondsAfterFinished=86400', '--set', 'server.deploymentAnnotations.team=data']);
    const server = find(docs, 'Deployment', 'rel-svc');
    assert.equal(server.metadata.annotations!.team, 'data');
    assert.deepEqual(JSON.parse(server.metadata.annotations![JOB_SETTINGS_ANNOTATION]!), {
      backoffLimit: 1,
      activeDeadlineSeconds: 1800,
      ttlSecondsAfterFinished: 86400,
      resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
    });
    assert.equal(server.spec.template.metadata.annotations, undefined, 'not on the pod template: changing them rolls nothing out');
    assert.equal(find(await render(DB), 'Deployment', 'rel-svc').metadata.annotations, undefined, 'hook mode');
  });

  test('operator mode without the operator fails to render, saying what to set', async () => {
    await assert.rejects(render([...DB, '--set', 'systemUpdate.mode=operator', '--set', 'operator.enabled=false']), /systemUpdate\.mode=operator needs the operator.*set operator\.enabled=true, or systemUpdate\.mode=hook/);
  });

  test('the Argo CD profile: Secrets first, the Job as a Sync hook in its wave, then the server and the operator', async () => {
    const docs = await render([...DB, '-f', join(CHART, 'values-argocd.yaml')]);
    const wave = (d: Manifest) => d.metadata.annotations?.['argocd.argoproj.io/sync-wave'];
    const job = find(docs, 'Job', 'rel-svc-system-update-1');
    assert.deepEqual(job.metadata.annotations, {
      'argocd.argoproj.io/hook': 'Sync',
      'argocd.argoproj.io/sync-wave': '-1',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    assert.equal(wave(find(docs, 'Deployment', 'rel-svc')), '0');
    assert.equal(wave(find(docs, 'Deployment', 'rel-svc-operator')), '1');
    // helm template cannot look up a Secret: the token comes from one of the user's.
    assert.equal(docs.filter((d) => d.kind === 'Secret').length, 0);
    assert.equal(envOf(container(find(docs, 'Deployment', 'rel-svc'))).SVC_ADMIN_TOKEN, 'secret:svc-admin-token/token');
    const withPostgres = await render(['-f', join(CHART, 'values-argocd.yaml'), '--set', 'postgresql.enabled=true', '--set', 'postgresql.password=s3cret']);
    assert.equal(wave(find(withPostgres, 'Secret', 'rel-svc-postgresql')), '-2');
    assert.equal(wave(find(withPostgres, 'StatefulSet', 'rel-svc-postgresql')), '-2');
    // Its Service too: the Job of wave -1 connects through it.
    assert.equal(wave(find(withPostgres, 'Service', 'rel-svc-postgresql')), '-2');
  });

  test('the Argo CD profile with the bundled Postgres renders the same twice: the password comes from a Secret of the user\'s', async () => {
    const argo = ['-f', join(CHART, 'values-argocd.yaml'), '--set', 'postgresql.enabled=true'];
    // lookup finds nothing there: a generated password would differ on each render and Postgres keeps its first one.
    await assert.rejects(render(argo), /generateSecrets is false .* set postgresql\.existingSecret .*or set postgresql\.password/);
    const withSecret = [...argo, '--set', 'postgresql.existingSecret=pg', '--set', 'postgresql.existingSecretKey=pw'];
    const text = () => helm('template', 'rel', CHART, '--namespace', 'catalog', ...withSecret);
    assert.equal(await text(), await text());
    const docs = await render(withSecret);
    assert.equal(docs.filter((d) => d.kind === 'Secret').length, 0);
    assert.equal(envOf(container(find(docs, 'StatefulSet', 'rel-svc-postgresql'))).POSTGRES_PASSWORD, 'secret:pg/pw');
    for (const d of [find(docs, 'Deployment', 'rel-svc'), find(docs, 'Job', 'rel-svc-system-update-1')]) {
      const env = envOf(container(d));
      assert.deepEqual([env.DATABASE_URL, env.PGPASSWORD], ['postgres://svc@rel-svc-postgresql:5432/svc', 'secret:pg/pw']);
    }
  });

  test('generateSecrets false (as in the Argo CD profile) refuses to generate an admin token', async () => {
    await assert.rejects(render([...DB, '--set', 'generateSecrets=false']), /generateSecrets is false .* set auth\.adminToken\.existingSecret/);
    await assert.rejects(render([...DB, '-f', join(CHART, 'values-argocd.yaml'), '--set', 'auth.adminToken.existingSecret=']), /no admin token is given/);
  });

  test('the bundled Postgres: a StatefulSet, its Secret with the connection string, and a post-install hook', async () => {
    const docs = await render(['--set', 'postgresql.enabled=true', '--set', 'postgresql.password=s3cret']);
    const sts = find(docs, 'StatefulSet', 'rel-svc-postgresql');
    assert.equal(sts.spec.replicas, 1);
    assert.equal(container(sts).image, 'postgres:15');
    assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, '8Gi');
    const secret = find(docs, 'Secret', 'rel-svc-postgresql');
    assert.equal(Buffer.from(secret.data.DATABASE_URL, 'base64').toString(), 'postgres://svc:s3cret@rel-svc-postgresql:5432/svc');
    assert.equal(find(docs, 'Service', 'rel-svc-postgresql').spec.ports[0].port, 5432);
    assert.equal(envOf(container(find(docs, 'Deployment', 'rel-svc'))).DATABASE_URL, 'secret:rel-svc-postgresql/DATABASE_URL');
    // A pre-install hook would run before this Postgres exists.
    assert.equal(find(docs, 'Job', 'rel-svc-system-update-1').metadata.annotations![HOOK], 'post-install,pre-upgrade');
  });

  test('OpenSearch by URL, and the optional ServiceMonitor and Ingress', async () => {
    const docs = await render([
      ...DB,
      '--set', 'search.backend=opensearch',
      '--set', 'search.opensearch.url=http://opensearch:9200',
      '--set', 'search.opensearch.indexPrefix=svc',
      '--set', 'server.serviceMonitor.enabled=true',
      '--set', 'server.ingress.enabled=true',
      '--set', 'server.ingress.host=catalog.example.org',
    ]);
    for (const d of [find(docs, 'Deployment', 'rel-svc'), find(docs, 'Job', 'rel-svc-system-update-1')]) {
      const env = envOf(container(d));
      assert.deepEqual([env.SEARCH_BACKEND, env.OPENSEARCH_URL, env.INDEX_PREFIX], ['opensearch', 'http://opensearch:9200', 'svc']);
    }
    assert.deepEqual(find(docs, 'ServiceMonitor', 'rel-svc').spec.endpoints, [{ port: 'http', path: '/metrics', interval: '30s' }]);
    const rule = find(docs, 'Ingress', 'rel-svc').spec.rules[0];
    assert.equal(rule.host, 'catalog.example.org');
    assert.deepEqual(rule.http.paths[0].backend.service, { name: 'rel-svc', port: { name: 'http' } });
  });

  test('server.workers takes a number or auto, as --set gives them', async () => {
    for (const [value, env] of [['2', '2'], ['auto', 'auto']]) {
      assert.equal(envOf(container(find(await render([...DB, '--set', `server.workers=${value}`]), 'Deployment', 'rel-svc'))).SVC_WORKERS, env);
    }
    await assert.rejects(render([...DB, '--set', 'server.workers=0']), /server\.workers: Must be greater than or equal to 1/);
    await assert.rejects(render([...DB, '--set', 'server.workers=many']), /server\.workers: Does not match pattern/);
  });

  test('one watched namespace: a Role there instead of a ClusterRole', async () => {
    const docs = await render([...DB, '--set', 'operator.watchNamespace=team-a']);
    assert.equal(docs.filter((d) => d.kind.startsWith('Cluster')).length, 0);
    assert.equal(find(docs, 'Role', 'rel-svc-operator').metadata.namespace, 'team-a');
    assert.equal(find(docs, 'RoleBinding', 'rel-svc-operator').subjects[0].namespace, 'catalog');
    assert.equal(envOf(container(find(docs, 'Deployment', 'rel-svc-operator'))).SVC_OPERATOR_NAMESPACE, 'team-a');
  });

  test('an existing admin-token Secret replaces the generated one; the operator can be left out', async () => {
    const docs = await render([...DB, '--set', 'auth.adminToken.existingSecret=mine', '--set', 'auth.adminToken.existingSecretKey=t', '--set', 'operator.enabled=false']);
    assert.equal(docs.filter((d) => d.kind === 'Secret').length, 0);
    assert.equal(envOf(container(find(docs, 'Deployment', 'rel-svc'))).SVC_ADMIN_TOKEN, 'secret:mine/t');
    assert.equal(docs.filter((d) => d.metadata.name.includes('operator')).length, 0);
  });

  test('the schema rejects bad values, naming the value and what it expects', async () => {
    const cases: [string[], RegExp][] = [
      [['--set', 'search.backend=elastic'], /search\.backend: search\.backend must be one of the following: "postgres", "opensearch"/],
      [['--set', 'search.backend=opensearch'], /search\.opensearch\.url: String length must be greater than or equal to 1/],
      [['--set', 'systemUpdate.mode=manual'], /systemUpdate\.mode: systemUpdate\.mode must be one of the following: "hook", "operator"/],
      [['--set', 'server.replicas=-1'], /server\.replicas: Must be greater than or equal to 0/],
      [['--set', 'server.replica=2'], /server: Additional property replica is not allowed/],
      [['--set', 'image.pullPolicy=Sometimes'], /image\.pullPolicy: image\.pullPolicy must be one of the following/],
      [['--set', 'database.existingSecret=Not_A_Name'], /database\.existingSecret: Does not match pattern/],
      [['--set', 'systemUpdate.activeDeadlineSeconds=5'], /systemUpdate\.activeDeadlineSeconds: Must be greater than or equal to 60/],
      // The operator refuses more than a day at start: the chart says so at install.
      [['--set', 'operator.pollSeconds=100000'], /operator\.pollSeconds: Must be less than or equal to 86400/],
      [['--set', 'operator.resyncSeconds=100000'], /operator\.resyncSeconds: Must be less than or equal to 86400/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(render([...DB, ...args]), (err: Error) => {
        assert.match(err.message, /values don't meet the specifications of the schema/);
        assert.match(err.message, message);
        return true;
      });
    }
  });

  test('the schema covers every value of values.yaml, each with a description', () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    const missing: string[] = [];
    const walk = (v: unknown, s: any, path: string) => {
      if (!s) return missing.push(path);
      if (!s.description && path !== '') missing.push(`${path} (no description)`);
      if (v && typeof v === 'object' && !Array.isArray(v) && s.properties) {
        for (const [k, child] of Object.entries(v)) walk(child, s.properties[k], path ? `${path}.${k}` : k);
      }
    };
    walk(values, schema, '');
    assert.deepEqual(missing, []);
  });
});

describe('CRDs', () => {
  test('the chart ships the files of crds/ unchanged', () => {
    const source = readdirSync(join(ROOT, 'crds')).sort();
    assert.deepEqual(readdirSync(join(CHART, 'crds')).sort(), source);
    for (const f of source) assert.equal(readFileSync(join(CHART, 'crds', f), 'utf8'), readFileSync(join(ROOT, 'crds', f), 'utf8'), `charts/svc/crds/${f} differs from crds/${f}`);
  });

  test('helm renders them as they are in crds/', async () => {
    const crds = (await render([...DB, '--include-crds'])).filter((d) => d.kind === 'CustomResourceDefinition');
    const expected = readdirSync(join(ROOT, 'crds')).sort().map((f) => parse(readFileSync(join(ROOT, 'crds', f), 'utf8')));
    assert.deepEqual(crds.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)), expected.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)));
  });
});
