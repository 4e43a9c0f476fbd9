CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text,
	"plan" text DEFAULT 'free' NOT NULL,
	"balance" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "accounts_balance_not_negative" CHECK ("accounts"."balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"label" text NOT NULL,
	"plan" text DEFAULT 'free' NOT NULL,
	"prefix" text NOT NULL,
	"last4" text NOT NULL,
	"key_hash" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL,
	"last_used_at" bigint,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"key_id" text,
	"amount" bigint NOT NULL,
	"kind" text NOT NULL,
	"function" text,
	"request_id" text,
	"provider" text,
	"cached" boolean DEFAULT false NOT NULL,
	"reason" text,
	"created_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_daily" (
	"account_id" text NOT NULL,
	"day" text NOT NULL,
	"kind" text NOT NULL,
	"function" text DEFAULT '' NOT NULL,
	"provider" text DEFAULT '' NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	"credits" bigint DEFAULT 0 NOT NULL,
	"cached" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_daily_account_id_day_kind_function_provider_pk" PRIMARY KEY("account_id","day","kind","function","provider")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger" ADD CONSTRAINT "ledger_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_idx" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_account_idx" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "ledger_account_time_idx" ON "ledger" USING btree ("account_id","created_at");