import { describe, expect, test } from "bun:test";
import { extractJson, parseSchemaSpec } from "../../src/offline-engine/json-extract";
import { conventionsOf, readAmount } from "../../src/offline-engine/json-locale";

/** Sentences written for this test (2026-12-06), not taken from the eval sets. */
const REF = new Date("2026-11-21T12:00:00Z");
const run = (text: string, schema: Record<string, unknown>) =>
  extractJson(text, parseSchemaSpec(schema) ?? [], { referenceDate: REF });

describe("numbers read by their own shape, then the text's convention", () => {
  const comma = { decimal: "," as const, dayFirst: true, lang: "de" };
  const dot = { decimal: "." as const, dayFirst: false, lang: "en" };
  const none = { decimal: null, dayFirst: null, lang: "und" };
  test.each([
    ["4.321,09", none, 4321.09],
    ["4,321.09", none, 4321.09],
    ["4\u00a0321,09", none, 4321.09],
    ["4\u202f321,09", none, 4321.09],
    ["4'321.09", none, 4321.09],
    ["7,25", none, 7.25],
    ["0,375", none, 0.375],
    ["2.000.000", none, 2000000],
    ["3,50,000.00", none, 350000],
    ["5.678", comma, 5678],
    ["5.678", dot, 5.678],
    ["5,678", dot, 5678],
  ])("%s", (raw, conv, want) => expect(readAmount(raw, conv)).toEqual({ value: want, doubtful: false }));

  test("a single separator before three digits with no convention is doubtful; a date is no number", () => {
    expect(readAmount("5.678", none)?.doubtful).toBe(true);
    expect(readAmount("11.12.2026", none)).toBeNull();
  });

  test("the convention comes from numbers that settle it, else the language", () => {
    expect(conventionsOf("Saldo 8,40 und Gebühr 2.500").decimal).toBe(",");
    expect(conventionsOf("Ship 3 boxes at 12.75 each, 1,000 units in all").decimal).toBe(".");
    expect(conventionsOf("Der Kunde hat die Ware gestern erhalten und bezahlt 2.500").decimal).toBe(",");
  });
});

describe("json-extractor in other locales", () => {
  test("German invoice: grouping dot and decimal comma, day-first dates, the number after 'Rechnung Nr.'", () => {
    const r = run("Unsere Rechnung Nr. 90210 vom 06.05.2026 über 3.210,75 EUR ist bis 20.05.2026 zu zahlen.", {
      invoice_number: "string",
      total: "number",
      issue_date: "string",
      due_date: "string",
    });
    expect(r.value).toEqual({ invoice_number: "90210", total: 3210.75, issue_date: "2026-05-06", due_date: "2026-05-20" });
    expect(r.doubtful).toEqual([]);
  });

  test("a decimal comma before a currency sign is read whole, in any language", () => {
    expect(run("Summe: 18,30 €", { total: "number" }).value.total).toBe(18.3);
    expect(run("Le panier revient à 27,90 € livraison comprise.", { price: "number" }).value.price).toBe(27.9);
    expect(run("Paid 7,05 € at the kiosk", { amount: "number" }).value.amount).toBe(7.05);
  });

  test("French, Spanish, Italian, Dutch and Portuguese labels give the document number", () => {
    expect(run("Facture n° 7319 — montant 80,00 €", { invoice_number: "string" }).value.invoice_number).toBe("7319");
    expect(run("Pedido nº 4520 enviado ayer", { order_number: "string" }).value.order_number).toBe("4520");
    expect(run("Fattura n. 2026/55 emessa oggi", { invoice_number: "string" }).value.invoice_number).toBe("2026/55");
    expect(run("Bestelling nr. 8080 is onderweg", { order_number: "string" }).value.order_number).toBe("8080");
    expect(run("Encomenda n.º 3141 confirmada", { order_number: "string" }).value.order_number).toBe("3141");
  });

  test("one date order for the whole text: a day over 12 anywhere decides for every date in it", () => {
    const r = run("Delivered 02/03/2026. Invoice date: 28/03/2026.", { delivery_date: "string", invoice_date: "string" });
    expect(r.value).toEqual({ delivery_date: "2026-03-02", invoice_date: "2026-03-28" });
    const us = run("Shipped 02/03/2026. Invoice date: 03/28/2026.", { ship_date: "string", invoice_date: "string" });
    expect(us.value).toEqual({ ship_date: "2026-02-03", invoice_date: "2026-03-28" });
  });

  test("a value the text does not settle is null and flagged, never a guess", () => {
    // (in an English text "4.750" is four and three quarters: the language is a convention)
    expect(run("Qty: 2, amount paid: 4.750", { amount_paid: "number" }).value.amount_paid).toBe(4.75);
    const amt = run("Amt: 4.750", { amt: "number" });
    expect(amt.value.amt).toBeNull();
    expect(amt.doubtful).toEqual(["amt"]);
    const amount = run("Sum: 4.750 CHF", { amount: "number" });
    expect(amount.value.amount).toBeNull();
    expect(amount.doubtful).toEqual(["amount"]);
    const date = run("Ref 55: 05/06/2026", { date: "string" });
    expect(date.value.date).toBeNull();
    expect(date.doubtful).toEqual(["date"]);
    // days over 12 both ways: no order holds for the text
    const mixed = run("Starts 14/05/2026; ends 05/20/2026; pick-up 04/05/2026", {
      start_date: "string",
      end_date: "string",
      pickup_date: "string",
    });
    expect(mixed.value).toEqual({ start_date: "2026-05-14", end_date: "2026-05-20", pickup_date: null });
    expect(mixed.doubtful).toEqual(["pickup_date"]);
  });

  test("amounts with a scale word and phone numbers are left as they were", () => {
    expect(run("Funding of $3.5 million closed", { funding: "number" }).value.funding).toBe(3500000);
    expect(run("Ring us on +44 20 7946 0321 today", { phone: "string" }).value.phone).toBe("+44 20 7946 0321");
  });
});
