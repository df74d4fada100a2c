-- Secrets of the deployment, made once in the database so every server process and replica shares
-- them. 'scroll' signs the scroll ids of entity listings, so a scroll id is only ever one svc issued.
-- (gen_random_uuid draws from Postgres' strong random source: two of them are 244 random bits.)
CREATE TABLE svc_secrets (
  name   text PRIMARY KEY,
  secret bytea NOT NULL
);
INSERT INTO svc_secrets (name, secret)
  VALUES ('scroll', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- The JSON text `t` with every escape that jsonb cannot hold replaced by \ufffd (the Unicode
-- replacement character): \u0000, and a UTF-16 surrogate escape that is not part of a pair. Values
-- holding them were stored as `json` before svc refused such strings at the door; comparing one with
-- a new value (as jsonb) failed, so later writes of the aspect failed. Backslashes appear in JSON text
-- only inside strings, each starting an escape, so the text is read escape by escape.
CREATE FUNCTION svc_repair_json(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  out  text := '';
  rest text := t;
  at   int;
  unit int;
  next int;
BEGIN
  LOOP
    at := strpos(rest, E'\\');
    IF at = 0 THEN
      RETURN out || rest;
    END IF;
    out := out || left(rest, at - 1);
    rest := substr(rest, at);
    IF substr(rest, 2, 1) <> 'u' THEN
      -- \" \\ \/ \b \f \n \r \t: kept as they are.
      out := out || left(rest, 2);
      rest := substr(rest, 3);
      CONTINUE;
    END IF;
    unit := ('x' || lpad(substr(rest, 3, 4), 8, '0'))::bit(32)::int;
    IF unit BETWEEN 55296 AND 56319 AND substr(rest, 7, 2) = E'\\u' THEN
      next := ('x' || lpad(substr(rest, 9, 4), 8, '0'))::bit(32)::int;
      IF next BETWEEN 56320 AND 57343 THEN
        -- A high surrogate followed by a low one: one character, kept.
        out := out || left(rest, 12);
        rest := substr(rest, 13);
        CONTINUE;
      END IF;
    END IF;
    IF unit = 0 OR unit BETWEEN 55296 AND 57343 THEN
      out := out || E'\\ufffd';
    ELSE
      out := out || left(rest, 6);
    END IF;
    rest := substr(rest, 7);
  END LOOP;
END
$$;

-- Whether `v` can be read as jsonb (what every comparison and search of svc does with it).
CREATE FUNCTION svc_jsonb_readable(v json) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  PERFORM v::jsonb;
  RETURN true;
EXCEPTION WHEN OTHERS THEN
  RETURN false;
END
$$;

-- Repairs what is stored. Only values holding such an escape are looked at (a cheap text test first).
UPDATE aspects SET metadata = svc_repair_json(metadata::text)::json
  WHERE metadata::text ~ '\\u(0000|[dD][89a-fA-F])' AND NOT svc_jsonb_readable(metadata);
UPDATE timeseries_aspects SET metadata = svc_repair_json(metadata::text)::json
  WHERE metadata::text ~ '\\u(0000|[dD][89a-fA-F])' AND NOT svc_jsonb_readable(metadata);
