CREATE TABLE `webhook_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`event_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`account_id` text,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_at` integer NOT NULL,
	`claim` text,
	`claimed_until` integer,
	`last_status_code` integer,
	`last_error` text,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_outbox_due_idx` ON `webhook_outbox` (`status`,`next_at`);--> statement-breakpoint
CREATE INDEX `webhook_outbox_endpoint_idx` ON `webhook_outbox` (`endpoint_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`balance_below` integer,
	`spike_factor` integer,
	`expiring_days` integer,
	`format` text DEFAULT 'json' NOT NULL,
	`secret` text NOT NULL,
	`prev_secret` text,
	`prev_until` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_account_idx` ON `webhooks` (`account_id`);