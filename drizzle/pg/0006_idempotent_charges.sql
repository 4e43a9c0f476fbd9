CREATE TABLE "idempotent_charges" (
	"request_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"state" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "idempotent_charges_created_idx" ON "idempotent_charges" USING btree ("created_at");