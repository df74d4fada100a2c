-- Search resolves field names through the structured properties' definitions and statuses, and each
-- server keeps what it resolved until one of them changes (properties/definitionCache.ts). A change
-- made by another server is heard through this notification (channel `svc_properties`), sent as the
-- change commits.
CREATE OR REPLACE FUNCTION svc_properties_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_properties', '');
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER aspects_property_written AFTER INSERT OR UPDATE ON aspects
  FOR EACH ROW WHEN (NEW.version = 0 AND NEW.aspect IN ('propertyDefinition', 'status') AND NEW.urn LIKE 'urn:li:structuredProperty:%')
  EXECUTE FUNCTION svc_properties_notify();
CREATE OR REPLACE TRIGGER aspects_property_deleted AFTER DELETE ON aspects
  FOR EACH ROW WHEN (OLD.version = 0 AND OLD.aspect IN ('propertyDefinition', 'status') AND OLD.urn LIKE 'urn:li:structuredProperty:%')
  EXECUTE FUNCTION svc_properties_notify();
