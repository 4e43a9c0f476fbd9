CREATE TABLE "gateway_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint NOT NULL
);
