/** FAQ collections in PostgreSQL, scoped to one account (another account's id is a 404), as faqs-sqlite.ts. */

import type { KnowledgeQuota } from "../config";
import { notFound } from "../errors";
import { newId } from "../ids";
import { type PgStorage, pgCall } from "../storage/postgres";
import { USAGE, usageOf } from "./bases-postgres";
import type { FaqCollections, FaqCollectionView, Page, Paged } from "./interface";
import { paged } from "./interface";
import { lockAccount } from "./limits-postgres";
import { checkFaqQuota, DEFAULT_FAQ_QUOTA, faqBytes } from "./quota";

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();

type FaqRow = { id: string; name: string; created_at: string; n?: number };
const faqView = (r: FaqRow, n: number): FaqCollectionView => ({
  id: r.id,
  name: r.name,
  faq_count: n,
  created_at: iso(r.created_at),
});

export class PostgresFaqCollections implements FaqCollections {
  constructor(private readonly pg: PgStorage) {}

  create(
    accountId: string,
    input: { name: string; faqs: { question: string; answer: string }[] },
    quota: Pick<KnowledgeQuota, "faqCollections" | "bytes"> = DEFAULT_FAQ_QUOTA,
  ): Promise<FaqCollectionView> {
    return pgCall(this.pg, async () => {
      const id = newId("faq");
      await this.pg.sql.begin(async (tx) => {
        // under the account's knowledge lock: nodes racing for the last place pass it once
        await lockAccount(tx, accountId);
        checkFaqQuota(usageOf((await tx.unsafe(USAGE, [accountId]))[0]), faqBytes(input.faqs), quota);
        await tx`INSERT INTO faq_collections (id, account_id, name) VALUES (${id}, ${accountId}, ${input.name})`;
        await tx`
          INSERT INTO faq_entries (collection_id, ord, question, answer)
          SELECT ${id}, u.ord - 1, u.question, u.answer
          FROM unnest(${input.faqs.map((f) => f.question.trim())}::text[], ${input.faqs.map((f) => f.answer.trim())}::text[])
            WITH ORDINALITY AS u(question, answer, ord)
          ORDER BY u.ord`;
      });
      return this.get(accountId, id);
    });
  }

  private async row(accountId: string, id: string): Promise<FaqRow> {
    const [r] = await this.pg
      .sql`SELECT id, name, created_at FROM faq_collections WHERE id = ${id} AND account_id = ${accountId}`;
    if (!r) throw notFound("FAQ collection");
    return r as FaqRow;
  }

  private async entries(id: string): Promise<{ id: string; question: string; answer: string }[]> {
    const rows = await this.pg
      .sql`SELECT public_id AS id, question, answer FROM faq_entries WHERE collection_id = ${id} ORDER BY ord`;
    return rows as { id: string; question: string; answer: string }[];
  }

  faqs(accountId: string, id: string): Promise<{ id: string; question: string; answer: string }[]> {
    return pgCall(this.pg, async () => {
      await this.row(accountId, id);
      return this.entries(id);
    });
  }

  get(accountId: string, id: string): Promise<FaqCollectionView> {
    return pgCall(this.pg, async () => {
      const row = await this.row(accountId, id);
      const faqs = await this.entries(id);
      return { ...faqView(row, faqs.length), faqs };
    });
  }

  list(accountId: string, page: Page): Promise<Paged<FaqCollectionView>> {
    return pgCall(this.pg, async () => {
      const [[total], rows] = await Promise.all([
        this.pg.sql`SELECT count(*)::int AS n FROM faq_collections WHERE account_id = ${accountId}`,
        this.pg.sql`
          SELECT c.id, c.name, c.created_at, (SELECT count(*)::int FROM faq_entries e WHERE e.collection_id = c.id) AS n
          FROM faq_collections c WHERE c.account_id = ${accountId}
          ORDER BY c.created_at DESC, c.id DESC LIMIT ${page.limit} OFFSET ${page.offset}` as Promise<FaqRow[]>,
      ]);
      return paged(
        rows.map((r) => faqView(r, Number(r.n ?? 0))),
        Number(total?.n ?? 0),
        page,
      );
    });
  }

  delete(accountId: string, id: string): Promise<void> {
    return pgCall(this.pg, async () => {
      const gone = await this.pg.sql`DELETE FROM faq_collections WHERE id = ${id} AND account_id = ${accountId} RETURNING id`;
      if (gone.length === 0) throw notFound("FAQ collection");
    });
  }
}
