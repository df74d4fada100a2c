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
