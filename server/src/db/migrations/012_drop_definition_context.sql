-- Every propertyDefinition write reads what it checks with svc_definition_write_contexts (migration
-- 011); a write creating a property does so under its qualified name's lock, taken by the caller.
DROP FUNCTION svc_definition_write_context(text, text, text);
