-- The chunk index gains the knowledge base id as a column, so a search restricts itself to its
-- bases inside FTS5 (`kb_id : "kb_…" AND (…)`) instead of ranking every tenant's matches and
-- filtering after. bm25() gives that column weight 0, so it never changes the ranking.
DROP TRIGGER IF EXISTS `kb_chunks_fts_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `kb_chunks_fts_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `kb_chunks_fts_update`;
--> statement-breakpoint
DROP TABLE IF EXISTS `kb_chunks_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `kb_chunks_fts` USING fts5(
	kb_id,
	title,
	content,
	content = 'kb_chunks',
	content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
INSERT INTO kb_chunks_fts (kb_chunks_fts) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_insert` AFTER INSERT ON `kb_chunks` BEGIN
	INSERT INTO kb_chunks_fts (rowid, kb_id, title, content) VALUES (new.id, new.kb_id, new.title, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_delete` AFTER DELETE ON `kb_chunks` BEGIN
	INSERT INTO kb_chunks_fts (kb_chunks_fts, rowid, kb_id, title, content) VALUES ('delete', old.id, old.kb_id, old.title, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_update` AFTER UPDATE OF kb_id, title, content ON `kb_chunks` BEGIN
	INSERT INTO kb_chunks_fts (kb_chunks_fts, rowid, kb_id, title, content) VALUES ('delete', old.id, old.kb_id, old.title, old.content);
	INSERT INTO kb_chunks_fts (rowid, kb_id, title, content) VALUES (new.id, new.kb_id, new.title, new.content);
END;
