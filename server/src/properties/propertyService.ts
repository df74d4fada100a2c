/**
 * Structured-property operations phrased as changes rather than whole aspects (GraphQL's mutations,
 * and any surface that speaks that way): create a property, append to a definition, upsert or remove
 * some assignments of an entity, hard-delete a property. Each is one write through the entity core,
 * so every rule of the definition and value hooks (messages, soft delete, versions, hard delete)
 * applies exactly as to a REST write.
 *
 *   await properties.upsertValues(principal, datasetUrn, [{ propertyUrn, values: [{ double: 60 }] }]);
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/authorize.ts';
import { SvcError } from '../shared/errors.ts';
import type { EntityService, WrittenAspect } from '../entities/entityService.ts';
import { pointerSegment, type PatchOperation } from '../entities/jsonPatch.ts';
import { registry, type EntityUrn } from '../registry/registry.ts';
import { normalizeEntityType } from '../contract/definitions.ts';
import { duplicateEntries, propertyUrnProblem, type Violation } from './valueRules.ts';
import { sameValue, type AllowedValue, type Assignment, type PropertyDefinition, type StructuredProperties } from './types.ts';

const PROPERTY_ENTITY = 'structuredProperty';

/** A new property: its definition, and the id of its URN (else the qualified name, else a random UUID, as DataHub). */
export interface NewProperty {
  id?: string;
  definition: Omit<PropertyDefinition, 'qualifiedName'> & { qualifiedName?: string };
}

/** Append-only changes of a definition (DataHub's `updateStructuredProperty`); absent fields stay. */
export interface DefinitionChanges {
  displayName?: string;
  description?: string;
  immutable?: boolean;
  /** SINGLE → MULTIPLE (never back: that is a breaking change, made with a new version). */
  setCardinalityAsMultiple?: boolean;
  newAllowedValues?: AllowedValue[];
  newEntityTypes?: string[];
  newAllowedTypes?: string[];
}

const exists = (urn: string, cause?: unknown) => new SvcError('CONFLICT', `A structured property already exists with this urn: ${urn}`, { cause });

/** A property's URN from its id: `retention` → `urn:li:structuredProperty:retention`. */
export const propertyUrnOf = (id: string) => `urn:li:structuredProperty:${id}`;

export class PropertyService {
  constructor(private readonly entities: EntityService) {}

  /** Creates a property; CONFLICT when its URN is taken (also by a soft-deleted property). Returns its URN. */
  async create(principal: Principal, input: NewProperty): Promise<string> {
    const id = input.id ?? input.definition.qualifiedName ?? randomUUID();
    const urn = propertyUrnOf(id);
    const target = propertyTarget(urn);
    const definition = { ...input.definition, qualifiedName: input.definition.qualifiedName ?? id };
    // Checked before the definition's rules (which would judge the write as a change of the existing
    // one); the write itself is CREATE_ENTITY, so a concurrent create still fails.
    if (await this.entities.exists(principal, target, undefined, true)) throw exists(urn);
    try {
      await this.entities.write(principal, [{ urn, target, aspect: 'propertyDefinition', value: definition }], 'create_entity');
    } catch (err) {
      if (err instanceof SvcError && err.reason === 'EntityExists') {
        throw exists(urn, err);
      }
      throw err;
    }
    return urn;
  }

  /**
   * Applies append-only changes to a definition, under the same rules as a full write of it (a
   * soft-deleted property refuses them). Entity types, allowed types and allowed values already
   * present are not added twice; an allowed value given again takes the new description. A rule's
   * message about an allowed value names it where the caller gave it (`newAllowedValues[0]`), not
   * where it lands in the definition.
   */
  async update(principal: Principal, urn: string, changes: DefinitionChanges): Promise<WrittenAspect> {
    let inputs: (number | undefined)[] = [];
    try {
      return await this.entities.update(principal, propertyTarget(urn), 'propertyDefinition', (stored) => {
        if (stored === undefined) throw SvcError.notFound(`Attempting to update a structured property with no definition aspect: ${urn}`);
        const updated = updatedDefinition(stored as PropertyDefinition, changes);
        inputs = updated.allowedValueInputs;
        return updated.definition;
      });
    } catch (err) {
      if (!(err instanceof SvcError) || err.code !== 'VALIDATION') throw err;
      const named = err.violations.map((v) => v.replace(/^allowedValues\[(\d+)\]/, (at, i: string) => (inputs[Number(i)] === undefined ? at : `newAllowedValues[${inputs[Number(i)]}]`)));
      throw SvcError.validation(named);
    }
  }

  /**
   * Sets the values of the named properties on an entity, keeping its other assignments (an
   * assignment given replaces the one stored). Each property is named once (DataHub's message for a
   * set naming one twice); the entity must exist (the value rules check it).
   */
  async upsertValues(principal: Principal, entityUrn: string, assignments: Assignment[]): Promise<WrittenAspect> {
    const target = registry.resolveUrn(entityUrn);
    // As patch operations, a second assignment of a property would silently replace the first.
    refuse(duplicateEntries(assignments));
    const ops: PatchOperation[] = assignments.map((a) => ({ op: 'add', path: `/properties/${pointerSegment(a.propertyUrn)}`, value: a }));
    return this.entities.patch(principal, target, 'structuredProperties', { patch: ops, arrayPrimaryKeys: { properties: ['propertyUrn'] } });
  }

  /**
   * Removes the assignments of the named properties from an entity (those it does not hold, as reads
   * show it, are ignored). Each URN must name a structured property (the message of a set naming
   * another); the entity must exist (the value rules check it).
   */
  async removeValues(principal: Principal, entityUrn: string, propertyUrns: string[]): Promise<WrittenAspect> {
    const target = registry.resolveUrn(entityUrn);
    refuse(propertyUrns.map(propertyUrnProblem).filter((v) => v !== undefined));
    const removed = new Set(propertyUrns);
    const addressed: PatchOperation[] = propertyUrns.map((u) => ({ op: 'remove', path: `/properties/${pointerSegment(u)}` }));
    return this.entities.update(
      principal,
      target,
      'structuredProperties',
      (stored) => {
        const current = (stored as StructuredProperties | undefined) ?? { properties: [] };
        return { ...current, properties: current.properties.filter((a) => !removed.has(a.propertyUrn)) };
      },
      addressed,
    );
  }

  /** Hard-deletes a property: the definition goes at once, a durable task removes its values everywhere. */
  async delete(principal: Principal, urn: string): Promise<void> {
    await this.entities.deleteEntity(principal, propertyTarget(urn));
  }
}

/** The structured property a URN names; INVALID_URN when it does not parse, VALIDATION when it names another entity type. */
export function propertyTarget(urn: string): EntityUrn {
  const target = registry.resolveUrn(urn);
  if (target.spec.name !== PROPERTY_ENTITY) throw SvcError.validation([`urn ${urn} is not a structured property URN (urn:li:structuredProperty:<id>)`]);
  return target;
}

/** Throws one VALIDATION error carrying every violation, if any. */
function refuse(violations: Violation[]): void {
  if (violations.length) throw SvcError.validation(violations.map((v) => v.message));
}

/**
 * A definition with append-only changes applied (see {@link DefinitionChanges}), and for each of its
 * allowed values the index in `changes.newAllowedValues` it was given at (undefined: kept as stored).
 */
export function updatedDefinition(current: PropertyDefinition, changes: DefinitionChanges): { definition: PropertyDefinition; allowedValueInputs: (number | undefined)[] } {
  const next: PropertyDefinition = { ...current };
  const inputs: (number | undefined)[] = (current.allowedValues ?? []).map(() => undefined);
  if (changes.displayName !== undefined) next.displayName = changes.displayName;
  if (changes.description !== undefined) next.description = changes.description;
  if (changes.immutable !== undefined) next.immutable = changes.immutable;
  if (changes.setCardinalityAsMultiple) next.cardinality = 'MULTIPLE';
  if (changes.newEntityTypes?.length) next.entityTypes = appendNew(current.entityTypes, changes.newEntityTypes.map(normalizeEntityType));
  if (changes.newAllowedTypes?.length) {
    next.typeQualifier = { ...current.typeQualifier, allowedTypes: appendNew(current.typeQualifier?.allowedTypes ?? [], changes.newAllowedTypes.map(normalizeEntityType)) };
  }
  if (changes.newAllowedValues?.length) {
    const values = [...(current.allowedValues ?? [])];
    changes.newAllowedValues.forEach((added, k) => {
      const i = values.findIndex((v) => sameValue(v.value, added.value));
      if (i < 0) inputs[values.push(added) - 1] = k;
      else [values[i], inputs[i]] = [added, k];
    });
    next.allowedValues = values;
  }
  return { definition: next, allowedValueInputs: inputs };
}

function appendNew(current: string[], added: string[]): string[] {
  return [...new Set([...current, ...added])];
}
