CREATE TABLE `audit_head` (
	`chain` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_log` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`at` integer NOT NULL,
	`actor` text NOT NULL,
	`account_id` text,
	`action` text NOT NULL,
	`target_id` text,
	`before` text,
	`after` text,
	`client` text,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_log_id_idx` ON `audit_log` (`id`);--> statement-breakpoint
CREATE INDEX `audit_log_account_seq_idx` ON `audit_log` (`account_id`,`seq`);--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);--> statement-breakpoint
-- the chain's head before its first entry: seq 0 and the genesis hash (docs/audit.md)
INSERT INTO `audit_head` (`chain`, `seq`, `hash`) VALUES ('gateway', 0, '0000000000000000000000000000000000000000000000000000000000000000');--> statement-breakpoint
-- append-only: a change or a removal of an entry is refused (one with the file's access can drop these; `textai audit verify` then finds it)
CREATE TRIGGER `audit_log_no_update` BEFORE UPDATE ON `audit_log` BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;--> statement-breakpoint
CREATE TRIGGER `audit_log_no_delete` BEFORE DELETE ON `audit_log` BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
