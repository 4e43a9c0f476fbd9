-- The ids a tenant sees of its ledger entries and FAQ entries: random (prefix and 128 bits in hex),
-- not the integer keys, which count up across all tenants and so tell the deployment's volume. The
-- integer keys stay for order and joins. Inserts name the column (src/storage/schema.ts,
-- publicIdSql: SQLite cannot add a column with a random default); the rows already here get theirs.
ALTER TABLE `faq_entries` ADD `public_id` text;--> statement-breakpoint
UPDATE `faq_entries` SET `public_id` = 'faqe_' || lower(hex(randomblob(16))) WHERE `public_id` IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `faq_entries_public_id_idx` ON `faq_entries` (`public_id`);--> statement-breakpoint
ALTER TABLE `ledger` ADD `public_id` text;--> statement-breakpoint
UPDATE `ledger` SET `public_id` = 'led_' || lower(hex(randomblob(16))) WHERE `public_id` IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_public_id_idx` ON `ledger` (`public_id`);
