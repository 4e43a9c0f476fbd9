CREATE TABLE `usage_daily` (
	`account_id` text NOT NULL,
	`day` text NOT NULL,
	`kind` text NOT NULL,
	`function` text DEFAULT '' NOT NULL,
	`provider` text DEFAULT '' NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`credits` integer DEFAULT 0 NOT NULL,
	`cached` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`account_id`, `day`, `kind`, `function`, `provider`)
);
--> statement-breakpoint
-- backfill from the ledger written before this migration (hand-written; the same grouping as CreditLedger keeps)
INSERT INTO `usage_daily` (`account_id`, `day`, `kind`, `function`, `provider`, `requests`, `credits`, `cached`)
SELECT `account_id`,
	strftime('%Y-%m-%d', `created_at` / 1000, 'unixepoch'),
	CASE WHEN `kind` = 'charge' THEN 'charge' ELSE 'grant' END,
	CASE WHEN `kind` = 'charge' THEN coalesce(`function`, '') ELSE '' END,
	CASE WHEN `kind` = 'charge' THEN coalesce(`provider`, '') ELSE '' END,
	count(*),
	sum(CASE WHEN `kind` = 'charge' THEN -`amount` ELSE `amount` END),
	sum(`cached`)
FROM `ledger`
GROUP BY 1, 2, 3, 4, 5;
