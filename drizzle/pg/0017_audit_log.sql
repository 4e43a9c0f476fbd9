CREATE TABLE "audit_head" (
	"chain" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"id" text NOT NULL,
	"at" bigint NOT NULL,
	"actor" text NOT NULL,
	"account_id" text,
	"action" text NOT NULL,
	"target_id" text,
	"before" text,
	"after" text,
	"client" text,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "audit_log_id_idx" ON "audit_log" USING btree ("id");--> statement-breakpoint
CREATE INDEX "audit_log_account_seq_idx" ON "audit_log" USING btree ("account_id","seq");--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
-- the chain's head before its first entry: seq 0 and the genesis hash (docs/audit.md)
INSERT INTO "audit_head" ("chain", "seq", "hash") VALUES ('gateway', 0, '0000000000000000000000000000000000000000000000000000000000000000');--> statement-breakpoint
-- append-only: a change or a removal of an entry is refused (an owner of the database can drop these; `textai audit verify` then finds it)
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$;--> statement-breakpoint
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();--> statement-breakpoint
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
