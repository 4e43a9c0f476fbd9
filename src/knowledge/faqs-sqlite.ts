/** FAQ collections in SQLite, scoped to one account (another account's id is a 404). Collections are immutable once created. */
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { KnowledgeQuota } from "../config";
import { notFound } from "../errors";
import { newId } from "../ids";
import type { Storage } from "../storage/db";
import { publicIdSql } from "../storage/schema";
import { type FaqCollectionRow, faqCollections, faqEntries } from "../storage/schema-kb";

const FAQ_PUBLIC_ID = publicIdSql("faqe");

import { sqliteKnowledgeUsage } from "./bases-sqlite";
import type { Faq } from "./faq-match";
import { type FaqCollections, type FaqCollectionView, type Page, type Paged, paged } from "./interface";
import { checkFaqQuota, faqBytes } from "./quota";
import { LIMITS } from "./schemas";

/** FAQ collections in SQLite. */
export class SqliteFaqCollections implements FaqCollections {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  create(
    accountId: string,
    input: { name: string; faqs: { question: string; answer: string }[] },
    quota: Pick<KnowledgeQuota, "faqCollections" | "bytes"> = {
      faqCollections: LIMITS.faqCollectionsPerAccount,
      bytes: Infinity,
    },
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
    const row = this.db
      .select()
      .from(faqCollections)
      .where(and(eq(faqCollections.id, id), eq(faqCollections.accountId, accountId)))
      .get();
    if (!row) throw notFound("FAQ collection");
    return row;
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
