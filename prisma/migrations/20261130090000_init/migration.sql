-- Organizations, users, teams, conversations and messages, plus what Prisma cannot express:
-- the full-text search vector over a conversation and the triggers that keep it and the
-- conversation's counters current as messages are added, edited or removed.

CREATE TYPE "message_role" AS ENUM ('user', 'assistant', 'system', 'tool');

CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "users" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "email" TEXT,
    "name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("organization_id", "id")
);

CREATE TABLE "teams" (
    "organization_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "teams_pkey" PRIMARY KEY ("organization_id", "id")
);

CREATE TABLE "team_memberships" (
    "organization_id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "team_memberships_pkey" PRIMARY KEY ("organization_id", "team_id", "user_id")
);

CREATE TABLE "conversations" (
    "id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "message_count" INTEGER NOT NULL DEFAULT 0,
    "token_count" INTEGER NOT NULL DEFAULT 0,
    "deleted_at" TIMESTAMPTZ(3),
    "search_vector" tsvector,
    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "messages" (
    "id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "organization_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "role" "message_role" NOT NULL,
    "content" TEXT NOT NULL,
    "token_count" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "team_memberships_organization_id_user_id_idx" ON "team_memberships"("organization_id", "user_id");
CREATE INDEX "conversations_organization_id_created_at_id_idx" ON "conversations"("organization_id", "created_at" DESC, "id" DESC);
CREATE UNIQUE INDEX "messages_conversation_id_position_key" ON "messages"("conversation_id", "position");
CREATE INDEX "messages_organization_id_idx" ON "messages"("organization_id");
-- Full-text search always filters by organization too; the GIN index finds matches, the
-- organization filter is then a cheap recheck on the heap row.
CREATE INDEX "conversations_search_vector_idx" ON "conversations" USING GIN ("search_vector");

ALTER TABLE "users" ADD CONSTRAINT "users_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "teams" ADD CONSTRAINT "teams_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "team_memberships" ADD CONSTRAINT "team_memberships_organization_id_team_id_fkey" FOREIGN KEY ("organization_id", "team_id") REFERENCES "teams"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "team_memberships" ADD CONSTRAINT "team_memberships_organization_id_user_id_fkey" FOREIGN KEY ("organization_id", "user_id") REFERENCES "users"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_organization_id_user_id_fkey" FOREIGN KEY ("organization_id", "user_id") REFERENCES "users"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Search document: the title at weight A, the messages' content at weight B, English stemming.
-- The configuration is named explicitly so the server's default_text_search_config cannot
-- change what gets indexed.
-- ---------------------------------------------------------------------------------------------

-- The whole document, recomputed from the messages (used when a title changes or a message is
-- edited or removed). Only the first 500,000 characters are indexed: a tsvector cannot exceed
-- 1 MB, and a very long conversation must still get a search document rather than fail its write.
CREATE FUNCTION conversation_search_vector(conversation UUID, title TEXT) RETURNS tsvector
LANGUAGE sql STABLE AS $$
  SELECT setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
      || coalesce(setweight(to_tsvector('english'::regconfig, left(string_agg(m.content, E'\n' ORDER BY m.position), 500000)), 'B'), ''::tsvector)
  FROM messages m
  WHERE m.conversation_id = conversation
$$;

CREATE FUNCTION conversations_before_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.search_vector := setweight(to_tsvector('english'::regconfig, NEW.title), 'A');
  ELSIF NEW.title IS DISTINCT FROM OLD.title THEN
    NEW.search_vector := conversation_search_vector(NEW.id, NEW.title);
    NEW.updated_at := now();
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER conversations_before_write
BEFORE INSERT OR UPDATE OF title ON conversations
FOR EACH ROW EXECUTE FUNCTION conversations_before_write();

-- Appending is the common write: one statement-level trigger per INSERT statement updates each
-- touched conversation once (a batch of 20 messages is one UPDATE, not 20), appending only the
-- new messages' lexemes instead of re-reading the whole conversation.
CREATE FUNCTION messages_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE conversations c
  SET message_count = c.message_count + added.messages,
      token_count = c.token_count + added.tokens,
      updated_at = greatest(c.updated_at, added.last_at),
      search_vector = CASE
        -- A tsvector is capped at 1 MB; near the cap, rebuild from the (truncated) whole text.
        WHEN pg_column_size(c.search_vector) + pg_column_size(added.vector) > 900000
          THEN conversation_search_vector(c.id, c.title)
        ELSE coalesce(c.search_vector, ''::tsvector) || added.vector
      END
  FROM (
    SELECT conversation_id,
           count(*) AS messages,
           sum(token_count) AS tokens,
           max(created_at) AS last_at,
           setweight(to_tsvector('english'::regconfig, left(string_agg(content, E'\n' ORDER BY position), 500000)), 'B') AS vector
    FROM new_messages
    GROUP BY conversation_id
  ) added
  WHERE c.id = added.conversation_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER messages_after_insert
AFTER INSERT ON messages
REFERENCING NEW TABLE AS new_messages
FOR EACH STATEMENT EXECUTE FUNCTION messages_after_insert();

-- Edits and removals are rare: recompute the touched conversations from scratch.
CREATE FUNCTION messages_after_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE conversations c
  SET message_count = totals.messages,
      token_count = totals.tokens,
      updated_at = now(),
      search_vector = conversation_search_vector(c.id, c.title)
  FROM (
    SELECT touched.conversation_id,
           count(m.id) AS messages,
           coalesce(sum(m.token_count), 0) AS tokens
    FROM (SELECT DISTINCT conversation_id FROM old_messages) touched
    LEFT JOIN messages m ON m.conversation_id = touched.conversation_id
    GROUP BY touched.conversation_id
  ) totals
  WHERE c.id = totals.conversation_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER messages_after_update
AFTER UPDATE ON messages
REFERENCING OLD TABLE AS old_messages
FOR EACH STATEMENT EXECUTE FUNCTION messages_after_change();

CREATE TRIGGER messages_after_delete
AFTER DELETE ON messages
REFERENCING OLD TABLE AS old_messages
FOR EACH STATEMENT EXECUTE FUNCTION messages_after_change();
