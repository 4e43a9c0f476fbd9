-- The request log's indexes, four to two beside its key: newest first (time) and the account's newest
-- first (account, time), each carrying key, function and status so a filter on them is read from the
-- index, not from the table (bench/README.md, 2026-11-26, and docs/request-log.md).
DROP INDEX "request_log_time_idx";--> statement-breakpoint
DROP INDEX "request_log_account_time_idx";--> statement-breakpoint
DROP INDEX "request_log_account_fn_time_idx";--> statement-breakpoint
DROP INDEX "request_log_key_time_idx";--> statement-breakpoint
CREATE INDEX "request_log_time_filters_idx" ON "request_log" USING btree ("time","key_id","function","status");--> statement-breakpoint
CREATE INDEX "request_log_account_time_filters_idx" ON "request_log" USING btree ("account_id","time","key_id","function","status");