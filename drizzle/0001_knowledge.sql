CREATE TABLE `chatbots` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`mode` text NOT NULL,
	`knowledge_base_ids` text DEFAULT '[]' NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `chatbots_account_idx` ON `chatbots` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `faq_collections` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `faq_collections_account_idx` ON `faq_collections` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `faq_entries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`collection_id` text NOT NULL,
	`ord` integer NOT NULL,
	`question` text NOT NULL,
	`answer` text NOT NULL,
	FOREIGN KEY (`collection_id`) REFERENCES `faq_collections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `faq_entries_collection_idx` ON `faq_entries` (`collection_id`,`ord`);--> statement-breakpoint
CREATE TABLE `kb_chunks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kb_id` text NOT NULL,
	`document_id` text NOT NULL,
	`ord` integer NOT NULL,
	`title` text,
	`content` text NOT NULL,
	`embedding` blob,
	FOREIGN KEY (`document_id`) REFERENCES `kb_documents`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `kb_chunks_doc_idx` ON `kb_chunks` (`document_id`);--> statement-breakpoint
CREATE INDEX `kb_chunks_kb_idx` ON `kb_chunks` (`kb_id`);--> statement-breakpoint
CREATE TABLE `kb_documents` (
	`id` text PRIMARY KEY NOT NULL,
	`kb_id` text NOT NULL,
	`title` text,
	`content` text NOT NULL,
	`metadata` text DEFAULT '{}' NOT NULL,
	`chunk_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`kb_id`) REFERENCES `knowledge_bases`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `kb_documents_kb_idx` ON `kb_documents` (`kb_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `knowledge_bases` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` text DEFAULT 'active' NOT NULL,
	`revision` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `knowledge_bases_account_idx` ON `knowledge_bases` (`account_id`,`created_at`);