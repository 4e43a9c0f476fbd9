-- Each chunk's FTS5 token count (BM25's document length), so a search computes BM25 from the
-- statistics of the bases it searches instead of FTS5's whole-table ones. The index reads a base's
-- chunks in id order with their counts (src/knowledge/search.ts). Existing rows keep 0 here; the
-- migration's code step (src/storage/migrations.ts) fills them from FTS5's own counts
-- (kb_chunks_fts_docsize). kb_chunks_vocab reads the index's instances of a token (chunk, column,
-- offset): a search's matches and their positions of the query's tokens.
DROP INDEX `kb_chunks_kb_idx`;--> statement-breakpoint
ALTER TABLE `kb_chunks` ADD `tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `kb_chunks_kb_idx` ON `kb_chunks` (`kb_id`,`id`,`tokens`);--> statement-breakpoint
CREATE VIRTUAL TABLE `kb_chunks_vocab` USING fts5vocab(`kb_chunks_fts`, `instance`);
