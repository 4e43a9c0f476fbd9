ALTER TABLE `ledger` ADD `input_tokens` integer;--> statement-breakpoint
ALTER TABLE `ledger` ADD `output_tokens` integer;--> statement-breakpoint
ALTER TABLE `usage_daily` ADD `input_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_daily` ADD `output_tokens` integer DEFAULT 0 NOT NULL;