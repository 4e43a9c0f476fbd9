CREATE TABLE `idempotent_charges` (
	`request_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`state` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idempotent_charges_created_idx` ON `idempotent_charges` (`created_at`);