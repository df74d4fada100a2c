import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, GraphQLEnumType, GraphQLObjectType } from 'graphql';
import { registry } from '../../registry/registry.ts';
import { entityNamesOf, graphqlNames } from './entityTypes.ts';
import { typeDefs } from './graphqlHandler.ts';

const schema = buildSchema(typeDefs);

test('every registry entity has an EntityType value and an object type implementing Entity in the schema', () => {
  const values = (schema.getType('EntityType') as GraphQLEnumType).getValues().map((v) => v.name);
  for (const spec of registry.entities) {
    const names = graphqlNames(spec);
    assert.ok(values.includes(names.enum), `${spec.name}: ${names.enum} is not an EntityType value`);
    const type = schema.getType(names.type);
    assert.ok(type instanceof GraphQLObjectType, `${spec.name}: no type ${names.type}`);
    assert.ok(type.getInterfaces().some((i) => i.name === 'Entity'), `${names.type} does not implement Entity`);
    assert.deepEqual(entityNamesOf([names.enum]), [spec.name]);
  }
  assert.equal(values.length, registry.entities.length, 'no EntityType value without an entity');
});

test('an entity that has structured properties shows them in GraphQL', () => {
  for (const spec of registry.entities) {
    if (!spec.aspects.includes('structuredProperties')) continue;
    const type = schema.getType(graphqlNames(spec).type) as GraphQLObjectType;
    assert.ok(type.getFields().structuredProperties, `${type.name} has no structuredProperties field`);
  }
});

test("every entity type shows the common aspects it has under DataHub's field names (ownership, tags, glossary terms, domain, …)", () => {
  const fieldAspects: [string, string][] = [
    ['ownership', 'ownership'], ['tags', 'globalTags'], ['globalTags', 'globalTags'], ['glossaryTerms', 'glossaryTerms'], ['domain', 'domains'],
    ['status', 'status'], ['subTypes', 'subTypes'], ['dataPlatformInstance', 'dataPlatformInstance'], ['browsePathV2', 'browsePathsV2'],
  ];
  let shown = 0;
  for (const spec of registry.entities) {
    const type = schema.getType(graphqlNames(spec).type) as GraphQLObjectType;
    for (const [field, aspect] of fieldAspects) {
      if (!spec.aspects.includes(aspect)) continue;
      assert.ok(type.getFields()[field], `${type.name} has the ${aspect} aspect but no ${field} field`);
      shown++;
    }
  }
  assert.ok(shown > 200, `only ${shown} fields: the model's common aspects are not shown`);
});
