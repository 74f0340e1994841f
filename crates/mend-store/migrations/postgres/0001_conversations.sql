-- Conversations, their messages, and the idempotency keys of appends.
--
-- `body` is text, not jsonb: jsonb reorders keys and drops white space and duplicate
-- keys, and the store promises the appended bytes back. `seq` is assigned by the store
-- under a row lock on the conversation, never by the caller.
CREATE TABLE conversations (
    pk          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          text   NOT NULL UNIQUE,
    format      text   NOT NULL,
    created_at  bigint NOT NULL,           -- unix milliseconds
    parent_id   text,                      -- forked from; no foreign key: forks outlive parents
    forked_at   bigint,                    -- the parent's last sequence copied
    last_seq    bigint NOT NULL DEFAULT 0
);

CREATE TABLE messages (
    conversation bigint NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
    seq          bigint NOT NULL,
    message_id   text   NOT NULL,
    role         text   NOT NULL,
    body         text   NOT NULL,
    appended_at  bigint NOT NULL,
    PRIMARY KEY (conversation, seq)
);

CREATE TABLE append_keys (
    conversation bigint NOT NULL REFERENCES conversations(pk) ON DELETE CASCADE,
    key          text   NOT NULL,
    first_seq    bigint NOT NULL,
    count        bigint NOT NULL,
    created_at   bigint NOT NULL,
    PRIMARY KEY (conversation, key)
);
