-- Each document's size as the account's knowledge_bytes quota counts it (UTF-8 bytes of content,
-- title and metadata), with an index that covers an account's usage per base. Existing rows are measured.
ALTER TABLE "kb_documents" ADD COLUMN "bytes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "kb_documents" SET "bytes" = octet_length("content") + coalesce(octet_length("title"), 0) + octet_length("metadata"::text);--> statement-breakpoint
CREATE INDEX "kb_documents_bytes_idx" ON "kb_documents" USING btree ("kb_id","bytes");
