-- Conversations belong to a scope: who may append to them and see them through the
-- gateway (a hash of the caller's credential, a tenant, or `anonymous`). Conversations
-- made before scopes existed get `unscoped`: owned by nobody yet, the first scoped
-- caller that claims one takes it (`Store::claim`).
ALTER TABLE conversations ADD COLUMN scope TEXT NOT NULL DEFAULT 'unscoped';
CREATE INDEX conversations_by_scope ON conversations (scope, pk);
