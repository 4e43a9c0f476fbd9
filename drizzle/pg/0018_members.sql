-- members (docs/teams.md): an account's people, each with one role; the login each account had becomes its first owner
CREATE TABLE "members" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"role" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL,
	"password_changed_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "members" ADD CONSTRAINT "members_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "members_email_idx" ON "members" USING btree ("email");--> statement-breakpoint
CREATE INDEX "members_account_idx" ON "members" USING btree ("account_id");--> statement-breakpoint
INSERT INTO "members" ("id", "account_id", "email", "name", "role", "password_hash", "created_at", "password_changed_at")
	SELECT 'mem_' || substr(md5(random()::text || clock_timestamp()::text || "account_id"), 1, 24), "account_id", "email", NULL, 'owner', "password_hash", "created_at", "password_changed_at" FROM "logins";--> statement-breakpoint
DROP TABLE "logins";--> statement-breakpoint
-- an invitation: only the SHA-256 of its one-time token is kept
CREATE TABLE "invitations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint
);
--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_token_idx" ON "invitations" USING btree ("token_hash");--> statement-breakpoint
ALTER TABLE "dashboard_sessions" ADD COLUMN "member_id" text;--> statement-breakpoint
UPDATE "dashboard_sessions" s SET "member_id" = m."id" FROM "members" m WHERE m."account_id" = s."account_id" AND s."kind" = 'account';--> statement-breakpoint
CREATE INDEX "dashboard_sessions_member_idx" ON "dashboard_sessions" USING btree ("member_id");--> statement-breakpoint
-- the member a key was made by in the dashboard (null: the admin API or the CLI)
ALTER TABLE "api_keys" ADD COLUMN "owner_member_id" text;
