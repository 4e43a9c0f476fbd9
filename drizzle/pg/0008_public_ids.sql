-- The ids a tenant sees of its ledger entries and FAQ entries: random (prefix and 128 bits in hex,
-- from gen_random_uuid), not the integer keys, which count up across all tenants and so tell the
-- deployment's volume. A volatile default is drawn for each row already here as the column is added.
ALTER TABLE "faq_entries" ADD COLUMN "public_id" text DEFAULT ('faqe_' || replace(gen_random_uuid()::text, '-', '')) NOT NULL;--> statement-breakpoint
ALTER TABLE "ledger" ADD COLUMN "public_id" text DEFAULT ('led_' || replace(gen_random_uuid()::text, '-', '')) NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "faq_entries_public_id_idx" ON "faq_entries" USING btree ("public_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_public_id_idx" ON "ledger" USING btree ("public_id");