/**
 * The operator's custom resources (`crds/`): their types, and the few writes the operator makes to
 * them (its finalizer, its status). Custom resources take no strategic merge patch: status goes as a
 * JSON merge patch, finalizers as JSON patches guarded by `test`, so a concurrent change is refused
 * (409/422) and retried instead of overwritten.
 */
import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig, type KubernetesListObject, type V1ObjectMeta } from '@kubernetes/client-node';
import { setCondition, type Condition, type ConditionUpdate } from './runtime/conditions.ts';
import { sameJson } from './runtime/sameJson.ts';

export const GROUP = 'catalog.svc.dev';
export const VERSION = 'v1alpha1';
/** Held on an object until the catalog has been cleaned up after its deletion. */
export const FINALIZER = 'catalog.svc.dev/cleanup';
/** `"false"` stops the operator from managing an object: nothing is written, deletion has no side effect. */
export const MANAGED_ANNOTATION = 'catalog.svc.dev/managed';

export interface AllowedValueSpec {
  stringValue?: string;
  numberValue?: number;
  description?: string;
}

export interface StructuredProperty {
  apiVersion: string;
  kind: 'StructuredProperty';
  metadata: V1ObjectMeta;
  spec: {
    qualifiedName: string;
    valueType: string;
    cardinality?: 'SINGLE' | 'MULTIPLE';
    entityTypes: string[];
    allowedValues?: AllowedValueSpec[];
    displayName?: string;
    description?: string;
    immutable?: boolean;
    version?: string;
    deletionPolicy?: 'Soft' | 'Hard' | 'Orphan';
  };
  status?: {
    observedGeneration?: number;
    conditions?: Condition[];
    urn?: string;
    version?: string;
    valueType?: string;
    entityTypes?: string[];
    lastSyncTime?: string;
  };
}

export interface TruncationJob {
  apiVersion: string;
  kind: 'TruncationJob';
  metadata: V1ObjectMeta;
  spec: {
    entityType: string;
    aspect: string;
    olderThan?: string;
    endTimeMillis?: number;
    schedule?: string;
    dryRun?: boolean;
    batchSize?: number;
    timeoutSeconds?: number;
  };
  status?: TruncationJobStatus;
}

export interface TruncationJobStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  taskId?: string;
  counts?: { total?: number; toDelete?: number; deleted?: number };
  /** `generation`: the metadata.generation of the spec the run was for. */
  lastRun?: { startTime?: string; completionTime?: string; endTimeMillis?: number; dryRun?: boolean; message?: string; generation?: number };
  nextRun?: string;
}

type Custom = StructuredProperty | TruncationJob;

/** `namespace/name` of an object: the work queue's key. */
export const keyOf = (o: { metadata?: V1ObjectMeta }) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Whether the annotation lets the operator manage the object (anything but "false" does). */
export const isManaged = (o: { metadata?: V1ObjectMeta }) => o.metadata?.annotations?.[MANAGED_ANNOTATION] !== 'false';

/** One kind of the operator's custom resources: list, watch path, status and finalizer writes. */
export class CustomResources<T extends Custom> {
  private readonly api: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    readonly plural: 'structuredproperties' | 'truncationjobs',
    /** Only this namespace; undefined = all. */
    private readonly namespace: string | undefined,
  ) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  /** The watch path of the informer. */
  get path(): string {
    return this.namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${this.namespace}/${this.plural}` : `/apis/${GROUP}/${VERSION}/${this.plural}`;
  }

  async list(): Promise<KubernetesListObject<T>> {
    const ref = { group: GROUP, version: VERSION, plural: this.plural };
    const list = this.namespace ? await this.api.listNamespacedCustomObject({ ...ref, namespace: this.namespace }) : await this.api.listClusterCustomObject(ref);
    return list as KubernetesListObject<T>;
  }

  /**
   * Replaces `status` whole (a JSON patch of the status subresource: a merge patch would merge nested
   * objects, keeping a finished run's `completionTime` in the `lastRun` of the next); undefined when the
   * object is gone.
   */
  async patchStatus(obj: T, status: NonNullable<T['status']>): Promise<T | undefined> {
    return this.gone404(
      this.api.patchNamespacedCustomObjectStatus(
        { group: GROUP, version: VERSION, plural: this.plural, namespace: obj.metadata.namespace!, name: obj.metadata.name!, body: [{ op: 'add', path: '/status', value: status }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ) as Promise<T>,
    );
  }

  /** The object as the API server has it now (not the cache); undefined when it is gone. */
  async read(obj: T): Promise<T | undefined> {
    return this.gone404(this.api.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: this.plural, namespace: obj.metadata.namespace!, name: obj.metadata.name! }) as Promise<T>);
  }

  /**
   * Sets status facts and conditions (observedGeneration follows the object) and writes the status
   * only when it differs from what the object shows: a write is a watch event, so equal states must
   * not write. A fact set to undefined is removed. Returns the object as written.
   */
  async updateStatus(obj: T, facts: Partial<NonNullable<T['status']>>, updates: ConditionUpdate[]): Promise<T | undefined> {
    type S = NonNullable<T['status']>;
    const previous = (obj.status ?? {}) as S;
    let conditions: Condition[] | undefined = previous.conditions;
    for (const u of updates) conditions = setCondition(conditions, { ...u, observedGeneration: obj.metadata.generation });
    const next = { ...previous, ...facts, observedGeneration: obj.metadata.generation, conditions } as Record<string, unknown>;
    for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
    if (sameJson(previous, next)) return obj;
    return this.patchStatus(obj, next as S);
  }

  /** Adds the operator's finalizer, unless the object changed meanwhile (then the patch fails and the reconcile retries). */
  async addFinalizer(obj: T): Promise<T | undefined> {
    const finalizers = obj.metadata.finalizers;
    const body = finalizers?.length
      ? [
          { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
          { op: 'add', path: '/metadata/finalizers/-', value: FINALIZER },
        ]
      : [
          { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
          { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
        ];
    return this.jsonPatch(obj, body);
  }

  /** Removes the operator's finalizer (guarded by `test` on its position); a gone object is fine. */
  async removeFinalizer(obj: T): Promise<void> {
    const i = obj.metadata.finalizers?.indexOf(FINALIZER) ?? -1;
    if (i < 0) return;
    await this.jsonPatch(obj, [
      { op: 'test', path: `/metadata/finalizers/${i}`, value: FINALIZER },
      { op: 'remove', path: `/metadata/finalizers/${i}` },
    ]);
  }

  private jsonPatch(obj: T, body: unknown[]): Promise<T | undefined> {
    return this.gone404(
      this.api.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, plural: this.plural, namespace: obj.metadata.namespace!, name: obj.metadata.name!, body },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      ) as Promise<T>,
    );
  }

  private async gone404(p: Promise<T>): Promise<T | undefined> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }
}
