CREATE TABLE "webhook_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"account_id" text,
	"type" text NOT NULL,
	"data" text NOT NULL,
	"created_at" bigint NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_at" bigint NOT NULL,
	"claim" text,
	"claimed_until" bigint,
	"last_status_code" integer,
	"last_error" text,
	"delivered_at" bigint
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text,
	"url" text NOT NULL,
	"events" text NOT NULL,
	"balance_below" bigint,
	"spike_factor" bigint,
	"expiring_days" bigint,
	"format" text DEFAULT 'json' NOT NULL,
	"secret" text NOT NULL,
	"prev_secret" text,
	"prev_until" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_outbox_due_idx" ON "webhook_outbox" USING btree ("status","next_at");--> statement-breakpoint
CREATE INDEX "webhook_outbox_endpoint_idx" ON "webhook_outbox" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "webhooks_account_idx" ON "webhooks" USING btree ("account_id");