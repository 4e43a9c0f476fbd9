import type { CreditLedger } from "../credits/interface";
import type { KeyStore, KeyView } from "./interface";

export type KeyDetail = KeyView & { month_credits_used: number };

/** A key as the admin API, the account and the dashboard show it: with what it spent this month (UTC). */
export async function keyDetail(
  keys: Pick<KeyStore, "get">,
  ledger: Pick<CreditLedger, "keySpent">,
  id: string,
): Promise<KeyDetail | null> {
  const view = await keys.get(id);
  return view ? withMonthSpend(ledger, view) : null;
}

export async function withMonthSpend(ledger: Pick<CreditLedger, "keySpent">, view: KeyView): Promise<KeyDetail> {
  return { ...view, month_credits_used: await ledger.keySpent(view.id) };
}
