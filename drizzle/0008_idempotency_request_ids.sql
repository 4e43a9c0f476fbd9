ALTER TABLE `idempotency_keys` ADD `request_ids` text;--> statement-breakpoint
CREATE INDEX `ledger_request_idx` ON `ledger` (`request_id`);