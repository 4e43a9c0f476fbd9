/**
 * Structured values as logs, forms, statements and URLs hold them (test/fixtures/eval/pii-structured-dev.txt):
 * each class the recognizer once left verbatim never reaches the upstream simulator verbatim through a
 * real server (redacted under a plan that redacts every kind), and a version string shaped like an IPv4
 * address after its word is sent as written.
 */
import { describe, expect, test } from "bun:test";
import { rawPost } from "../openai/setup";
import { guardedSuite, REDACT_EVERY_KIND } from "./setup";

const suite = guardedSuite(
  `[plans.redacting.guardrails]
${REDACT_EVERY_KIND}
restore_pii = true
`,
  ["redacting"],
);

const chat = (content: string) => ({ model: "model-a", messages: [{ role: "user", content }] });

/** What the simulator received for `content`. */
async function sentFor(content: string): Promise<string> {
  const from = suite.sim.calls.requests.length;
  const r = await rawPost(suite.gw, "/v1/chat/completions", suite.keys.redacting as string, chat(content));
  expect(r.status).toBe(200);
  return suite.sentSince(from);
}

/** [what, the text sent, the value, pieces of it that must not go either, the placeholder's label] */
const CASES: [string, string, string, string[], string][] = [
  [
    "an SSN with blanks round its dashes, after S.S.N.",
    "S.S.N. 449 - 31 - 2208 (scanned form)",
    "449 - 31 - 2208",
    ["2208"],
    "SSN",
  ],
  [
    "an IPv6 address before an unbracketed port",
    "haproxy[311]: 2001:db8:3c4d:15::1a2f:1a2b:51920 [02/Dec/2026:08:00:01.112] 200",
    "2001:db8:3c4d:15::1a2f:1a2b",
    ["3c4d:15::1a2f"],
    "IP_ADDRESS",
  ],
  [
    "a phone in a URL with its + and blanks escaped",
    "https://forms.example.org/submit?name=x&tel=%2B82%2010%201234%205678",
    "%2B82%2010%201234%205678",
    ["1234%205678"],
    "PHONE",
  ],
  ["a + number glued to a word", "callme+4917612345678 after six", "+4917612345678", ["17612345678"], "PHONE"],
  [
    "a number before a statement's next column",
    "03.11.2026 Lastschrift Vodafone 0172 9876543   -39,99",
    "0172 9876543",
    ["9876543"],
    "PHONE",
  ],
  [
    "an international number with a one-digit extension",
    "Wien Zentrale +43 1 53114 0, bitte",
    "+43 1 53114 0",
    ["53114"],
    "PHONE",
  ],
  ["a WhatsApp link's number", "https://wa.me/5511912345678?text=oi", "5511912345678", ["912345678"], "PHONE"],
  [
    "a labelled number of 13 digits with its country code and no +",
    "https://api.whatsapp.com/send?phone=5511912345678&text=oi",
    "5511912345678",
    ["912345678"],
    "PHONE",
  ],
  [
    "an extension after a comma",
    "Call (312) 555-0191, ext 2201 for claims.",
    "(312) 555-0191, ext 2201",
    ["555-0191", "2201"],
    "PHONE",
  ],
  [
    "a compact number under a table's phone column",
    "name,phone,city\nAnna,0612345678,Amsterdam",
    "0612345678",
    ["12345678"],
    "PHONE",
  ],
  ["a msisdn column of a ';' table", "id;msisdn;amount\n1;447700900123;5.00", "447700900123", ["7700900123"], "PHONE"],
  ["a JSON number after its phone key", '{"phone":4155550132,"plan":"pro"}', "4155550132", ["5550132"], "PHONE"],
  ["digits glued to their label", "Tel0612345678 (office)", "0612345678", ["12345678"], "PHONE"],
  ["a messenger's number", "add me on wechat 13800138000", "13800138000", ["00138000"], "PHONE"],
  ["a number after a contact word and a name", "Contact: Anna 0612345678", "0612345678", ["12345678"], "PHONE"],
  [
    "an SSN in a table's ssn column, rows below the header",
    "employee_id,full_name,ssn,department\n1001,Anna Berg,123456789,HR\n1002,Carl Dahl,234567891,IT\n1003,Eva Fors,345678912,Sales",
    "345678912",
    ["234567891"],
    "SSN",
  ],
  [
    "numbers apart by a slash after their label",
    "Phone: 0612345678 / 0612345679 / 0612345670",
    "0612345670",
    ["0612345679"],
    "PHONE",
  ],
  ["a second number whose area code the first took in", "Tel 030 1234567 / 030 1234568", "1234568", ["1234567"], "PHONE"],
  ["SSNs after a plural SSN word", "SSNs: 123456789, 234567891, 345678912", "345678912", ["234567891"], "SSN"],
  [
    "a list of numbers under its heading",
    "Phone numbers:\n- 0612345678\n- 0612345679\n- 0612345670",
    "0612345670",
    ["0612345679"],
    "PHONE",
  ],
  [
    "numbers each alone on a line under a plural label",
    "Mobiles:\n0612345678\n0612345679",
    "0612345679",
    ["0612345678"],
    "PHONE",
  ],
  [
    "a bounce address that holds the recipient's",
    "Sender: <bounces+ops-4471=example.com@sendgrid.net>",
    "bounces+ops-4471=example.com@sendgrid.net",
    ["ops-4471"],
    "EMAIL",
  ],
  [
    "a forwarder's rewritten sender (SRS)",
    "Return-Path: <SRS0=Ab12=TT=example.com=ops-4471@fwd.example.net>",
    "SRS0=Ab12=TT=example.com=ops-4471@fwd.example.net",
    ["=example.com="],
    "EMAIL",
  ],
  // the late round of 2026-12-06 (issue 41): each class its own example, none of them a fixture's
  ["a number after a label spaced out by a scanner", "P h o n e : 6175550164", "6175550164", ["5550164"], "PHONE"],
  [
    "a number spaced digit by digit after a spaced label and a bracketed area code",
    "T e l :  ( 6 1 7 )  5 5 5 - 0 1 6 4",
    "5 5 5 - 0 1 6 4",
    ["0 1 6 4"],
    "PHONE",
  ],
  [
    "a compact number after a one-letter card label",
    "Dana Whit | P: 6175550164 | E: dana@example.net",
    "6175550164",
    [],
    "PHONE",
  ],
  ["a national number in brackets after a name", "Petra (0687654321) will bring the keys", "0687654321", ["87654321"], "PHONE"],
  ["a zero-padded IPv4 address", "deny from 172.016.005.020 port 22", "172.016.005.020", ["016.005.020"], "IP_ADDRESS"],
  ["an SSN written with underscores", "ssn=431_22_9876", "431_22_9876", ["9876"], "SSN"],
  ["an SSN written with slashes", "SSN 431/22/9876 on file", "431/22/9876", ["9876"], "SSN"],
  ["an email with a blank after its @", "mail: k.osei@ gmail.com", "k.osei@ gmail.com", ["k.osei"], "EMAIL"],
  // (2026-12-06, after blind-14's two runs: the typography path)
  [
    "an email a PDF wrapped after its @",
    "Ansprechpartnerin: petra.lindqvist@\nlund-energi.se, Zimmer 12",
    "petra.lindqvist@\nlund-energi.se",
    ["petra.lindqvist", "lund-energi.se"],
    "EMAIL",
  ],
  [
    "a number after a decimal and a dash set off by blanks",
    "Ward 2.07 - 0118 496 0321 - night desk",
    "0118 496 0321",
    ["496 0321"],
    "PHONE",
  ],
  ["a number after its label's pictograph", "new number ☎️07700912345 from Monday", "07700912345", ["912345"], "PHONE"],
  ["a mainland China mobile, 3-4-4, no label", "陈思远 138-5521-0467 周一见", "138-5521-0467", ["5521-0467"], "PHONE"],
];

describe("structured values as logs, forms and URLs hold them never go upstream verbatim", () => {
  for (const [what, content, value, pieces, label] of CASES)
    test(`${what} is redacted`, async () => {
      const sent = await sentFor(content);
      expect(sent).not.toContain(value);
      for (const p of pieces) expect(sent).not.toContain(p);
      expect(sent).toContain(`[${label}`);
    });
});

test("a version shaped like an IPv4 address, right after its word, is sent as written", async () => {
  const sent = await sentFor("Firmware version 1.2.3.4 fixed the boot loop; v2.0.1.7 is next.");
  expect(sent).toContain("version 1.2.3.4 fixed");
  expect(sent).toContain("v2.0.1.7 is next");
  expect(sent).not.toContain("[IP_ADDRESS");
});

test("a conference's meeting ID and two versions one to the other are sent as written", async () => {
  const sent = await sentFor("Webinar ID: 733 4412 9080. Firmware upgraded from 3.1.4.1 to 3.1.5.0 overnight.");
  expect(sent).toContain("Webinar ID: 733 4412 9080.");
  expect(sent).toContain("from 3.1.4.1 to 3.1.5.0 overnight");
  expect(sent).not.toContain("[PHONE");
  expect(sent).not.toContain("[IP_ADDRESS");
});
