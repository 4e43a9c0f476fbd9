-- Each document's size as the account's knowledge_bytes quota counts it (UTF-8 bytes of content,
-- title and metadata), with an index that covers an account's usage (count and sum per base), so
-- the quota check on an upload never reads the documents themselves. Existing rows are measured.
ALTER TABLE `kb_documents` ADD `bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `kb_documents` SET `bytes` = length(CAST(`content` AS BLOB)) + coalesce(length(CAST(`title` AS BLOB)), 0) + length(CAST(`metadata` AS BLOB));--> statement-breakpoint
CREATE INDEX `kb_documents_bytes_idx` ON `kb_documents` (`kb_id`,`bytes`);
