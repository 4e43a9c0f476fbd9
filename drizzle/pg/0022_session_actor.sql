-- who an operator session is when single sign-on opened it (operator:EMAIL), the actor of the changes it makes in the audit trail (docs/audit.md)
ALTER TABLE "dashboard_sessions" ADD COLUMN "actor" text;
