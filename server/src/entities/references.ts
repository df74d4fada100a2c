/**
 * Where aspects name other entities (DataHub's relationships), and how such a reference is taken out of
 * an aspect, for `deleteReferences` (what `datahub delete` runs before hard-deleting a tag, a user, a
 * group, a domain or a glossary term):
 *
 * - `upstreamLineage`: an upstream naming the entity is removed (`DownstreamOf`);
 * - `dataJobInfo.flowUrn` and an execution request's `source.ingestionSource`: the field is removed;
 * - `structuredProperties`: a value naming the entity (a `urn` property's value) is removed, and an
 *   assignment left with no value goes with it, as if the property had been removed from the entity.
 *
 * A rule returns the value it was given when it holds no reference, so "does it refer" and "what is
 * left" are one rule.
 */
import { pointerSegment, type PatchOperation } from './jsonPatch.ts';

type Obj = Record<string, unknown>;

export interface ReferenceRule {
  /** The relationship DataHub names this reference with. */
  relationship: string;
  /** The value without its references to `urn`; the same object when it has none. */
  without(value: Obj, urn: string): Obj;
  /** What the change addresses in patch terms, for the aspect's rules (which assignments it names). */
  addressed?(value: Obj, urn: string): PatchOperation[];
}

function withoutField(path: string[]): ReferenceRule['without'] {
  const walk = (value: Obj, urn: string, at: number): Obj => {
    const key = path[at]!;
    const inner = value[key];
    if (at === path.length - 1) {
      if (inner !== urn) return value;
      const { [key]: _dropped, ...rest } = value;
      return rest;
    }
    if (!inner || typeof inner !== 'object' || Array.isArray(inner)) return value;
    const next = walk(inner as Obj, urn, at + 1);
    return next === inner ? value : { ...value, [key]: next };
  };
  return (value, urn) => walk(value, urn, 0);
}

interface Assignment {
  propertyUrn: string;
  values: { string?: string; double?: number }[];
}

const assignments = (value: Obj) => (Array.isArray(value.properties) ? (value.properties as Assignment[]) : []);
const names = (a: Assignment, urn: string) => a.values.some((v) => v.string === urn);

export const REFERENCE_RULES: Record<string, ReferenceRule> = {
  upstreamLineage: {
    relationship: 'DownstreamOf',
    without(value, urn) {
      const upstreams = Array.isArray(value.upstreams) ? (value.upstreams as Obj[]) : [];
      const left = upstreams.filter((u) => u.dataset !== urn);
      return left.length === upstreams.length ? value : { ...value, upstreams: left };
    },
  },
  dataJobInfo: { relationship: 'IsPartOf', without: withoutField(['flowUrn']) },
  dataHubExecutionRequestInput: { relationship: 'ingestionSource', without: withoutField(['source', 'ingestionSource']) },
  structuredProperties: {
    relationship: 'StructuredPropertyValue',
    without(value, urn) {
      const all = assignments(value);
      if (!all.some((a) => names(a, urn))) return value;
      const left = all.map((a) => (names(a, urn) ? { ...a, values: a.values.filter((v) => v.string !== urn) } : a)).filter((a) => a.values.length > 0);
      return { ...value, properties: left };
    },
    addressed(value, urn) {
      return assignments(value)
        .filter((a) => names(a, urn))
        .map((a) => ({ op: 'remove', path: `/properties/${pointerSegment(a.propertyUrn)}` }));
    },
  },
};

/** The aspects that may refer to other entities. */
export const REFERRING_ASPECTS = Object.keys(REFERENCE_RULES);
