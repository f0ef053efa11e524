-- Issue 22: several indexer processes share the two job queues. A claim now writes a fresh
-- lease_token with its lease, and every later step of that attempt (the vector write, progress,
-- completion, a retry's backoff, handing the job back) names the token: a worker whose lease
-- ran out and was taken over by another finds its token gone and stops, instead of writing
-- over the newer attempt or deleting a job it no longer holds. NULL: not claimed since it was
-- (re)enqueued.

ALTER TABLE "search_index_jobs" ADD COLUMN "lease_token" UUID;
ALTER TABLE "document_index_jobs" ADD COLUMN "lease_token" UUID;
