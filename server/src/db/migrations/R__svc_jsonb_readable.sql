-- Whether a stored `json` value can be read as jsonb, as every comparison and search of svc reads it.
-- `json` takes \u0000 and lone UTF-16 surrogate escapes, jsonb does not: svc refuses such strings at
-- the door, and test/search/input-fuzz.test.ts checks with this function that nothing it accepted is
-- stored unreadable.
CREATE OR REPLACE FUNCTION svc_jsonb_readable(v json) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  PERFORM v::jsonb;
  RETURN true;
EXCEPTION WHEN OTHERS THEN
  RETURN false;
END
$$;
