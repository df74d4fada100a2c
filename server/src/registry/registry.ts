/**
 * Lookups over the registry: entity and aspect names (case-insensitive on input, as DataHub), URN →
 * entity spec and key aspect, and a validator for every aspect (compiled when first used: most of
 * DataHub's 270 aspects are never written to a given server).
 */
import { SvcError } from '../shared/errors.ts';
import { RecentCache } from '../shared/recentCache.ts';
import { compileSchema } from '../shared/validation.ts';
import { ASPECT_SCHEMAS, systemMetadata } from './aspectSchemas.ts';
import { DATAHUB_MODEL, datahubAspectSchema, withDatahubFields, withDefinitions } from '../contract/datahubModel.ts';
import { ENTITIES, entityUrn, type EntitySpec, type EntityUrn } from '../contract/entities.ts';

export type { EntitySpec, EntityUrn } from '../contract/entities.ts';

export interface AspectSpec {
  name: string;
  /** The JSON Schema of its value, self-contained (the named types it uses under `definitions`). */
  schema: Record<string, unknown>;
  timeseries: boolean;
  /** Set for key aspects: the entity whose key this is. */
  keyOf?: EntitySpec;
  /** DataHub's Pegasus class of the aspect, as Rest.li clients name it (`com.linkedin.common.Status`). */
  pegasusClass: string;
}


/**
 * How many resolved URNs the registry keeps in each of its two generations (URNs are at most 512
 * bytes: about 30 MB at worst).
 */
const RESOLVED_URNS = 10_000;

class Registry {
  readonly entities: readonly EntitySpec[] = ENTITIES;
  private readonly entityByLower = new Map<string, EntitySpec>();
  private readonly aspectByLower = new Map<string, AspectSpec>();
  private readonly aspectByPegasus = new Map<string, AspectSpec>();
  /** By aspect name, each compiled by its first validation: compiling them all cost every start about 0.4 s of CPU. */
  private readonly validators = new Map<string, (value: unknown) => string[]>();
  private readonly keyOf = new Map(ENTITIES.map((e) => [e.keyAspect, e]));
  /** URNs resolved lately (a page of search results, the entities of a batch of writes; see recentCache.ts). */
  private readonly resolved = new RecentCache<EntityUrn>(2 * RESOLVED_URNS);

  constructor() {
    for (const [name, a] of Object.entries(DATAHUB_MODEL.aspects)) {
      const own = ASPECT_SCHEMAS[name];
      const schema = own ? withDefinitions(withDatahubFields(own, DATAHUB_MODEL.definitions[a.class]!)) : datahubAspectSchema(name);
      this.addAspect({ name, schema, timeseries: a.timeseries === true, keyOf: this.keyOf.get(name), pegasusClass: a.class });
    }
    for (const name of Object.keys(ASPECT_SCHEMAS)) {
      if (!this.aspectByLower.has(name.toLowerCase())) throw new Error(`registry: svc's schema of ${name} names no aspect of DataHub's model`);
    }
    for (const spec of ENTITIES) {
      this.entityByLower.set(spec.name.toLowerCase(), spec);
      for (const a of [spec.keyAspect, ...spec.aspects]) {
        if (!this.aspectByLower.has(a.toLowerCase())) throw new Error(`registry: ${spec.name} names unknown aspect ${a}`);
      }
    }
  }

  private addAspect(spec: AspectSpec): void {
    this.aspectByPegasus.set(spec.pegasusClass, spec);
    this.aspectByLower.set(spec.name.toLowerCase(), spec);
  }

  /** The entity spec for a name in any case; NOT_FOUND-free: throws VALIDATION naming the known types. */
  entity(name: string): EntitySpec {
    const spec = this.entityByLower.get(name.toLowerCase());
    if (!spec) {
      throw SvcError.validation([`Unknown entity type "${name}"; expected one of: ${ENTITIES.map((e) => e.name).join(', ')}`]);
    }
    return spec;
  }

  findEntity(name: string): EntitySpec | undefined {
    return this.entityByLower.get(name.toLowerCase());
  }

  /** The aspect `name` (any case) of entity `spec`, including its key aspect; VALIDATION error if it has none such. */
  aspect(spec: EntitySpec, name: string): AspectSpec {
    const a = this.aspectByLower.get(name.toLowerCase());
    if (!a || (a.name !== spec.keyAspect && !spec.aspects.includes(a.name))) {
      throw SvcError.validation([
        `Unknown aspect "${name}" for entity type ${spec.name}; expected one of: ${[spec.keyAspect, ...spec.aspects].join(', ')}`,
      ]);
    }
    return a;
  }

  /** The aspect whose Pegasus class is `pegasusClass` (e.g. `com.linkedin.common.Status`), if svc has it. */
  aspectByPegasusClass(pegasusClass: string): AspectSpec | undefined {
    return this.aspectByPegasus.get(pegasusClass);
  }

  /** Every aspect of an entity type, key first. */
  aspectsOf(spec: EntitySpec): AspectSpec[] {
    return [spec.keyAspect, ...spec.aspects].map((n) => this.aspectByLower.get(n.toLowerCase())!);
  }

  /**
   * Parses a URN and resolves its entity type; an unparsable URN, an unknown type or a tuple of the
   * wrong shape for the type is INVALID_URN (`Invalid urn!: <urn>`).
   */
  resolveUrn(raw: string): EntityUrn {
    const known = this.resolved.get(raw);
    if (known) return known;
    const found = entityUrn(raw);
    // Frozen: one resolution is shared by every caller of the same URN.
    const resolved: EntityUrn = Object.freeze({ ...found, parts: Object.freeze(found.parts) as string[] });
    this.resolved.set(raw, resolved);
    return resolved;
  }

  /** The key aspect value of a URN, e.g. `{platform, name, origin}` for a dataset. */
  keyAspectValue(u: EntityUrn): Record<string, string> {
    return Object.fromEntries(u.spec.keyFields.map((f, i) => [f.name, u.parts[i]!]));
  }

  /** Validates the system metadata written with an aspect; every violation, prefixed with `<aspect>.systemMetadata`. */
  validateSystemMetadata(aspect: AspectSpec, value: unknown): string[] {
    return checkSystemMetadata(value, `${aspect.name}.systemMetadata`);
  }

  /** Validates an aspect value against its schema; returns every violation, prefixed with the aspect name. */
  validate(aspect: AspectSpec, value: unknown): string[] {
    let check = this.validators.get(aspect.name);
    if (!check) this.validators.set(aspect.name, (check = compileSchema(aspect.schema, aspect.name)));
    return check(value);
  }
}

const checkSystemMetadata = compileSchema(systemMetadata, 'systemMetadata');

/** The process-wide registry (it is static data). */
export const registry = new Registry();
