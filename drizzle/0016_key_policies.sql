ALTER TABLE `api_keys` ADD `policy` text;--> statement-breakpoint
CREATE INDEX `ledger_key_time_idx` ON `ledger` (`key_id`,`created_at`);