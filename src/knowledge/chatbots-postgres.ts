/** Chatbots in PostgreSQL, scoped to one account; their knowledge bases must belong to the same account (chatbots-sqlite.ts). */

import type { KnowledgeQuota } from "../config";
import { GatewayError, notFound } from "../errors";
import { newId } from "../ids";
import { type PgStorage, pgCall } from "../storage/postgres";
import { USAGE, usageOf } from "./bases-postgres";
import type { ChatbotMode, Chatbots, ChatbotView, Page, Paged } from "./interface";
import { paged } from "./interface";
import { lockAccount } from "./limits-postgres";
import { checkChatbotsQuota } from "./quota";
import { LIMITS } from "./schemas";

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();

type BotRow = { id: string; name: string; mode: ChatbotMode; knowledge_base_ids: string; created_at: string };
const botView = (r: BotRow): ChatbotView => ({
  id: r.id,
  name: r.name,
  mode: r.mode,
  knowledge_base_ids: JSON.parse(r.knowledge_base_ids) as string[],
  created_at: iso(r.created_at),
});

export class PostgresChatbots implements Chatbots {
  constructor(private readonly pg: PgStorage) {}

  create(
    accountId: string,
    input: { name: string; mode: ChatbotMode; knowledge_base_ids?: string[] },
    quota: Pick<KnowledgeQuota, "chatbots"> = { chatbots: LIMITS.chatbotsPerAccount },
  ): Promise<ChatbotView> {
    const kbIds = input.knowledge_base_ids ?? [];
    return pgCall(this.pg, async () => {
      const id = newId("bot");
      await this.pg.sql.begin(async (tx) => {
        const mine = new Set(
          (await tx`SELECT id FROM knowledge_bases WHERE account_id = ${accountId} AND id = ANY(${kbIds}::text[])`).map(
            (r: { id: string }) => r.id,
          ),
        );
        const missing = kbIds.findIndex((kb) => !mine.has(kb));
        // Same answer for another account's id and a missing one: ids of others must not be probeable.
        if (missing >= 0) {
          throw new GatewayError("not_found", `knowledge base ${kbIds[missing]} not found`, {
            param: `knowledge_base_ids[${missing}]`,
          });
        }
        await lockAccount(tx, accountId);
        checkChatbotsQuota(usageOf((await tx.unsafe(USAGE, [accountId]))[0]), quota);
        await tx`
          INSERT INTO chatbots (id, account_id, name, mode, knowledge_base_ids)
          VALUES (${id}, ${accountId}, ${input.name}, ${input.mode}, ${JSON.stringify(kbIds)}::text::jsonb)`;
      });
      return this.get(accountId, id);
    });
  }

  get(accountId: string, id: string): Promise<ChatbotView> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`
        SELECT id, name, mode, knowledge_base_ids::text AS knowledge_base_ids, created_at FROM chatbots WHERE id = ${id} AND account_id = ${accountId}`;
      if (!r) throw notFound("chatbot");
      return botView(r as BotRow);
    });
  }

  list(accountId: string, page: Page): Promise<Paged<ChatbotView>> {
    return pgCall(this.pg, async () => {
      const [[total], rows] = await Promise.all([
        this.pg.sql`SELECT count(*)::int AS n FROM chatbots WHERE account_id = ${accountId}`,
        this.pg.sql`
          SELECT id, name, mode, knowledge_base_ids::text AS knowledge_base_ids, created_at FROM chatbots WHERE account_id = ${accountId}
          ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}` as Promise<BotRow[]>,
      ]);
      return paged(rows.map(botView), Number(total?.n ?? 0), page);
    });
  }

  delete(accountId: string, id: string): Promise<void> {
    return pgCall(this.pg, async () => {
      const gone = await this.pg.sql`DELETE FROM chatbots WHERE id = ${id} AND account_id = ${accountId} RETURNING id`;
      if (gone.length === 0) throw notFound("chatbot");
    });
  }

  activeKnowledgeBases(accountId: string, ids: string[]): Promise<{ id: string; revision: number }[]> {
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`
        SELECT id, revision FROM knowledge_bases
        WHERE account_id = ${accountId} AND status = 'active' AND id = ANY(${ids}::text[])`;
      const byId = new Map((rows as { id: string; revision: number }[]).map((r) => [r.id, Number(r.revision)]));
      return ids.flatMap((id) => (byId.has(id) ? [{ id, revision: byId.get(id) as number }] : []));
    });
  }
}
