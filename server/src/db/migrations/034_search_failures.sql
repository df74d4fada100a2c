-- Entities whose search document could not be delivered (issue 48): the search dispatcher
-- (search/outbox.ts) takes them out of the outbox, in the step that tried them, so that they hold back
-- no other change, and keeps them here until a later try delivers them (or they are gone). A row is the
-- durable record that the entity's document is not what the primary store holds: like an outbox row, it
-- is written in the transaction that deletes the outbox rows it stands for, so nothing is lost across a
-- crash.
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
