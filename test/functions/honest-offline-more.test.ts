import { describe, expect, test } from "bun:test";
import { offlineGatewayFor } from "../helpers/gateway";

/**
 * More of issue #16's wrong answers (json-extractor date roles and parties, a string field in
 * extract_schema, text-summarize with an audience, the review, ticket and comment analyses in
 * other languages), on a gateway with no model configured. Every text here was written for this
 * test after the rules; none was used to shape them.
 */
const call = offlineGatewayFor(10_000);
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 800)}`;

describe("json-extractor: each date in its role, the customer named after its cue", () => {
  const schema = { issue_date: "date", due_date: "date", delivery_date: "date", customer: "string" };
  test.each([
    [
      // the issue date comes first, as in the reported invoice
      "Invoice 2231\nDate of issue: 4 February 2026\nBill to: Northwind Traders GmbH\nGoods delivered 1 February 2026.\nPlease pay by 6 March 2026.",
      { issue_date: "2026-02-04", due_date: "2026-03-06", delivery_date: "2026-02-01", customer: "Northwind Traders GmbH" },
    ],
    [
      "Dear Ms Patel, invoice INV-88 was issued on March 9, 2026 for Blue Harbor Dental. Payment is due April 8, 2026. The equipment shipped on March 2, 2026.",
      { issue_date: "2026-03-09", due_date: "2026-04-08", delivery_date: "2026-03-02", customer: "Blue Harbor Dental" },
    ],
    [
      "Sold to: Okafor & Sons Ltd, Attn: Grace Okafor. Dated 15/01/2026. Delivery on 20/01/2026. Amount payable no later than 14/02/2026.",
      { issue_date: "2026-01-15", due_date: "2026-02-14", delivery_date: "2026-01-20", customer: "Okafor & Sons Ltd" },
    ],
  ])("%s", async (text, expected) => {
    const r = await call("/api/v1/ai/json-extractor", { text, schema });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.meta.provider).toBe("local");
    expect(r.json.data.result, show(r)).toEqual(expected);
  });

  test("asked for the due date alone, an issue date is not given as the due date", async () => {
    const r = await call("/api/v1/ai/json-extractor", {
      text: "Invoice date: 2 May 2026. Customer: Lakeside Florist. Thank you for your order.",
      schema: { due_date: "date", customer: "string" },
    });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toEqual({ due_date: null, customer: "Lakeside Florist" });
    expect(r.json.meta.not_found, show(r)).toEqual(["due_date"]);
  });

  test("the contact after Attn is the contact, the billed company the customer", async () => {
    const r = await call("/api/v1/ai/json-extractor", {
      text: "Billed to: Meridian Labs Inc.\nAttention: Paul Schneider\nTotal: $310.00",
      schema: { customer: "string", contact_person: "string" },
    });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toEqual({ customer: "Meridian Labs Inc", contact_person: "Paul Schneider" });
  });
});

describe("text-summarize: a string field in extract_schema is read or honestly null", () => {
  test.each([
    [
      "The root cause of the outage was an expired TLS certificate. Service came back after 40 minutes.",
      "an expired TLS certificate",
    ],
    ["Project codename is Bluebird. The team ships the beta in June and the launch follows in September.", "Bluebird"],
  ])("%s", async (text, expected) => {
    const field = text.startsWith("The root") ? "root_cause" : "project_codename";
    const r = await call("/api/v1/ai/text-summarize", { text, extract_schema: { [field]: "string" } });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.extracted, show(r)).toEqual({ [field]: expected });
  });

  test("a string field the text does not give is null, and meta says it was not found", async () => {
    const r = await call("/api/v1/ai/text-summarize", {
      text: "The warehouse moves to Leeds in April. Staff get a relocation bonus. Deliveries pause for two days.",
      extract_schema: { favourite_colour: "string", moving_month: { type: "string", description: "the month of the move" } },
    });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.extracted.favourite_colour, show(r)).toBeNull();
    expect(r.json.meta.not_found, show(r)).toContain("favourite_colour");
  });
});

describe("text-summarize: an audience changes what goes with the main point, never drops it", () => {
  // [text, its main point]: the decision sits between figures an executive summary favours
  const texts: [string, string][] = [
    [
      "Last quarter our support team answered 14,200 tickets. After a long review of customer complaints, the company has decided to replace the current ticketing system with a new platform that integrates chat, email and phone in one place. The contract was signed on 3 March. Training takes 2 weeks. Migration costs 85,000 dollars.",
      "decided to replace the current ticketing system",
    ],
    [
      "In 2024 the library lent 310,000 books. Because reading among teenagers has fallen sharply, the library board has chosen to open a dedicated youth space with comics, games and homework help on the ground floor of the main building. It opens on 12 May. It has 40 seats. The budget is 1.2 million.",
      "open a dedicated youth space",
    ],
    [
      "Our team of 12 met for 3 hours on Tuesday. Following repeated failures in the nightly backups, engineering will move all customer databases to a managed service with automatic point-in-time recovery before the end of the year. Downtime is 30 minutes per database. 96 databases are affected.",
      "move all customer databases to a managed service",
    ],
  ];
  for (const [text, main] of texts) {
    test(main, async () => {
      for (const target_audience of [undefined, "executives", "children", "software engineers"]) {
        const r = await call("/api/v1/ai/text-summarize", { text, length: "short", target_audience });
        expect(r.status, show(r)).toBe(200);
        expect(r.json.data.result.summary, `${target_audience}: ${show(r)}`).toContain(main);
        expect(r.json.meta.ignored, show(r)).toBeUndefined();
      }
    });
  }

  test("an audience the offline engine has no rule for is reported in meta as ignored", async () => {
    const text = texts[0][0];
    const r = await call("/api/v1/ai/text-summarize", { text, length: "short", target_audience: "pirates" });
    const plain = await call("/api/v1/ai/text-summarize", { text, length: "short" });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.summary).toBe(plain.json.data.result.summary);
    expect(r.json.meta.ignored, show(r)).toEqual([{ param: "target_audience", reason: expect.any(String) }]);
    expect(plain.json.meta.ignored).toBeUndefined();
    // a cached answer says the same
    const again = await call("/api/v1/ai/text-summarize", { text, length: "short", target_audience: "pirates" });
    expect(again.json.meta.cached, show(again)).toBe(true);
    expect(again.json.meta.ignored, show(again)).toEqual(r.json.meta.ignored);
  });
});

describe("email-analyze: a payment reminder, pasted with its headers", () => {
  test.each([
    "From: Maria Lopez <maria@acme.io>\nSubject: Invoice 2231 overdue\n\nHello, our invoice 2231 for $4,250 was due on March 3rd and is still unpaid. Please settle it before Friday or we will have to pause the service.\nThanks, Maria",
    "Subject: Second reminder - order 5589\nDear Mr Chen,\nPayment for order 5589 remains outstanding. Kindly transfer the balance by the 15th or we will suspend your account.\nKind regards, Accounts Team",
    "Hi there, the refund for return 7731 is still missing after three weeks. Please sort it out or I will escalate this to my bank. Thank you, Olga",
  ])(
    "politeness is not the writer's mood, and headers, greetings and sign-offs are not the summary: %s",
    async (email_content) => {
      const r = await call("/api/v1/ai/email-analyze", { email_content });
      expect(r.status, show(r)).toBe(200);
      const res = r.json.data.result;
      // a reminder that something is still unpaid or missing, with a consequence, is no happy writer
      expect(["positive", "neutral"], show(r)).not.toContain(res.sentiment);
      expect(res.summary, show(r)).not.toMatch(/^(?:From|Subject|Hello|Hi|Dear)\b|Thanks|Thank you|regards|Maria$|Olga/);
      expect(res.summary.charAt(0), show(r)).toBe(res.summary.charAt(0).toUpperCase());
      // each reference once, though the subject and the body both name it
      for (const v of Object.values(res.entities as Record<string, string>)) {
        const parts = v.split(", ");
        expect(new Set(parts).size, show(r)).toBe(parts.length);
      }
    },
  );
});

describe("review-summary: themes are what reviewers talk about", () => {
  test("time words shared by reviews ('after 3 months', 'within a month') are no theme; a service judged badly is a complaint", async () => {
    const r = await call("/api/v1/ai/review-summary", {
      reviews: [
        "Great sound and battery, but the ear cushions peel after 3 months.",
        "Battery lasts forever. Comfortable for long flights.",
        "Stopped charging after 2 weeks, support was useless.",
        "Sound is crisp, bass could be stronger. Good value.",
        "The left earbud died within a month. Returned it.",
      ],
    });
    expect(r.status, show(r)).toBe(200);
    const res = r.json.data.result;
    expect([...res.highlights, ...res.complaints], show(r)).not.toContain("month");
    expect(res.complaints, show(r)).toContain("support");
    expect(res.highlights, show(r)).toEqual(expect.arrayContaining(["sound", "battery"]));
  });
});

describe("review, ticket and comment analyses answer other languages offline", () => {
  const reviews: [string, string, "positive" | "negative"][] = [
    [
      "de",
      "Die Lieferung kam zu spät und die Verpackung war beschädigt. Sehr enttäuschend, leider nicht zu empfehlen.",
      "negative",
    ],
    ["fr", "Produit parfait, livraison rapide et vendeur très agréable. Je recommande vivement !", "positive"],
    ["es", "El pedido llegó roto y con retraso. Muy decepcionado con la tienda, no lo recomiendo.", "negative"],
    ["it", "Prodotto ottimo e spedizione veloce, sono molto soddisfatta dell'acquisto.", "positive"],
    ["pt", "O produto chegou danificado e o atendimento foi péssimo. Estou muito decepcionado.", "negative"],
    ["nl", "Het pakket kwam beschadigd aan en de klantenservice reageerde niet. Erg teleurgesteld.", "negative"],
  ];
  test.each(reviews)("review-analyze %s", async (lang, review, polarity) => {
    const r = await call("/api/v1/ai/review-analyze", { review });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.meta.provider).toBe("local");
    const res = r.json.data.result;
    expect(res.language, show(r)).toBe(lang);
    // the review lexicon of these languages reads the polarity; the rest is flagged as a guess
    expect(res.sentiment, show(r)).not.toBe(polarity === "positive" ? "negative" : "positive");
    if (polarity === "negative") expect(res.needs_response, show(r)).toBe(true);
    expect(r.json.meta.low_confidence, show(r)).toContain("aspects");
  });

  test.each([
    [
      "de",
      "Seit heute Morgen liefert die API nur noch HTTP 503 Fehler, unsere Kunden können nicht bezahlen. Bitte dringend prüfen!",
    ],
    ["fr", "Depuis la mise à jour, le serveur renvoie une erreur 500 à chaque connexion. Merci de corriger avant vendredi."],
    ["nl", "Sinds gisteren krijgen we een 502 bad gateway op het dashboard. Graag zo snel mogelijk oplossen."],
  ])("ticket-analyze %s: a status code is technical in any language, urgency cues raise priority", async (lang, ticket) => {
    const r = await call("/api/v1/ai/ticket-analyze", { ticket });
    expect(r.status, show(r)).toBe(200);
    const res = r.json.data.result;
    expect(res.language, show(r)).toBe(lang);
    expect(res.category, show(r)).toBe("technical");
    expect(["high", "critical"], show(r)).toContain(res.priority);
  });

  test.each([
    // a production failure stopping the business is an outage, whatever the status code
    "Hi, since this morning our checkout page times out and customers get a 504 gateway timeout. We are losing sales, please escalate ASAP.",
    "Our store has been throwing 503 service unavailable for an hour and customers cannot pay.",
    "Payments keep timing out on your API since the deploy, we're losing orders every minute.",
  ])("ticket-analyze: an outage is critical and escalated: %s", async (ticket) => {
    const r = await call("/api/v1/ai/ticket-analyze", { ticket });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toMatchObject({ category: "technical", priority: "critical", escalate: true });
  });

  test("ticket-analyze: one 5xx that went away on retry is not an outage", async () => {
    const r = await call("/api/v1/ai/ticket-analyze", {
      ticket: "I got a 502 once yesterday when uploading a photo, it worked on retry.",
    });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toMatchObject({ priority: "medium", escalate: false });
  });

  test.each([
    ["es", "Hola, quiero cambiar la dirección de envío de mi pedido 5530."],
    ["it", "Salve, vorrei sapere come modificare i dati di fatturazione del mio account."],
  ])("ticket-analyze %s without technical words: category and intent say they are unknown", async (lang, ticket) => {
    const r = await call("/api/v1/ai/ticket-analyze", { ticket });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toMatchObject({ language: lang, category: "general", intent: "unknown" });
    expect(r.json.meta.low_confidence, show(r)).toEqual(expect.arrayContaining(["category", "intent"]));
  });

  test.each([
    ["pt", "Vocês entregam em Portugal? Adorei a nova coleção!", true],
    ["de", "Tolles Video, vielen Dank für die Erklärung.", false],
    ["pl", "Świetny produkt, bardzo polecam wszystkim znajomym.", false],
  ] as const)("comment-analyze %s", async (lang, comment, asks) => {
    const r = await call("/api/v1/ai/comment-analyze", { comment });
    expect(r.status, show(r)).toBe(200);
    const res = r.json.data.result;
    expect(res.language, show(r)).toBe(lang);
    expect(res.needs_response, show(r)).toBe(asks);
    expect(r.json.meta.low_confidence, show(r)).toContain("intent");
  });

  test("a review in a language without a review lexicon still answers its language, flagged as a guess", async () => {
    const r = await call("/api/v1/ai/review-analyze", { review: "Produkt dotarł uszkodzony, a obsługa klienta nie odpowiada." });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.language, show(r)).toBe("pl");
    expect(r.json.meta.low_confidence, show(r)).toEqual(expect.arrayContaining(["sentiment", "needs_response"]));
  });

  test("English answers carry no low_confidence note", async () => {
    const r = await call("/api/v1/ai/review-analyze", { review: "The parcel arrived broken and support never answered." });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.meta.low_confidence).toBeUndefined();
  });
});
