import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../helpers/gateway";

// Issue 23: PII on realistic text from many locales, through a real server on a real port (the
// offline engine answers: no provider is configured). Values here are written by hand, not taken
// from the evaluation sets.

let gw: TestGateway;
let key: string;
beforeAll(async () => {
  gw = await startGateway();
  key = gw.newKey({ credits: 1000 }).key;
});
afterAll(async () => {
  await gw.close();
});

type Entity = { type: string; start: number; end: number; text: string };
type Result = { redacted_text: string; entities: Entity[] };

async function redact(text: string): Promise<Result> {
  const r = await gw.post(
    "/api/v1/ai/pii-redaction",
    { text, return_entities: true },
    { "x-api-key": key, "cache-control": "no-cache" },
  );
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
  expect(r.json.meta.provider).toBe("local");
  return r.json.data.result;
}

const of = (r: Result, type: string) => r.entities.filter((e) => e.type === type).map((e) => e.text);

describe("street addresses in local formats", () => {
  test.each([
    [
      "Hungarian, number after the street word",
      "Please send it to Rákóczi út 12, 1072 Budapest.",
      "Rákóczi út 12, 1072 Budapest",
    ],
    [
      "Danish compound, floor part",
      "Ny adresse: Nørrebrogade 44, 3. tv., 2200 København N",
      "Nørrebrogade 44, 3. tv., 2200 København N",
    ],
    [
      "Latvian, postcode with country prefix",
      "deliver to Brīvības iela 85, LV-1001 Rīga please",
      "Brīvības iela 85, LV-1001 Rīga",
    ],
    ["Turkish street word", "The shop is on Bağdat Caddesi 210, 34728 Kadıköy.", "Bağdat Caddesi 210, 34728 Kadıköy"],
    [
      "Polish street word before the name",
      "Adres: ul. Marszałkowska 104/122, 00-017 Warszawa",
      "ul. Marszałkowska 104/122, 00-017 Warszawa",
    ],
    [
      "Romanian, block and flat",
      "Trimiteți la Strada Lipscani 5, Bloc 3, 030031 București",
      "Strada Lipscani 5, Bloc 3, 030031 București",
    ],
    ["Portuguese, lower case", "moro na rua augusta 274, 1100-053 lisboa desde março", "rua augusta 274, 1100-053 lisboa"],
    ["Finnish compound, no postcode, after a cue", "I live at Mannerheimintie 14 since May.", "Mannerheimintie 14"],
    ["Czech preposition street", "Sídlo: Na Příkopě 33, 110 00 Praha", "Na Příkopě 33, 110 00 Praha"],
  ])("%s", async (_case, text, address) => {
    expect(of(await redact(text), "address")).toEqual([address]);
  });

  test("a multi-line address with postcode, town and country is one address", async () => {
    const text = "Ship to:\nIngrid Bergström\nStorgatan 12\n114 51 Stockholm\nSweden\n\nThanks!";
    const r = await redact(text);
    expect(of(r, "address")).toEqual(["Storgatan 12\n114 51 Stockholm\nSweden"]);
    expect(r.redacted_text).toBe("Ship to:\n[NAME]\n[ADDRESS]\n\nThanks!");
  });

  test("US military addresses, a postcode and a flat standing on their own after a label", async () => {
    const r = await redact("Send it to PSC 3021, Box 88, APO AE 09012. Postcode: 4051. apt/suite: Apt 7C");
    expect(of(r, "address")).toEqual(["PSC 3021, Box 88, APO AE 09012", "4051", "Apt 7C"]);
  });

  test("everyday phrases with numbers are no addresses", async () => {
    const r = await redact("Please place an order for 5 units, go to Settings 3 and read chapter 12 via email by Friday.");
    expect(of(r, "address")).toEqual([]);
  });
});

describe("person names from many languages", () => {
  test("names the English lists lack, a middle initial, a surname alone after a cue", async () => {
    const r = await redact(
      "Guests: Zsófia Horváth, Kateřina M. Dvořáková. I spoke to Kowalczyk yesterday; Ramzan Akhmadov will call back.",
    );
    expect(of(r, "name")).toEqual(["Zsófia Horváth", "Kateřina M. Dvořáková", "Kowalczyk", "Ramzan Akhmadov"]);
  });

  test("names typed in lower case after an introduction", async () => {
    const r = await redact("hi its gonçalo ferreira, my order never came");
    expect(of(r, "name")).toEqual(["gonçalo ferreira"]);
  });

  test("capitalised everyday words and German nouns are no names", async () => {
    const r = await redact(
      "Our Customer Success Lead joined the New Year Sale. Alle Menschen sind frei. Meine Bestellung fehlt.",
    );
    expect(of(r, "name")).toEqual([]);
  });
});

describe("structured values wherever they stand", () => {
  test("a phone after a label, a card number over two lines, an IPv6 after 'ip:'", async () => {
    const r = await redact("tel:+36 30 123 4567;ip:2001:db8:85a3:0:0:8a2e:370:7334\ncard 4111 1111\n1111 1111 exp 09/28");
    expect(of(r, "phone_number")).toEqual(["+36 30 123 4567"]);
    expect(of(r, "ip_address")).toEqual(["2001:db8:85a3:0:0:8a2e:370:7334"]);
    expect(of(r, "credit_card")).toEqual(["4111 1111\n1111 1111"]);
  });

  test("a value found once is never left in the redacted text, whatever surrounds it", async () => {
    const text = "Email ana@firma.hu about IP 10.20.30.40. Log: user=xana@firma.hux src=10.20.30.400 ref_10.20.30.40_b";
    const r = await redact(text);
    expect(r.redacted_text).not.toContain("10.20.30.40");
    expect(r.redacted_text).not.toContain("ana@firma.hu");
    for (const e of r.entities) expect(text.slice(e.start, e.end)).toBe(e.text);
  });
});
