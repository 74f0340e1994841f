-- Conversations, their messages, and the idempotency keys of appends.
--
-- A message row keeps the message's JSON text verbatim in `body`; `seq` is assigned by
-- the store (last_seq + 1 inside the append's transaction), never by the caller.
CREATE TABLE conversations (
    pk          INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    format      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,          -- unix milliseconds
    parent_id   TEXT,                      -- forked from; no foreign key: forks outlive parents
    forked_at   INTEGER,                   -- the parent's last sequence copied
    last_seq    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE messages (
    conversation INTEGER NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    message_id   TEXT    NOT NULL,
    role         TEXT    NOT NULL,
    body         TEXT    NOT NULL,
    appended_at  INTEGER NOT NULL,
    UNIQUE (conversation, seq)
);

CREATE TABLE append_keys (
    conversation INTEGER NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
    key          TEXT    NOT NULL,
    first_seq    INTEGER NOT NULL,
    count        INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (conversation, key)
) WITHOUT ROWID;
