-- members (docs/teams.md): an account's people, each with one role; the login each account had becomes its first owner
CREATE TABLE `members` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`name` text,
	`role` text NOT NULL,
	`password_hash` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`password_changed_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `members_email_idx` ON `members` (`email`);--> statement-breakpoint
CREATE INDEX `members_account_idx` ON `members` (`account_id`);--> statement-breakpoint
INSERT INTO `members` (`id`, `account_id`, `email`, `name`, `role`, `password_hash`, `created_at`, `password_changed_at`)
	SELECT 'mem_' || lower(hex(randomblob(12))), `account_id`, `email`, NULL, 'owner', `password_hash`, `created_at`, `password_changed_at` FROM `logins`;--> statement-breakpoint
DROP TABLE `logins`;--> statement-breakpoint
-- an invitation: only the SHA-256 of its one-time token is kept
CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`role` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token_idx` ON `invitations` (`token_hash`);--> statement-breakpoint
ALTER TABLE `dashboard_sessions` ADD `member_id` text;--> statement-breakpoint
UPDATE `dashboard_sessions` SET `member_id` = (SELECT m.`id` FROM `members` m WHERE m.`account_id` = `dashboard_sessions`.`account_id`) WHERE `kind` = 'account';--> statement-breakpoint
CREATE INDEX `dashboard_sessions_member_idx` ON `dashboard_sessions` (`member_id`);--> statement-breakpoint
-- the member a key was made by in the dashboard (null: the admin API or the CLI)
ALTER TABLE `api_keys` ADD `owner_member_id` text;
