/** FAQ collections in SQLite, scoped to one account (another account's id is a 404). Collections are immutable once created. */
import { asc, count, desc, eq, sql } from "drizzle-orm";
import type { KnowledgeQuota } from "../config";
import { newId } from "../ids";
import { publicIdSql } from "../storage/schema";
import { type FaqCollectionRow, faqCollections, faqEntries } from "../storage/schema-kb";

const FAQ_PUBLIC_ID = publicIdSql("faqe");

import { sqliteKnowledgeUsage } from "./bases-sqlite";
import type { Faq } from "./faq-match";
import { type FaqCollections, type FaqCollectionView, type Page, type Paged, paged } from "./interface";
import { checkFaqQuota, DEFAULT_FAQ_QUOTA, faqBytes } from "./quota";
import { SqliteKnowledgeStore } from "./sqlite-store";

/** FAQ collections in SQLite. */
export class SqliteFaqCollections extends SqliteKnowledgeStore implements FaqCollections {
  create(
    accountId: string,
    input: { name: string; faqs: { question: string; answer: string }[] },
    quota: Pick<KnowledgeQuota, "faqCollections" | "bytes"> = DEFAULT_FAQ_QUOTA,
  ): FaqCollectionView {
    const id = newId("faq");
    this.storage.sqlite.transaction(() => {
      // the quota, checked in the transaction that writes
      checkFaqQuota(sqliteKnowledgeUsage(this.storage, accountId), faqBytes(input.faqs), quota);
      this.db.insert(faqCollections).values({ id, accountId, name: input.name }).run();
      input.faqs.forEach((f, ord) => {
        this.db
          .insert(faqEntries)
          .values({
            collectionId: id,
            ord,
            question: f.question.trim(),
            answer: f.answer.trim(),
            publicId: sql.raw(FAQ_PUBLIC_ID),
          })
          .run();
      });
    })();
    return this.get(accountId, id);
  }

  private row(accountId: string, id: string): FaqCollectionRow {
    return this.ownedRow(faqCollections, accountId, id, "FAQ collection");
  }

  faqs(accountId: string, id: string): Faq[] {
    this.row(accountId, id);
    return this.db
      .select({ id: sql<string>`${faqEntries.publicId}`, question: faqEntries.question, answer: faqEntries.answer })
      .from(faqEntries)
      .where(eq(faqEntries.collectionId, id))
      .orderBy(asc(faqEntries.ord))
      .all();
  }

  get(accountId: string, id: string): FaqCollectionView {
    const row = this.row(accountId, id);
    const faqs = this.faqs(accountId, id);
    return { ...this.view(row, faqs.length), faqs };
  }

  list(accountId: string, page: Page): Paged<FaqCollectionView> {
    const where = eq(faqCollections.accountId, accountId);
    const total = this.db.select({ n: count() }).from(faqCollections).where(where).get()?.n ?? 0;
    const rows = this.db
      .select({ row: faqCollections, n: count(faqEntries.id) })
      .from(faqCollections)
      .leftJoin(faqEntries, eq(faqEntries.collectionId, faqCollections.id))
      .where(where)
      .groupBy(faqCollections.id)
      .orderBy(desc(faqCollections.createdAt), desc(faqCollections.id))
      .limit(page.limit)
      .offset(page.offset)
      .all();
    return paged(
      rows.map((r) => this.view(r.row, r.n)),
      total,
      page,
    );
  }

  delete(accountId: string, id: string): void {
    this.row(accountId, id);
    this.db.delete(faqCollections).where(eq(faqCollections.id, id)).run();
  }

  private view(r: FaqCollectionRow, n: number): FaqCollectionView {
    return { id: r.id, name: r.name, faq_count: n, created_at: new Date(r.createdAt).toISOString() };
  }
}
