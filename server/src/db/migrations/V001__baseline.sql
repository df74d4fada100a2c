-- The tables of svc's database, as of the first release. Numbered migrations (V002__…, …) change them
-- from here on, each applied once and never edited after a release; the functions and the triggers
-- that call them live in the R__ files beside this one, one file per function, re-applied whenever
-- their text changes (see ../migrate.ts and docs/schema.md).

----------------------------------------------------------------------------------------------------
-- Entities and their aspects
----------------------------------------------------------------------------------------------------

-- Every aspect of every entity, every version kept: version 0 is the latest, older versions are
-- numbered 1..n in the order they were replaced (as DataHub's metadata_aspect_v2), and keep that number
-- for good. Values are `json`, not `jsonb`, so a read returns the fields in the order they were written;
-- every value must still be readable as jsonb (comparisons and searches read it so), which the door
-- ensures (R__svc_jsonb_readable.sql). Written by svc_write_checked (R__svc_write_checked.sql).
CREATE TABLE aspects (
  urn             text COLLATE "C" NOT NULL,
  aspect          text NOT NULL,
  version         bigint NOT NULL,
  metadata        json NOT NULL,
  system_metadata jsonb NOT NULL DEFAULT '{}',
  created_on      timestamptz NOT NULL DEFAULT now(),
  created_by      text NOT NULL,
  PRIMARY KEY (urn, aspect, version)
);

-- Listing entities of a type walks the latest key aspects in URN order. (Lookups of given entities
-- must not take this index with the aspect as its only key: they say `version <= 0`, which its
-- predicate does not cover; see R__svc_latest_rows.sql.)
CREATE INDEX aspects_latest_by_aspect ON aspects (aspect, urn) WHERE version = 0;

-- A qualified name belongs to one structured property: looked up on every definition write.
CREATE INDEX property_qualified_names ON aspects (((metadata::jsonb) ->> 'qualifiedName'))
  WHERE aspect = 'propertyDefinition' AND version = 0;

-- Search names an unversioned property by its field, the qualified name with `.` replaced by `_`; two
-- names with one field (`col.a_b`, `col_a.b`) cannot both be held (R__svc_definition_write_contexts.sql).
CREATE INDEX property_field_names ON aspects ((replace((metadata::jsonb) ->> 'qualifiedName', '.', '_')))
  WHERE aspect = 'propertyDefinition' AND version = 0;

----------------------------------------------------------------------------------------------------
-- Structured property assignments
----------------------------------------------------------------------------------------------------

-- The record of structured property assignments: one row per property set on an entity's latest
-- structuredProperties row, with the definition version its values were written under. It hides
-- values written under an older version from every read and drives the cleanups after a hard delete
-- or a versioned change. Only triggers write it, from the latest row's value, in the statement that
-- writes that row (R__svc_record_inserted_assignments.sql, R__svc_record_assignments.sql).
CREATE TABLE structured_property_assignments (
  entity_urn         text COLLATE "C" NOT NULL,
  property_urn       text COLLATE "C" NOT NULL,
  -- The definition's version when the values were written ('' for a property without a version).
  definition_version text NOT NULL DEFAULT '',
  PRIMARY KEY (entity_urn, property_urn)
);
-- The cleanups walk the entities holding a property, in URN order. Partial on a predicate every row
-- meets: a lookup by property (`property_urn = …`, whose strict operator implies it) can use it, a
-- lookup by entity cannot. Plans are generic, made once per connection; made on a (nearly) empty table
-- a plan could take this index for a lookup by entity, with the entity as a condition on its second
-- column, and read the whole index on every write and read for as long as the connection lived.
-- test/server/plan-stability.test.ts checks it.
CREATE INDEX assignments_by_property ON structured_property_assignments (property_urn, entity_urn) WHERE property_urn IS NOT NULL;

-- The same record for older versions of structuredProperties rows (reads with `?version=N`): when a
-- latest row moves into history, its record is kept under the version number it gets
-- (R__svc_keep_assignment_history.sql).
CREATE TABLE structured_property_assignment_history (
  entity_urn         text COLLATE "C" NOT NULL,
  -- The row's version in `aspects` (1 .. n-1; 0 is the latest, whose record is structured_property_assignments).
  aspect_version     bigint NOT NULL,
  property_urn       text COLLATE "C" NOT NULL,
  definition_version text NOT NULL,
  PRIMARY KEY (entity_urn, aspect_version, property_urn)
);

----------------------------------------------------------------------------------------------------
-- Tokens, secrets and tasks
----------------------------------------------------------------------------------------------------

-- API tokens: only a SHA-256 of each token is kept. A token with an `expires_at` is refused from
-- then on (DataHub's maintenance job revokes such tokens: auth/tokens.ts).
CREATE TABLE api_tokens (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  role        text NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
  token_hash  text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text NOT NULL,
  revoked_at  timestamptz,
  expires_at  timestamptz
);

-- Secrets of the deployment, made once in the database so every server process and replica shares
-- them. 'scroll' signs the scroll ids of entity listings (entities/scrollIds.ts), so a scroll id is
-- only ever one svc issued. (gen_random_uuid draws from Postgres' strong random source: two of them
-- are 244 random bits.)
CREATE TABLE svc_secrets (
  name   text PRIMARY KEY,
  secret bytea NOT NULL
);
INSERT INTO svc_secrets (name, secret)
  VALUES ('scroll', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- Durable background work (value cleanup after a hard delete or a version change, truncations, index
-- rebuilds; tasks/): queued in the transaction of the write that causes it, claimed with a lease
-- (renewed while it runs; every update names the claim, so a runner that lost its lease cannot
-- overwrite its successor) so a task of a killed server is picked up again, retried with backoff after
-- a failure, observable via /api/tasks.
CREATE TABLE tasks (
  id           bigserial PRIMARY KEY,
  kind         text NOT NULL,
  subject      text NOT NULL,
  params       jsonb NOT NULL DEFAULT '{}',
  state        text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'RUNNING', 'SUCCEEDED')),
  total        bigint,
  done         bigint NOT NULL DEFAULT 0,
  error        text,
  attempts     int NOT NULL DEFAULT 0,
  failures     int NOT NULL DEFAULT 0,
  claim_id     uuid,
  lease_until  timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
-- (Open tasks are few: this index finds them.)
CREATE INDEX tasks_open ON tasks (created_at) WHERE state IN ('PENDING', 'RUNNING');
CREATE INDEX tasks_by_subject ON tasks (subject, created_at DESC);

----------------------------------------------------------------------------------------------------
-- Search (server/src/search/)
----------------------------------------------------------------------------------------------------

-- The transactional outbox: one row per change of an entity's search document, written by triggers in
-- the statement that changes what the document is built from (the entity's key aspect, its status, its
-- structured properties; for a structured property, its definition), whichever path wrote it
-- (R__svc_aspects_inserted.sql, R__svc_search_changed.sql). The dispatcher (search/outbox.ts) rebuilds
-- each named entity's document from the primary store, applies it to the backend, then deletes the
-- rows it handled: a change is delivered at least once, and the latest state always wins.
CREATE TABLE search_outbox (
  id        bigserial PRIMARY KEY,
  urn       text COLLATE "C" NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- A step takes every row of the entities it delivers, not only the oldest ones (one delivery stands for all).
CREATE INDEX search_outbox_by_urn ON search_outbox (urn);

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

-- The `postgres` backend (search/postgresBackend.ts): one row per document (the entity, and its soft
-- delete), and one row per searchable value (key-aspect fields and structured properties), indexed for
-- filters and counts. Field types come from the registry and the definitions, as OpenSearch's mappings
-- do. Both are a projection of the primary store, rebuilt from it by `system-update --restore-indices`.
CREATE TABLE search_documents (
  entity_type text NOT NULL,
  urn         text COLLATE "C" NOT NULL,
  removed     boolean NOT NULL,
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
CREATE INDEX search_values_by_number ON search_values (entity_type, field, num_value, urn) WHERE num_value IS NOT NULL;
CREATE INDEX search_values_by_urn ON search_values (urn);
-- String values by a bounded key, their first 256 characters: a btree entry holds at most 2,704 bytes,
-- and svc accepts string values of any length a request body allows and schemaField URNs of 2,048
-- bytes, so neither the whole value nor the URN can be in the key (a row that does not fit cannot be
-- inserted, and the dispatcher would fail on it again and again). 256 characters take at most 1,024
-- bytes, beside the entity type (at most 24) and the field (at most 543: a qualified name of 480 bytes
-- under structuredProperties._versioned with a version and a type). Searches compare the key first and
-- the whole value only when the value asked for has 256 characters or more (search/postgresBackend.ts);
-- ranges and prefixes compare keys in the order of values (collation "C"). The other btree indexes on
-- user text are bounded by the URN limits (search_values_by_number at most 2,643 bytes, measured).
CREATE INDEX search_values_by_string_prefix ON search_values (entity_type, field, left(str_value, 256));

-- OpenSearch index rebuilds in progress (search/indexRebuild.ts): while an entity type's index is
-- rebuilt into `index`, the outbox dispatcher writes its documents there as well as behind the alias.
-- `mark`: the last outbox row of the re-queue of every entity of the type; once every row up to it is
-- delivered, the new index holds what the primary store holds and the alias is swapped to it.
CREATE TABLE search_rebuilds (
  entity_type text PRIMARY KEY,
  index       text NOT NULL,
  mark        bigint NOT NULL,
  total       bigint NOT NULL
);

-- Entities whose search document could not be delivered: the dispatcher (search/outbox.ts,
-- search/deliveryFailures.ts) takes them out of the outbox, in the step that tried them, so that they
-- hold back no other change, and keeps them here until a later try delivers them (or they are gone). A
-- row is the durable record that the entity's document is not what the primary store holds: like an
-- outbox row, it is written in the transaction that deletes the outbox rows it stands for.
--
-- queued_at:  the oldest change of the entity not delivered yet (the search lag it causes).
-- error:      what the backend said, the last time.
-- retry_at:   when the dispatcher tries again (backing off as attempts grow); a new change of the
--             entity is tried at once.
CREATE TABLE search_failures (
  urn             text COLLATE "C" PRIMARY KEY,
  queued_at       timestamptz NOT NULL,
  failing_since   timestamptz NOT NULL,
  attempts        integer NOT NULL,
  error           text NOT NULL,
  last_attempt_at timestamptz NOT NULL,
  retry_at        timestamptz NOT NULL
);
CREATE INDEX search_failures_by_retry ON search_failures (retry_at);
-- The listing (GET /api/search/delivery) and the lag read the longest waiting first.
CREATE INDEX search_failures_by_age ON search_failures (queued_at, urn);

----------------------------------------------------------------------------------------------------
-- Time series (server/src/timeseries/)
----------------------------------------------------------------------------------------------------

-- Time series entries (datasetProfile, operation, …: not versioned, one row per entry), partitioned so
-- that a truncation drops whole months instead of deleting row by row: first by index (the entity type
-- and aspect, named as DataHub names the index, e.g. dataset_datasetprofileaspect_v1), then by calendar
-- month (UTC) of timestampMillis. Partitions are created on first use by svc_timeseries_partition
-- (R__svc_timeseries_partition.sql), before the write that needs them.
--
-- In the `opensearch` store (timeseries/opensearchStore.ts) this table is the outbox of time series
-- writes, shipped to OpenSearch by the search dispatcher and deleted once there.
CREATE SEQUENCE timeseries_entries_id_seq;

CREATE TABLE timeseries_entries (
  id               bigint NOT NULL DEFAULT nextval('timeseries_entries_id_seq'),
  index_name       text NOT NULL,
  entity_type      text NOT NULL,
  aspect           text NOT NULL,
  urn              text COLLATE "C" NOT NULL,
  timestamp_millis bigint NOT NULL,
  metadata         json NOT NULL,
  system_metadata  jsonb NOT NULL DEFAULT '{}',
  created_on       timestamptz NOT NULL DEFAULT now(),
  created_by       text NOT NULL,
  -- The entry's identity, as DataHub derives the id of a time series document (timeseries/entryKey.ts,
  -- docs/reference/timeseries.md): unique, so that a write of an entry with a stored one's identity
  -- replaces it (aspectStore.insertTimeseries) and ingesting the same entries again leaves them as they
  -- were. Also the `_id` of the entry's document in the `opensearch` store.
  entry_key        uuid NOT NULL
) PARTITION BY LIST (index_name);
ALTER SEQUENCE timeseries_entries_id_seq OWNED BY timeseries_entries.id;

-- One entry per identity (the partition keys lead, as a unique index of a partitioned table needs).
CREATE UNIQUE INDEX timeseries_entries_by_key ON timeseries_entries (index_name, timestamp_millis, entry_key);

-- The latest entries of an entity (reads, the DELETE of the latest entry); entries by time (truncation).
CREATE INDEX timeseries_entries_by_urn ON timeseries_entries (urn, aspect, timestamp_millis DESC, id DESC);
CREATE INDEX timeseries_entries_by_time ON timeseries_entries (timestamp_millis);
-- The shipping step of the `opensearch` store takes the oldest rows of the outbox first.
CREATE INDEX timeseries_entries_by_id ON timeseries_entries (id);

-- Deletions in the `opensearch` store of entries already shipped: they wait here for the dispatcher,
-- ordered with the writes by the same sequence. `entry` deletes the entries of the listed identities
-- (entry_key) written before it (the latest of an aspect, DataHub's DELETE, with any earlier value of
-- the same identity); `entity` every entry of the URN written before it (a hard delete); `range`
-- the entries of `urn` in `index_name` with start_millis <= timestampMillis <= end_millis (an absent
-- bound is open) written before it (DataHub's `POST /entities?action=delete` with a time range).
CREATE TABLE timeseries_deletes (
  id           bigint PRIMARY KEY DEFAULT nextval('timeseries_entries_id_seq'),
  kind         text NOT NULL CONSTRAINT timeseries_deletes_kind_check CHECK (kind IN ('entry', 'entity', 'range')),
  index_name   text,
  urn          text COLLATE "C" NOT NULL,
  entry_keys   uuid[] NOT NULL DEFAULT '{}',
  queued_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  start_millis bigint,
  end_millis   bigint
);
CREATE INDEX timeseries_deletes_by_urn ON timeseries_deletes (urn);

-- The indices that have received entries, recorded by the shipping step that delivers their first
-- ones (in the transaction that takes those entries out of the outbox), so that a read in any process
-- knows where to look without asking OpenSearch.
CREATE TABLE timeseries_indices (
  index_name text PRIMARY KEY
);

-- A truncation by reindex in `opensearch` mode moves the index's alias to a new index before its
-- transaction commits (the transaction that records the truncation's task). A failure or a kill
-- between the two would leave the alias on the new index with no task to finish the copy, and every
-- entry of the aspect unreadable. So the request records beforehand, committed on its own, what it is
-- about to change; the search dispatcher, which waits for the request's transaction (the same lock),
-- finds the record and either drops it (the truncation committed: its task carries the same token) or
-- puts OpenSearch back as it was (timeseries/opensearchStore.ts, settleGuards).
CREATE TABLE timeseries_truncation_guards (
  token            uuid PRIMARY KEY,
  alias            text NOT NULL,
  fresh_index      text NOT NULL,
  old_indices      text[] NOT NULL,
  opensearch_task  text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
