/** Chatbots, scoped to one account; their knowledge bases must belong to the same account. */
import { and, desc, eq } from "drizzle-orm";
import type { KnowledgeQuota } from "../config";
import { GatewayError } from "../errors";
import { newId } from "../ids";
import { type ChatbotRow, chatbots, knowledgeBases } from "../storage/schema-kb";
import { sqliteKnowledgeUsage } from "./bases-sqlite";
import type { ChatbotMode, Chatbots, ChatbotView, Page, Paged } from "./interface";
import { checkChatbotsQuota } from "./quota";
import { LIMITS } from "./schemas";
import { SqliteKnowledgeStore } from "./sqlite-store";

/** Chatbots in SQLite. */
export class SqliteChatbots extends SqliteKnowledgeStore implements Chatbots {
  create(
    accountId: string,
    input: { name: string; mode: ChatbotMode; knowledge_base_ids?: string[] },
    quota: Pick<KnowledgeQuota, "chatbots"> = { chatbots: LIMITS.chatbotsPerAccount },
  ): ChatbotView {
    const kbIds = input.knowledge_base_ids ?? [];
    kbIds.forEach((kbId, i) => {
      const mine = this.db
        .select({ id: knowledgeBases.id })
        .from(knowledgeBases)
        .where(and(eq(knowledgeBases.id, kbId), eq(knowledgeBases.accountId, accountId)))
        .get();
      // Same answer for another account's id and a missing one: ids of others must not be probeable.
      if (!mine) throw new GatewayError("not_found", `knowledge base ${kbId} not found`, { param: `knowledge_base_ids[${i}]` });
    });
    checkChatbotsQuota(sqliteKnowledgeUsage(this.storage, accountId), quota);
    const id = newId("bot");
    this.db
      .insert(chatbots)
      .values({ id, accountId, name: input.name, mode: input.mode, knowledgeBaseIds: JSON.stringify(kbIds) })
      .run();
    return this.get(accountId, id);
  }

  get(accountId: string, id: string): ChatbotView {
    return view(this.ownedRow(chatbots, accountId, id, "chatbot"));
  }

  list(accountId: string, page: Page): Paged<ChatbotView> {
    return this.pageOf(chatbots, eq(chatbots.accountId, accountId), [desc(chatbots.createdAt), desc(chatbots.id)], page, view);
  }

  delete(accountId: string, id: string): void {
    this.get(accountId, id);
    this.db.delete(chatbots).where(eq(chatbots.id, id)).run();
  }

  /** The chatbot's knowledge bases that still exist and are active (deleted ones drop out silently). */
  activeKnowledgeBases(accountId: string, ids: string[]): { id: string; revision: number }[] {
    return ids.flatMap((kbId) => {
      const row = this.db
        .select({ id: knowledgeBases.id, revision: knowledgeBases.revision })
        .from(knowledgeBases)
        .where(and(eq(knowledgeBases.id, kbId), eq(knowledgeBases.accountId, accountId), eq(knowledgeBases.status, "active")))
        .get();
      return row ? [row] : [];
    });
  }
}

function view(r: ChatbotRow): ChatbotView {
  return {
    id: r.id,
    name: r.name,
    mode: r.mode,
    knowledge_base_ids: JSON.parse(r.knowledgeBaseIds) as string[],
    created_at: new Date(r.createdAt).toISOString(),
  };
}
