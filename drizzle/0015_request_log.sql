CREATE TABLE `request_log` (
	`request_id` text PRIMARY KEY NOT NULL,
	`time` integer NOT NULL,
	`account_id` text NOT NULL,
	`key_id` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`function` text,
	`status` integer NOT NULL,
	`error_code` text,
	`provider` text,
	`model` text,
	`latency_ms` integer NOT NULL,
	`credits` integer DEFAULT 0 NOT NULL,
	`cache` text,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`idempotent_replay` integer DEFAULT false NOT NULL,
	`guardrails` text
);
--> statement-breakpoint
CREATE INDEX `request_log_time_idx` ON `request_log` (`time`);--> statement-breakpoint
CREATE INDEX `request_log_account_time_idx` ON `request_log` (`account_id`,`time`);--> statement-breakpoint
CREATE INDEX `request_log_account_fn_time_idx` ON `request_log` (`account_id`,`function`,`time`);--> statement-breakpoint
CREATE INDEX `request_log_key_time_idx` ON `request_log` (`key_id`,`time`);