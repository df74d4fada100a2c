-- Lookups of the record of assignments by entity (the delete of the record's trigger on every
-- structuredProperties write, the read contexts of entity reads and of the search dispatcher) must
-- take the primary key (entity_urn, property_urn). Their plans are generic, made once per connection:
-- made while the table was (nearly) empty, as on a fresh install, the two indexes cost the same and a
-- plan could take assignments_by_property (property_urn, entity_urn) with the entity as a condition on
-- its second column, which reads the whole index. It then kept doing so on every write and every read
-- for as long as the connection lived: over 20,000 datasets each holding a value, one read context of
-- the search dispatcher read 26,000 index pages (40 ms) and the record's delete walked the index on
-- every write.
--
-- The index by property is now partial, on `property_urn IS NOT NULL` (which every row is): a lookup by
-- property (`property_urn = …`, whose strict operator implies it) still uses it, and a lookup by
-- entity, which says nothing of property_urn, cannot. test/server/plan-stability.test.ts checks it.
CREATE INDEX assignments_by_named_property ON structured_property_assignments (property_urn, entity_urn) WHERE property_urn IS NOT NULL;
DROP INDEX assignments_by_property;
ALTER INDEX assignments_by_named_property RENAME TO assignments_by_property;
