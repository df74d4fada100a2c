-- Search (server/src/search/): a transactional outbox that every write feeds by itself, and the
-- tables of the `postgres` search backend.

-- The outbox: one row per change of an entity's search document, written by the statement that
-- changes what the document is built from (the entity's key aspect, its status, its structured
-- properties; for a structured property, its definition), whichever path wrote it. The dispatcher
-- rebuilds each named entity's document from the primary store and applies it to the backend, then
-- deletes the rows it handled: a change is delivered at least once, and the latest state always wins.
CREATE TABLE search_outbox (
  id        bigserial PRIMARY KEY,
  urn       text COLLATE "C" NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION svc_search_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_outbox (urn) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.urn ELSE NEW.urn END);
  RETURN NULL;
END
$$;

-- A new latest value is inserted; a latest row is updated in place only for its system metadata (the
-- same value written again), which changes no document. Key aspects are named `<entity>Key`.
CREATE TRIGGER aspects_search_written AFTER INSERT OR UPDATE OF metadata ON aspects
  FOR EACH ROW WHEN (NEW.version = 0 AND (NEW.aspect IN ('status', 'structuredProperties', 'propertyDefinition') OR NEW.aspect LIKE '%Key'))
  EXECUTE FUNCTION svc_search_changed();
CREATE TRIGGER aspects_search_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.version = 0 AND (OLD.aspect IN ('status', 'structuredProperties', 'propertyDefinition') OR OLD.aspect LIKE '%Key'))
  EXECUTE FUNCTION svc_search_changed();

-- The dispatcher hears of new rows as their transaction commits (once per statement, not per row).
CREATE FUNCTION svc_search_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_search', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER search_outbox_notify AFTER INSERT ON search_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION svc_search_notify();

-- What the dispatcher last indexed of each structured property: the field its values go under, the
-- field's type, the entity types it applies to, and whether its values are searchable (a definition,
-- not soft-deleted). When one of these changes, every entity holding the property is indexed again.
CREATE TABLE search_properties (
  urn          text COLLATE "C" PRIMARY KEY,
  field        text NOT NULL,
  field_type   text NOT NULL,
  entity_types text[] NOT NULL,
  active       boolean NOT NULL
);

-- Filters name unversioned properties by their field: the qualified name with `.` replaced by `_`.
CREATE INDEX property_field_names ON aspects ((replace((metadata::jsonb) ->> 'qualifiedName', '.', '_')))
  WHERE aspect = 'propertyDefinition' AND version = 0;

-- The `postgres` backend: one document per entity (as OpenSearch would hold it), and one row per
-- searchable value (key-aspect fields and structured properties), indexed for filters and counts.
-- Field types come from the registry and the definitions, as OpenSearch's mappings do.
CREATE TABLE search_documents (
  entity_type text NOT NULL,
  urn         text COLLATE "C" NOT NULL,
  removed     boolean NOT NULL,
  document    jsonb NOT NULL,
  PRIMARY KEY (entity_type, urn)
);
CREATE TABLE search_values (
  entity_type text NOT NULL,
  urn         text COLLATE "C" NOT NULL,
  field       text COLLATE "C" NOT NULL,
  -- The value as the document holds it (text), and as a number for number fields (dates: epoch ms).
  str_value   text COLLATE "C" NOT NULL,
  num_value   double precision
);
CREATE INDEX search_values_by_string ON search_values (entity_type, field, str_value, urn);
CREATE INDEX search_values_by_number ON search_values (entity_type, field, num_value, urn) WHERE num_value IS NOT NULL;
CREATE INDEX search_values_by_urn ON search_values (urn);
-- Entities stored before search existed are indexed by the dispatcher.
INSERT INTO search_outbox (urn) SELECT urn FROM aspects WHERE version = 0 AND aspect LIKE '%Key' ORDER BY urn;
