/**
 * Names that a conversation's shape gives away (src/offline-engine/pii/names-thread.ts), written
 * here by hand, apart from every eval set: mail attributions, chat exports, tickets, minutes,
 * mentions, greetings and signers, with the look-alikes that must stay unmarked.
 */
import { describe, expect, test } from "bun:test";
import { detectPii } from "../../src/offline-engine/pii";

const names = (text: string): string[] => detectPii(text, { types: ["name"] }).map((e) => e.text);

describe("names by their place in a conversation", () => {
  test("the writer of a quoted mail, in any script, without the attribution's words", () => {
    expect(names("Il giorno mar 3 mar 2026 alle ore 10:02 Tommaso Orlandini <t.orlandini@fastwebnet.it> ha scritto:")).toContain(
      "Tommaso Orlandini",
    );
    expect(names("2026年3月3日(火) 10:02 松本 葵 <aoi.matsumoto@example.jp>:")).toContain("松本 葵");
    expect(names("في الثلاثاء، 3 مارس 2026 كتب سامي الحداد <sami.haddad@example.com>:")).toContain("سامي الحداد");
    // a role address names a team
    expect(names("A: Amministrazione <info@condominio-verdi.it>")).toEqual([]);
  });

  test("the speakers of chat exports: stamp before or after, brackets, tabs", () => {
    expect(names("[2026-03-01 09:12] Oksana P.: where are you?\n[2026-03-01 09:13] Taras: at the station")).toEqual([
      "Oksana P.",
      "Taras",
    ]);
    expect(names("3/1/26, 9:12 AM - Kwabena Mensah: ok see you")).toEqual(["Kwabena Mensah"]);
    expect(names("Farida Osei [9:12 AM]: the keys are with the porter")).toEqual(["Farida Osei"]);
    expect(names("2026/03/01(日) 21:03\t林 美穂\t明日ね")).toContain("林 美穂");
  });

  test("agents and customers of a ticket by their role", () => {
    expect(names("Cliente: non funziona. Operatrice (Loredana): mi dà il codice?")).toContain("Loredana");
    expect(names("Klant: het werkt niet. Medewerker Joost: welk nummer?")).toEqual(["Joost"]);
    // a role word in a sentence is no turn
    expect(names("Reply to this customer (Polish): dziękuję")).toEqual([]);
  });

  test("attendees of minutes, with honorifics, particles and roles in brackets; the next label ends the list", () => {
    expect(names("Present: Aoife Brennan (chair), Hr. Matthias Vogt, Jet van Dam Actions: none")).toEqual([
      "Aoife Brennan",
      "Matthias Vogt",
      "Jet van Dam",
    ]);
    expect(names("出席者：山口一郎、Anna Berg 議題：予算")).toEqual(["山口一郎", "Anna Berg"]);
  });

  test("later mentions of a name found whole", () => {
    expect(names("Attendees: Ruairí Doyle, Meseret Tadesse Action: Meseret to call the bank.")).toEqual([
      "Ruairí Doyle",
      "Meseret Tadesse",
      "Meseret",
    ]);
  });

  test("mentions whose handle is a name; an alias is none", () => {
    expect(names("@jonas.lindqvist can you send it?")).toEqual(["jonas.lindqvist"]);
    expect(names("@nightowl77 can you send it?")).toEqual([]);
    expect(names("Forum post by tiger_lily: my neighbour parks badly")).not.toContain("tiger_lily");
  });

  test("greetings and signers; a greeting or a closing word is never the name", () => {
    expect(names("Hallo Wiebke, der Termin steht.")).toEqual(["Wiebke"]);
    expect(names("Bonjour, je vous écris pour la facture.")).toEqual([]);
    expect(names("Ευχαριστώ, Ελένη")).toEqual(["Ελένη"]);
    expect(names("Recibido, gracias.\nMarisa")).toContain("Marisa");
    expect(names("Dear Ms. Okonkwo, your parcel is ready.")).toEqual(["Okonkwo"]);
  });

  test("forms are no dialogues: their labels are never speakers", () => {
    expect(names("Név: Kiss Borbála\nSzületési dátum: 1980.02.03.\nLakcím: 1051 Budapest")).not.toContain("Név");
    expect(names("姓名：王芳\n手机：139 1088 2467\n邮箱：wf@example.cn")).not.toContain("手机");
  });

  test("the contact's name right before a phone number: a listed given name, or after an honorific; never a place or a label", () => {
    expect(names("Πωλείται ποδήλατο, 120 €. Σπύρος 697 403 2215")).toContain("Σπύρος");
    expect(names("Se vende bicicleta. Lupita Hernández cel. 55 4312 8876")).toContain("Lupita Hernández");
    expect(names("برای اجاره تماس با خانم نسرین کاظمی: ۰۹۱۲ ۴۸۷ ۳۰۶۵")).toContain("نسرین کاظمی");
    expect(names("Oslo office 23 19 44 80, Bergen 55 30 12 77")).toEqual([]);
    expect(names("طلب توصيل: عمارة 7، شارع الجامعة، تليفون 010 2284 7719")).toEqual([]);
  });

  test("name fields in every script, to the next label; a surname in capitals before a comma", () => {
    expect(names("Имя: Алевтина Фамилия: Гордеева")).toEqual(["Алевтина", "Гордеева"]);
    expect(names("이름: 한소희")).toEqual(["한소희"]);
    expect(names("Apellido y nombre: QUISPE, Rosa Amelia")).toEqual(["QUISPE, Rosa Amelia"]);
  });

  test("name parts joined into one token: file names, URLs, log fields; an e-mail's local part stays the e-mail's", () => {
    expect(names("CV_Greta_Lindholm_2026.pdf")).toEqual(["Greta_Lindholm"]);
    expect(names("GET /lead?name=Yasmin%20Haddad 200")).toContain("Yasmin%20Haddad");
    expect(names("write to greta.lindholm@example.se")).toEqual([]);
    expect(names("release_notes_final_v2.md")).toEqual([]);
  });

  test("names in a text written all in lower case; places, months and streets are none", () => {
    expect(names("ok so aylin and matteo r coming tonight lol")).toEqual(["aylin", "matteo"]);
    expect(names("flying to denver in june, meet at 12 nathan rd")).toEqual([]);
  });

  // 2026-12-06: "the price of gold rose sharply" and "please mark the invoice as paid" named "rose" and "mark"
  test("in lower-case text, a given name that is an everyday word is a name only beside a person's evidence", () => {
    expect(names("Interest rose from 3.5 percent to 4 percent last quarter.")).toEqual([]);
    expect(names("the price of gold rose sharply today")).toEqual([]);
    expect(names("please mark the invoice as paid and send it back")).toEqual([]);
    expect(names("we may grant access tomorrow if the form is signed")).toEqual([]);
    expect(names("frank feedback is welcome on the draft")).toEqual([]);
    expect(names("daisy and ivy grow along the fence by the shed")).toEqual([]);
    // a greeting, a verb of speech, a closing, a family name after it
    expect(names("hi mark, thanks for the update on the budget")).toEqual(["mark"]);
    expect(names("my friend rose called me yesterday about the flat")).toEqual(["rose"]);
    expect(names("thanks again for sorting out the boiler\nkind regards,\ngrant")).toEqual(["grant"]);
    expect(names("can you forward this to frank jensen before friday")).toEqual(["frank jensen"]);
    expect(names("love and congratulations from priya, mark and the grandchildren")).toEqual(["priya", "mark"]);
    expect(names("ok so priya and rose r coming tonight lol")).toEqual(["priya", "rose"]);
    // given names that are rare as words stay names alone
    expect(names("is amara still coming to the thing tonight")).toEqual(["amara"]);
  });
});

// 2026-12-06, found trying the README's first call: "Jan" (a month's abbreviation) and "Park", "Hall"
// (place words) took whole names with them, even after "My name is".
describe("given names that are also words, surnames that are also places", () => {
  test("after a cue: Jan, Jun, Sun, Mar, Love as given names; Hall and Park as surnames", () => {
    expect(names("My name is Jan Kowalski.")).toEqual(["Jan Kowalski"]);
    expect(names("Please contact Jan Kowalczyk tomorrow.")).toEqual(["Jan Kowalczyk"]);
    expect(names("Dear Jan,")).toEqual(["Jan"]);
    expect(names("My name is Jun Tanaka.")).toEqual(["Jun Tanaka"]);
    expect(names("My name is Mar García.")).toEqual(["Mar García"]);
    expect(names("Dear Love Andersson,")).toEqual(["Love Andersson"]);
    expect(names("My name is Sun Park.")).toEqual(["Sun Park"]);
    expect(names("My name is Emma Hall.")).toEqual(["Emma Hall"]);
    expect(names("Dear Dr. Park,")).toEqual(["Park"]);
  });

  test("a chat's speaker whose surname is a word: Hall, Young, Green after a first name, never alone or first", () => {
    expect(names("[10:41] Jan Kowalski: can u send it\n[10:42] Emma Hall: sure")).toEqual(["Jan Kowalski", "Emma Hall"]);
    expect(names("[10:42] Emma Young: sure")).toEqual(["Emma Young"]);
    expect(names("[09:01] Customer Support: hello\n[09:02] Status Update: done")).toEqual([]);
    expect(names("[09:03] Green Team: deployed")).toEqual([]);
  });

  test("a surname that is a place word, with a person's evidence: a verb of speech after, a reaching word before a given name", () => {
    expect(names("Emma Hall called.")).toEqual(["Emma Hall"]);
    expect(names("John Ward called about the invoice.")).toEqual(["John Ward"]);
    expect(names("Jisoo Park said the build is green.")).toEqual(["Jisoo Park"]);
    expect(names("I met Emma Hall yesterday.")).toEqual(["Emma Hall"]);
    expect(names("Please ask Sarah Park about it.")).toEqual(["Sarah Park"]);
    expect(names("Manager: Emma Hall")).toEqual(["Emma Hall"]);
    expect(names("Diane Lane said no.")).toEqual(["Diane Lane"]);
    expect(names("We live on Penny Lane.")).toEqual([]);
    // a reaching word before a place that no given name starts, a possessive, a preposition: places
    expect(names("Call Carnegie Hall box office.")).toEqual([]);
    expect(names("The Albert Hall's acoustics are famous.")).toEqual([]);
    expect(names("We met at Victoria Park.")).toEqual([]);
    expect(names("A DEAR FRIEND AT CHURCH")).toEqual([]);
  });

  test("a capitalised name after a cue ends at the lower-case words after it", () => {
    expect(names("the invoice for Eero Manninen still shows the old address")).toEqual(["Eero Manninen"]);
    expect(names("Spoke with Daniel from Acme Corp about invoice #99812.")).toEqual(["Daniel"]);
    // a name written in lower case after a cue is still read whole
    expect(names("thanks, maria garcia")).toEqual(["maria garcia"]);
  });

  test("without one they stay a month, a day, a park and a hall", () => {
    expect(names("The meeting is in Central Park on Sun Jan 5.")).toEqual([]);
    expect(names("Open Mon-Sun, Jan to Mar.")).toEqual([]);
    expect(names("Sun Life Financial called about your Jan statement.")).toEqual([]);
    expect(names("Tickets for Victoria Park and the Albert Hall are sold out.")).toEqual([]);
  });
});
