/**
 * DataHub's metadata change proposals read into svc's writes: the target URN (type URNs in DataHub's
 * namespace taken as svc's), the aspect value (a JSON string, held to the rules of any input), and a
 * PATCH's JSON Patch in svc's form; and a list of proposals applied in order (ingestProposals). Each
 * refusal names the proposal (`proposals[3]: …`).
 */
import type { PatchOperation } from '../../entities/jsonPatch.ts';
import type { AspectInput, EntityService, WriteMode } from '../../entities/entityService.ts';
import type { Principal } from '../../auth/authorize.ts';
import { SvcError } from '../../shared/errors.ts';
import { registry, type EntityUrn } from '../../registry/registry.ts';
import { jsonProblems } from '../inputRules.ts';

/**
 * How DataHub addresses the elements of an aspect's arrays in a patch (its GMS templates): the
 * structured properties of an entity by `propertyUrn`, the upstreams of a dataset by `dataset`.
 */
const TEMPLATE_KEYS: Record<string, Record<string, string[]>> = {
  structuredProperties: { properties: ['propertyUrn'] },
  upstreamLineage: { upstreams: ['dataset'] },
};

/** The separator DataHub's 1.x SDK puts between nested field names of an array key (`attribution␟source`). */
const NESTED = '\u241f';

export interface Proposal {
  entityType?: unknown;
  entityUrn?: unknown;
  changeType?: unknown;
  aspectName?: unknown;
  aspect?: { value?: unknown; contentType?: unknown };
  systemMetadata?: unknown;
}

/**
 * A URN of svc's data and entity types written in DataHub's namespace (`urn:li:entityType:datahub.dataset`)
 * as svc's (`urn:li:entityType:svc.dataset`): the same entity under DataHub's name. Only the namespace
 * is read so: `urn:li:entityType:dataset` is another entity, as in DataHub (a reference to a type in
 * a definition takes the short forms, see contract/definitions.ts; an entity addressed never does, so that no
 * write or delete reaches an entity it did not name).
 */
export function svcTypeUrn(urn: string): string {
  return urn.replace(/^urn:li:(dataType|entityType):datahub\./, 'urn:li:$1:svc.');
}

/** svc's data and entity type URNs in a value as DataHub's clients know them (`urn:li:dataType:datahub.number`): they check them against their own list. */
export function inDatahubNamespace(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/^urn:li:(dataType|entityType):svc\./, 'urn:li:$1:datahub.');
  if (Array.isArray(value)) return value.map(inDatahubNamespace);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inDatahubNamespace(v)]));
  return value;
}

export function target(urn: unknown, where: string): EntityUrn {
  if (typeof urn !== 'string' || urn === '') throw SvcError.validation([`${where}: entityUrn must be a URN`]);
  return located(where, () => registry.resolveUrn(svcTypeUrn(urn)));
}

/**
 * What `lookup` gives, its refusal naming `where` (`proposals[3]: Unknown aspect …`): in a batch, which
 * proposal is wrong. A malformed URN keeps its own form (`Invalid urn!: …`), which names the URN.
 */
export function located<T>(where: string, lookup: () => T): T {
  try {
    return lookup();
  } catch (err) {
    if (err instanceof SvcError && err.code === 'VALIDATION') throw SvcError.validation((err.violations.length ? err.violations : [err.message]).map((v) => `${where}: ${v}`));
    throw err;
  }
}

/**
 * The aspect value of a proposal: the JSON text in `aspect.value`, parsed, and held to the rules of any
 * input (inputRules.ts), as a request body is: it is a body of its own inside the request's.
 */
export function valueOf(p: Proposal, where: string): unknown {
  const type = p.aspect?.contentType;
  if (type !== undefined && type !== null && (typeof type !== 'string' || !/^application\/(json|json-patch\+json)\s*(;|$)/i.test(type))) {
    throw SvcError.validation([`${where}: aspect.contentType must be application/json (or application/json-patch+json for a patch: svc reads an aspect as JSON); got ${JSON.stringify(type).slice(0, 80)}`]);
  }
  const raw = p.aspect?.value;
  if (typeof raw !== 'string') throw SvcError.validation([`${where}: aspect.value must be the aspect as a JSON string`]);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw SvcError.validation([`${where}: aspect.value is not JSON: ${(err as Error).message}`]);
  }
  const problems = jsonProblems(value, raw);
  if (problems.length) throw SvcError.validation(problems.map((m) => `${where}: aspect.value${m.replace(/^body/, '')}`));
  return value;
}

/**
 * A proposal's JSON Patch in svc's form: DataHub's keyed array paths for the aspect, a `remove` followed
 * by an `add` of the same element as the `add` alone (how the 0.14 SDK sets a structured property), and
 * the 1.x SDK's attribution-source key (always empty from the SDK) dropped from keys and paths.
 */
export function patchOf(aspect: string, value: unknown, where: string): { patch: PatchOperation[]; arrayPrimaryKeys: Record<string, string[]> } {
  const doc = Array.isArray(value) ? { patch: value } : (value as { patch?: unknown; arrayPrimaryKeys?: Record<string, string[]> } | null);
  if (!doc || !Array.isArray(doc.patch)) throw SvcError.validation([`${where}: a PATCH aspect.value must be a JSON Patch array or {"patch": [...], "arrayPrimaryKeys": {...}}`]);
  const keys: Record<string, string[]> = { ...TEMPLATE_KEYS[aspect] };
  const nested = new Set<string>();
  for (const [field, fields] of Object.entries(doc.arrayPrimaryKeys ?? {})) {
    const plain = Array.isArray(fields) ? fields.filter((f) => typeof f === 'string' && !f.includes(NESTED)) : fields;
    if (Array.isArray(fields) && plain.length < fields.length) nested.add(field);
    keys[field] = plain as string[];
  }
  let ops = doc.patch as PatchOperation[];
  if (nested.size) {
    // `/properties/<urn>/` (a trailing empty source): the element of that URN.
    ops = ops.map((op) => (typeof op?.path === 'string' && [...nested].some((f) => op.path.startsWith(`/${f}/`)) ? { ...op, path: op.path.replace(/\/$/, '') } : op));
  }
  ops = ops.filter((op, i) => !(op?.op === 'remove' && ops[i + 1]?.op === 'add' && ops[i + 1]?.path === op.path));
  return { patch: ops, arrayPrimaryKeys: keys };
}

/**
 * Applies proposals in order (a batch as one write where it can be); returns nothing (Rest.li answers
 * no body for a batch). Every proposal is read and checked before any is applied: a malformed one
 * refuses the batch with nothing written.
 */
export async function ingestProposals(entities: EntityService, principal: Principal, proposals: Proposal[]): Promise<void> {
  type Step = { kind: 'write'; mode: WriteMode; inputs: AspectInput[] } | { kind: 'apply'; run: () => Promise<unknown> };
  const steps: Step[] = [];
  for (const [i, p] of proposals.entries()) {
    const where = proposals.length > 1 ? `proposals[${i}]` : 'proposal';
    if (!p || typeof p !== 'object') throw SvcError.validation([`${where} must be a metadata change proposal object`]);
    const t = target(p.entityUrn, where);
    if (typeof p.entityType === 'string' && p.entityType.toLowerCase() !== t.spec.name.toLowerCase()) {
      throw SvcError.validation([`${where}: entityType ${p.entityType} does not match the URN's type ${t.spec.name}`]);
    }
    if (typeof p.aspectName !== 'string') throw SvcError.validation([`${where}: aspectName is required`]);
    const aspectName = located(where, () => registry.aspect(t.spec, p.aspectName as string)).name;
    const changeType = String(p.changeType ?? 'UPSERT').toUpperCase();
    const mode: WriteMode | undefined = changeType === 'UPSERT' ? 'upsert' : changeType === 'CREATE' ? 'create' : changeType === 'CREATE_ENTITY' ? 'create_entity' : undefined;
    if (mode) {
      // Consecutive writes of the same mode go together (all or nothing), as one batch write.
      const last = steps[steps.length - 1];
      const pending = last?.kind === 'write' && last.mode === mode ? last : { kind: 'write' as const, mode, inputs: [] };
      if (pending !== last) steps.push(pending);
      // A proposal creates its entity, as DataHub's ingestProposal does: the key aspect goes with it
      // (unchanged when the entity exists), so that rules needing the entity (structured property
      // values) see it.
      const key = t.spec.keyAspect;
      if (aspectName !== key && !pending.inputs.some((x) => x.urn === t.urn && x.aspect === key)) {
        pending.inputs.push({ urn: t.urn, target: t, aspect: key, value: registry.keyAspectValue(t), systemMetadata: p.systemMetadata });
      }
      const value = valueOf(p, where);
      // The aspect and its schema are checked here too, before anything of the batch is written.
      const problems = registry.validate(registry.aspect(t.spec, aspectName), value);
      if (problems.length) throw SvcError.validation(problems.map((m) => `${where}: ${m}`));
      pending.inputs.push({ urn: t.urn, target: t, aspect: aspectName, value, systemMetadata: p.systemMetadata });
    } else if (changeType === 'PATCH') {
      const patch = patchOf(registry.aspect(t.spec, aspectName).name, valueOf(p, where), where);
      steps.push({ kind: 'apply', run: () => entities.patch(principal, t, aspectName, patch) });
    } else if (changeType === 'DELETE') {
      registry.aspect(t.spec, aspectName);
      steps.push({ kind: 'apply', run: () => entities.deleteAspects(principal, t, [aspectName]) });
    } else {
      throw SvcError.validation([`${where}: changeType ${changeType} is not supported; expected UPSERT, CREATE, CREATE_ENTITY, PATCH or DELETE`]);
    }
  }
  for (const step of steps) {
    if (step.kind === 'write') await entities.write(principal, step.inputs, step.mode);
    else await step.run();
  }
}
