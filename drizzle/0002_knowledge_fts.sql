-- Full-text index over knowledge base chunks (BM25). External content: the text lives once, in
-- kb_chunks; triggers keep the index in step, including deletes cascaded from documents and bases.
CREATE VIRTUAL TABLE `kb_chunks_fts` USING fts5(
	title,
	content,
	content = 'kb_chunks',
	content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_insert` AFTER INSERT ON `kb_chunks` BEGIN
	INSERT INTO kb_chunks_fts (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_delete` AFTER DELETE ON `kb_chunks` BEGIN
	INSERT INTO kb_chunks_fts (kb_chunks_fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER `kb_chunks_fts_update` AFTER UPDATE OF title, content ON `kb_chunks` BEGIN
	INSERT INTO kb_chunks_fts (kb_chunks_fts, rowid, title, content) VALUES ('delete', old.id, old.title, old.content);
	INSERT INTO kb_chunks_fts (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
