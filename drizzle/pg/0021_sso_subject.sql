-- single sign-on binds a member to the identity provider's (issuer, subject) at its first sign-in (docs/sso.md): later sign-ins are matched by it, not by the email
ALTER TABLE "members" ADD COLUMN "sso_issuer" text;--> statement-breakpoint
ALTER TABLE "members" ADD COLUMN "sso_subject" text;--> statement-breakpoint
CREATE UNIQUE INDEX "members_sso_subject_idx" ON "members" USING btree ("sso_issuer","sso_subject");
