/**
 * Phone numbers in international (+CC / 00CC) and common national formats (NANP, UK, EU).
 * A candidate is any run of digits and separators; the validator decides from its shape, its
 * digit count (E.164 allows 7..15) and words such as "call" or "tel" just before it.
 */
import { hasNonAscii, isSpace } from "./chars";
import { entity, type PiiEntity } from "./types";
import { WordFilter } from "./word-filter";

// (a number may follow a Chinese, Japanese or Korean word directly, as those scripts write no blank
// before it: "手机号是138 1024 5678", "電話番号は090-1234-5678", or a Hebrew or Arabic prefix letter:
// "ל054-771-2093"; and a label's ".:": "Tel.:+43 …")
// (an extension after a comma too: "(312) 555-0191, ext 2201")
const CANDIDATE_BODY = String.raw`(?:\(\+\d{1,3}\) ?|(?:\+|00)?\(?)(?:0\d{1,4} ?\/ ?)?\d[\d(). \u00A0/-]{5,22}\d(?:,?\s{0,3}(?:ext\.?|x|#)\s{0,3}\d{1,6})?(?![\p{N}]|\.\d|-\d|\/\d)`;
const CANDIDATE = new RegExp(
  String.raw`(?:(?<![\p{L}\p{N}+\-./]|[^\p{L}."]:)|(?<=[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Hebrew}\p{sc=Arabic}])|(?<=\p{L}[-.]))${CANDIDATE_BODY}`,
  "giu",
);
/**
 * A candidate at a "+" glued to a word ("callme+4917612345678", "Tel+44 20 …"), which CANDIDATE's
 * lookbehind passes over: tried only at such a "+" (candidateScore judges it), not at every letter.
 */
const GLUED_AT = new RegExp(CANDIDATE_BODY, "iuy");
const CONTEXT =
  /\b(?:phone|tel|telephone|call|mobile|cell|cellphone|fax|whatsapp|text|sms|reach|contact|number|ph|mob|hotline|landline|dial|pager)\b[.:#]?\s*(?:(?:me|us|him|her|is|at|on|to|back|number|no\.?|me at)\s*){0,3}[:#]?\s*\(?$/i;
/**
 * Labels of a number in the languages the engine reads ("Tél", "tlf", "puh", "телефон", "τηλ",
 * "电话", "फ़ोन"...), before it (with a colon, a dash or a bracketed word between: "Phone
 * (office): …", "fax-0 40 …") or right after it ("… (office)", "… mobile"): one word looked up
 * in a set, not a pattern tried along the text.
 */
const LABELS = new Set(
  (
    "tel tél tel. tele telefon telefonas telefono telefone teléfono téléphone tlf puh puhelin mobil mobile mobiltel " +
    "mobiltelefon handy gsm office kontor bureau work home landline fax telefax cell numer numero numeroon número nummer " +
    "szám számom számunk phone whatsapp телефон тел номер моб τηλ τηλέφωνο κιν טלפון נייד هاتف جوال फ़ोन फोन नंबर मोबाइल " +
    "电话 手机 電話 携帯 전화 휴대폰 " +
    // switchboards, desks and "call" in the other languages ("… växel", "pevná linka …", "Ring …", "Bel …")
    "växel vaxel vxl linka centrala centrála ústředna ustredna mobitel mobiel büro buero zentrale durchwahl fixo fijo " +
    "celular móvil movil portable fixe cellulare ufficio ring bel soita zadzwoń zavolejte nazovite llámame llame " +
    // the River Plate's voseo ("llamá a …", "llamame", "llamanos") and the infinitive
    "llamá llamame llamanos llamar " +
    "ligue appelez chiamate rufen tfn telefonnr mobilnr mob ph cel " +
    // Icelandic, Estonian, Latvian, Lithuanian, Turkish, Slavic and other words for a phone or a call
    "sími simi farsími gsm-nr kõne helista helistage mobiil tālr tālrunis tālruņa telefonu numaram numarası cep " +
    "hívj hívjon telefonszám zavolej zavolaj zvoni pozovi звоните позвоните перезвоните мобильный тлф " +
    "gọi sđt đt điện thoại tawagan tumawag piga simu nambari " +
    // records' keys, and "my number" in Arabic and Hebrew
    "msisdn msisdn_number phone_number phonenumber mobile_number tel_no رقم رقمي رقمه هاتفي جوالي מספר טל טלפון " +
    "thoai sdt dienthoai " +
    // Persian ("mobile", "phone", "my number")
    "تلفن همراه موبایل شماره " +
    // messengers whose handle is the number ("wechat 13800138000", "Viber +380 …")
    "wechat weixin viber telegram zalo kakaotalk imessage " +
    // "my num", Malay and Indonesian "HP" (handphone), Brazil's "zap" (WhatsApp)
    "num hp zap"
  ).split(" "),
);
/** labels written without a space before the number's label word in Chinese and Japanese text ("我的电话：") */
const CJK_LABELS = [
  "เบอร์",
  "โทร",
  "电话",
  "手机",
  "電話",
  "携帯",
  "联系",
  "聯繫",
  "聯絡",
  "致电",
  "拨打",
  "連絡",
  "連絡先",
  "番号",
];

function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 0xc0 && !isSpace(c) && c !== 0xff1a && c !== 0x3000);
}

/** The word that ends at `end`, lower case. */
function labelWord(text: string, from: number, end: number): string {
  let k = end;
  while (k > from && isLabelChar(text.charCodeAt(k - 1))) k--;
  return text.slice(k, end).toLowerCase();
}

/** the first kana: CJK labels and the particles after them are kana or Han, all at or above it */
const KANA_AND_HAN = 0x3040;

export function isLabel(word: string): boolean {
  if (LABELS.has(word)) return true;
  // (a particle or "number" may follow the label word: "手机号是", "電話番号は", "联系电话为"; a word that does
  // not end in kana or Han ends in no label of them)
  const last = word.charCodeAt(word.length - 1);
  if (last < KANA_AND_HAN && !(last >= 0x0e00 && last <= 0x0e7f)) return false;
  const tail = word.length > 10 ? word.slice(-10) : word;
  // an order's number is none ("注文番号": its "番号" is the order's)
  if (ORDER_WORDS_CJK.some((w) => tail.includes(w))) return false;
  for (const l of CJK_LABELS) if (tail.includes(l)) return true;
  return false;
}

/** A label before `start`: the last word, past blanks, ":", "#", "-", "(" and a bracketed word ("Phone (office): "). */
function labelBefore(text: string, start: number): boolean {
  const lo = Math.max(0, start - 30);
  let k = start;
  const skip = () => {
    while (k > lo) {
      const c = text.charCodeAt(k - 1);
      // (and a record's quotes and "=": "手机号":"159…", msisdn="2547…")
      if (
        isSpace(c) ||
        c === 58 ||
        c === 0xff1a ||
        c === 35 ||
        c === 45 ||
        c === 40 ||
        c === 46 ||
        c === 34 ||
        c === 39 ||
        c === 61
      )
        k--;
      else break;
    }
  };
  skip();
  if (k > lo && text.charCodeAt(k - 1) === 41) {
    const open = text.lastIndexOf("(", k - 1);
    if (open >= lo && k - open <= 14) {
      k = open;
      skip();
    }
  }
  const word = labelWord(text, lo, k);
  // (a label in the plural too, over a list: "Mobiles:\n0612345678\n0612345679")
  if (isLabel(word) || (word.length > 3 && word.endsWith("s") && isLabel(word.slice(0, -1)))) return true;
  // a label spaced out by a scanner ("P h o n e : 4155550132", "Ph one :"), or of one letter on a card ("P: 4155550132")
  if (word.length <= 4 && word.length > 0) {
    const spaced = spacedWord(text, k);
    if (spaced !== null && isLabel(spaced)) return true;
    if (word.length === 1 && oneLetterLabel(text, k)) return true;
  }
  // a word for "numbers" after the label ("Phone numbers:", "Mobile no.", "Telefonnummern")
  if (!NUMBER_WORDS.has(word)) return false;
  k -= word.length;
  skip();
  return isLabel(labelWord(text, lo, k)) || isLabel(labelWord(text, lo, k).replace(/s$/, ""));
}

/**
 * The word a scanner spaced out that ends at `end` ("T e l e p h o n e", "E - m a i l", "Ph one"), lower
 * case and joined: two to twelve runs of one to four letters, each apart by one blank or a dash with a
 * blank either side, on one line; or null. The longest such run that is a phone's label, when one is; else the whole.
 */
export function spacedWord(text: string, end: number): string | null {
  const parts: string[] = [];
  let k = end;
  while (parts.length < 12) {
    let a = k;
    while (a > 0 && k - a <= 4 && isLabelChar(text.charCodeAt(a - 1))) a--;
    if (a === k || k - a > 4) break;
    parts.push(text.slice(a, k).toLowerCase());
    // one blank, or " - ", before it
    if (text.charCodeAt(a - 1) !== 32 || !isLabelChar(text.charCodeAt(a - 2))) {
      if (!(text.charCodeAt(a - 1) === 32 && text.charCodeAt(a - 2) === 45 && text.charCodeAt(a - 3) === 32)) break;
      k = a - 3;
    } else k = a - 1;
  }
  if (parts.length < 2) return null;
  let joined = "";
  let best: string | null = null;
  for (const p of parts) {
    joined = p + joined;
    if (joined.length >= 3 && isLabel(joined)) best = joined;
  }
  return best ?? joined;
}

/** letters that stand for a phone's label on a card or a signature: phone, tel, mobile, fax, work, home, cell, office */
const ONE_LETTER_LABELS = "ptmfwhco";

/**
 * A one-letter label ending at `end` ("P: 4155550132", "M. 0612345678", "T: …"): one of ONE_LETTER_LABELS, a capital
 * then ":" or ".", or a small letter then ":" ("p." is a page's), at a line's start or after a blank or a card's
 * separator ("|", "·", ",", ";", "/", "("), no letter before.
 */
function oneLetterLabel(text: string, end: number): boolean {
  const c = text.charCodeAt(end);
  const letter = text.charCodeAt(end - 1);
  const capital = letter >= 65 && letter <= 90;
  if (!(c === 58 || (c === 46 && capital)) || !ONE_LETTER_LABELS.includes(String.fromCharCode(letter | 32))) return false;
  const b = text.charCodeAt(end - 2);
  return end < 2 || isSpace(b) || b === 124 || b === 0xb7 || b === 44 || b === 59 || b === 47 || b === 40;
}

/** a list's bullet at the end of what stands between two numbers */
const BULLET_END = /[-*•·][ \t]*$/;
/** words for "number" or "numbers" that follow a phone's label */
const NUMBER_WORDS = new Set("number numbers nos no nr nummer nummern numéro numéros número números numero numeri".split(" "));

/** A label right after the number ending at `end`: "… (office)", "…, mobile", "… fax". */
function labelAfter(text: string, end: number): boolean {
  const hi = Math.min(text.length, end + 16);
  let k = end;
  while (k < hi) {
    const c = text.charCodeAt(k);
    if (c === 32 || c === 9 || c === 40 || c === 44 || c === 47 || c === 45) k++;
    else break;
  }
  let e = k;
  while (e < hi && isLabelChar(text.charCodeAt(e))) e++;
  if (e === k || !LABELS.has(text.slice(k, e).toLowerCase())) return false;
  // (not the label of the next number, a "." or ":" after it: "Kd-Nr. 1234567 Tel. 0228 …")
  if (text.charCodeAt(e) !== 46 && text.charCodeAt(e) !== 58) return true;
  e++;
  while (e < text.length && e - k < 24 && isSpace(text.charCodeAt(e))) e++;
  return !(isDigitAt(text, e) || text.charCodeAt(e) === 43);
}

/** Words of CONTEXT that say a number is to be called, wherever they stand in the line before it; with the labels, for labelInLine. */
// ("Contact: Anna 0612345678": a name between the word and the number)
const CALL_WORDS = "call ring dial phone telephone text sms whatsapp reach contact".split(" ");
const LINE_LABELS = new WordFilter([...LABELS, ...CALL_WORDS]);

/**
 * A label or a word of calling earlier in the same line, with no other digit between it and the
 * number ("Kõne: Toomas Hendrik – 5412 8833", "ring aunt Vera back 555 0193"): up to 48 characters back.
 */
function labelInLine(text: string, start: number): boolean {
  const lo = Math.max(0, start - 48);
  let k = start;
  while (k > lo) {
    const c = text.charCodeAt(k - 1);
    if (c === 10 || (c >= 48 && c <= 57)) break;
    k--;
  }
  // the words between, by their characters (isLabelChar: letters, and marks of other scripts)
  for (let i = k; i < start; ) {
    while (i < start && !isLabelChar(text.charCodeAt(i))) i++;
    const from = i;
    while (i < start && isLabelChar(text.charCodeAt(i))) i++;
    if (i - from >= 2 && LINE_LABELS.hasAt(text, from, i)) return true;
  }
  return false;
}

/**
 * Words for an order, a shipment or a tracking number in the languages the engine reads (Latin and
 * Cyrillic words; Chinese, Japanese and Korean ones are found inside the text before a number): a
 * number after one of them in its line, no other digit between, is that number, not a phone or a card.
 */
const ORDER_WORDS = new WordFilter(
  (
    "order orders tracking awb waybill consignment shipment parcel invoice ticket booking reservation sku " +
    "bestellung bestellnummer auftrag sendung sendungsnummer lieferschein rechnung commande colis facture pedido factura " +
    "ordine fattura spedizione zamówienie zamowienie przesyłka faktura objednávka zásilka rendelés számla sipariş siparis " +
    "fatura kargo заказ заказа накладная счёт счет посылка трек замовлення order-nr ordernr " +
    // a product's barcode or a book's number ("EAN 5901234123457"): no phone and no card
    "ean gtin upc isbn barcode"
  ).split(" "),
);
const ORDER_WORDS_CJK = [
  "注文番号",
  "注文",
  "订单",
  "訂單",
  "运单",
  "單號",
  "单号",
  "주문번호",
  "주문",
  "송장",
  "운송장",
  "伝票",
];

/** Whether a word for an order or a shipment stands earlier in the line before `start`, with no digit between. */
export function orderNumberBefore(text: string, start: number): boolean {
  const lo = Math.max(0, start - 32);
  let k = start;
  while (k > lo) {
    const c = text.charCodeAt(k - 1);
    if (c === 10 || (c >= 48 && c <= 57)) break;
    k--;
  }
  if (k === start) return false;
  for (let i = k; i < start; ) {
    while (i < start && !isLabelChar(text.charCodeAt(i))) i++;
    const from = i;
    while (i < start && isLabelChar(text.charCodeAt(i))) i++;
    if (i - from >= 3 && ORDER_WORDS.hasAt(text, from, i)) return true;
  }
  const window = text.slice(k, start);
  return /[\u3040-\u9fff\uac00-\ud7af]/.test(window) && ORDER_WORDS_CJK.some((w) => window.includes(w));
}

/** "my no is", "mob no:", "ph. no." before a number */
const MY_NUMBER =
  /\b(?:my|mob|mobile|ph|phone|cell|contact|whatsapp)\.?[ \t]{1,3}no\.?[ \t]{0,3}(?:is[ \t]{0,3})?[:#-]?[ \t]{0,3}$/i;
/** India's mobiles as written: five and five digits, the first 6 to 9 ("98140 27753") */
const INDIA_MOBILE = /^(?:\+91[ -]?)?[6-9]\d{4}[ -]\d{5}$/;

/** a Hebrew prefix letter alone (at, to, from, and, that) */
const HEBREW_PREFIX = /^[בלמושכה]$/;

/** Labels of tax, company and bank numbers, lower case: a number after them is no phone. */
const NOT_PHONE_LABELS = new Set(
  "nip regon krs pesel vat ust ustid iban bic swift ico ičo dič dic oib cvr orgnr kvk siren siret nif cif nie rfc cnpj cpf tva btw mwst".split(
    " ",
  ),
);

/** The start of the blanks, ":", "#" and "." before `start`. */
function skipBack(text: string, start: number): number {
  let k = start;
  while (k > 0) {
    const c = text.charCodeAt(k - 1);
    if (isSpace(c) || c === 58 || c === 35 || c === 46) k--;
    else break;
  }
  return k;
}

/** European groupings: groups of two or three digits (the first up to four), one kind of separator, 8 to 10 digits. */
const EUROPEAN = /^(?:0|\d{2,4})(?:([ .-])\d{2,3})(?:\1\d{2,3}){1,3}$/;
/** An area code with its trunk 0, then a dash or "/", then the subscriber's groups: "08-32 77 14", "02/5443 1287". */
const AREA_THEN_GROUPS = /^0\d{1,3} ?[-/] ?\d{2,4}(?: \d{2,4}){1,3}$/;
/** An international number in blank-separated groups, a dash and one to four digits at its end: the extension. */
const DASH_EXTENSION = /^\+\d[\d ]*\d \d+-\d{1,4}$/;
/** "8 921 334 58 12", "8-921-334-58-12", "8 (495) 231-47-80", "8 612 34567" */
const TRUNK_EIGHT = /^8[ -](?:\(\d{3,4}\)|\d{3,4})[ -]\d{2,5}(?:[ -]\d{2,3}){0,2}$/;
/** a line above that says what else the number is: "Invoice\n…", "Order no.\n…", "Total:\n…" */
const NUMBER_OF_LINE =
  /\b(?:invoice|order|rechnung|faktura|factura|fattura|lasku|számla|total|amount|sum|summe|account|konto|ref|reference|id|no|nr|tracking|iban|code|pin|otp|serial|vat|tax)\b[^\n]{0,20}\n[ \t]*$/i;
/** a number in thousands: "1 234 567", "12 500 000" */
const THOUSANDS = /^\d{1,3}(?:[ .]\d{3})+$/;

/** Whether [start, end) is all of its line, in a text of two lines or more. */
function aloneOnLine(text: string, start: number, end: number): boolean {
  let k = start;
  while (k > 0 && (text[k - 1] === " " || text[k - 1] === "\t")) k--;
  let e = end;
  while (e < text.length && (text[e] === " " || text[e] === "\t" || text[e] === "\r")) e++;
  const opens = k === 0 || text[k - 1] === "\n";
  const closes = e === text.length || text[e] === "\n";
  return opens && closes && (k > 0 || e < text.length);
}

/** blank-separated groups of two to four digits, the first of two to four */
const MIXED_GROUPS = /^\d{2,4}(?: \d{2,4}){2,3}$/;
/** what stands between two numbers of one person: a slash, a comma, "or" */
// (or a line break, a list's bullet perhaps after it: "Phone numbers:\n- 0612345678\n- 0612345679")
const BETWEEN_NUMBERS = /^[ \t]*(?:(?:[/,;|]|or|eller|oder|ou|o|tai|vagy|lub|nebo|ili|или)[ \t]*|\r?\n[ \t]*(?:[-*•·][ \t]*)?)$/i;
/** a number word after what the number is of: a customer, an order, an invoice */
const OTHER_NUMBER =
  /\b(?:customer|client|account|acct|order|invoice|reference|ref|member(?:ship)?|booking|ticket|case|tracking|policy|contract|serial|passport|registration|confirmation|reservation|transaction|parcel|shipment|part|item|article|product|model|sku|catalog(?:ue)?|batch|lot|kunden|bestell|rechnungs|artikel|teile)[ \t]*(?:number|no\.?|nr\.?|#|nummer)[ \t]*[:#.]?[ \t]*(?:\r?\n[ \t]*)?$/i;
/**
 * OTHER_NUMBER.test(before), read only where it can match: its match ends in a number word ("number",
 * "no", "nr", "nummer", "#") and at most one of ":", "#", "." before blanks and a line break, so the
 * last character of `before` that is no blank or line break is one of ":#.", "r" or "o".
 */
function otherNumber(before: string): boolean {
  let k = before.length - 1;
  while (k >= 0 && isSpace(before.charCodeAt(k))) k--;
  const c = before.charCodeAt(k) | 32;
  if (c !== 0x72 && c !== 0x6f && c !== 0x3a && c !== 0x23 && c !== 0x2e) return false; // r o : # .
  return OTHER_NUMBER.test(before);
}
const NANP = /^(?:\+?1[\s.-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.-])\d{3}[\s.-]\d{4}$/;
const DATE_SHAPE = /^(?:\d{1,2}[.\-/ ]\d{1,2}[.\-/ ](?:19|20)\d{2}|(?:19|20)\d{2}[.\-/ ]\d{1,2}[.\-/ ]\d{1,2})$/;
/** the area code and its "/" of "0221/941 2273", "01/4812-377" */
const AREA_SLASH = /^0\d{1,4} ?\/ ?/;
// 3-2-4 with dashes is how SSNs are written, never phone numbers
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
const EXTENSION = /(?<!\s),?\s*(?:ext\.?|x|#)\s*\d{1,6}$/i;

/**
 * The text with each line break inside a labelled or international number read as a blank ("tel +33
 * 1 42\n68 53 00", copied from a narrow column): a break between two digits, in a line that holds a
 * "+" and a digit, a label or a word of calling. Same length, so offsets hold; the numbers found
 * keep their line break (the entity is sliced from the text as written).
 */
function joinBrokenNumbers(text: string): string {
  let joined: string[] | null = null;
  for (let i = text.indexOf("\n"); i > 0; i = text.indexOf("\n", i + 1)) {
    // (a dash or a blank may end the line: "+1 (312) 555-\n0148")
    const dash = text.charCodeAt(i - 1) === 45 || text.charCodeAt(i - 1) === 32;
    const a = text.charCodeAt(dash ? i - 2 : i - 1);
    const b = text.charCodeAt(i + 1);
    if (a < 48 || a > 57 || b < 48 || b > 57) continue;
    const lineStart = text.lastIndexOf("\n", i - 1) + 1;
    const line = text.slice(Math.max(lineStart, i - 48), i);
    if (!/\+\d/.test(line) && !labelInLine(text, i - (line.length - line.search(/\d/)))) continue;
    joined ??= [...text];
    joined[i] = " ";
  }
  return joined ? joined.join("") : text;
}

/** a number written into a URL with its "+" encoded ("?phone=%2B4930884126") */
const URL_PLUS = /%2[Bb](\d{8,15})(?!\d)/g;
/** the number of a WhatsApp link, country code first ("https://wa.me/5511912345678?text=oi") */
const WA_LINK = /(?<=wa\.me\/)\+?\d{8,15}(?!\d)/g;
/** a mainland Chinese mobile number written in one run of eleven digits ("张伟,13710428856,广州…") */
const CN_MOBILE = /(?<![\d+])1[3-9]\d{9}(?!\d)/g;
/** Han characters: text where a run of eleven digits from 13 to 19 is most often a mobile number */
const HAN = /[\u3400-\u9fff]/;

export function findPhoneNumbers(text: string): PiiEntity[] {
  const found = phonesIn(text, text);
  if (text.includes("%2"))
    for (const m of text.matchAll(URL_PLUS)) found.push(entity("phone_number", text, m.index, m.index + m[0].length, 0.9));
  if (text.includes("wa.me/"))
    for (const m of text.matchAll(WA_LINK)) found.push(entity("phone_number", text, m.index, m.index + m[0].length, 0.9));
  if (hasNonAscii(text) && HAN.test(text))
    for (const m of text.matchAll(CN_MOBILE))
      if (!found.some((f) => f.start <= m.index && m.index < f.end))
        found.push(entity("phone_number", text, m.index, m.index + m[0].length, 0.8));
  const joined = joinBrokenNumbers(text);
  if (joined === text) return found;
  // numbers over a line break, in place of the parts of them found on one line ("+49 30\n1234 5678"),
  // but never over a whole number the text as written holds ("…53 00\n12 items")
  const inside = (f: PiiEntity, e: PiiEntity) => e.start <= f.start && f.end <= e.end;
  const more = phonesIn(joined, text).filter(
    (e) =>
      text.slice(e.start, e.end).includes("\n") &&
      found.every(
        (f) => f.end <= e.start || f.start >= e.end || (inside(f, e) && (partOfNumber(f.text) || text.charCodeAt(f.end) === 45)),
      ),
  );
  if (more.length === 0) return found;
  const kept = found.filter((f) => !more.some((e) => inside(f, e)));
  return [...kept, ...more].sort((a, b) => a.start - b.start);
}

const YEAR_REFERENCE = /^\d{1,6}\/(?:19|20)\d\d$/;
/** a date of any calendar, year first ("1364/05/12", Persian) */
const YEAR_MONTH_DAY = /^\d{4}([/.-])\d{1,2}\1\d{1,2}$/;

const isDigitAt = (text: string, at: number): boolean => {
  const c = text.charCodeAt(at);
  return c >= 48 && c <= 57;
};

/** A number found on one line that may be the first or last part of one broken over two: national, fewer than nine digits. */
function partOfNumber(found: string): boolean {
  return !found.startsWith("+") && found.replace(/\D/g, "").length < 9;
}

/** The phone numbers of `text` (`written` with some line breaks read as blanks), sliced from `written`. */
function phonesIn(text: string, written: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  let lastEnd = -1;
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m !== null; m = CANDIDATE.exec(text)) {
    const next = CANDIDATE.lastIndex;
    const score = candidateScore(text, written, m, lastEnd, out);
    if (score > 0) {
      lastEnd = (out[out.length - 1] as PiiEntity).end;
      // (a number cut where two numbers stand apart: what follows is read again)
      if (lastEnd < m.index + m[0].length && NUMBERS_APART.test(m[0])) CANDIDATE.lastIndex = lastEnd;
    } else {
      // a number after a short one that took it in ("plot 9 07814 220 937", "(דירה 3) 054-662-1903"): tried again from its second group
      // (or after the gap of two numbers apart: "0612345678 / 0612345679" of twenty digits is none, each of ten is)
      // (or after a dash set off by blanks, a sentence's between two fields: "Room 3.14 — 021 808 4419")
      const again = secondGroup(m[0]);
      const apart = again > 0 ? -1 : m[0].search(NUMBERS_APART);
      const dashed = again > 0 || apart > 0 ? -1 : m[0].indexOf(" - ");
      CANDIDATE.lastIndex =
        again > 0 ? m.index + again : apart > 0 ? m.index + apart + 1 : dashed > 0 ? m.index + dashed + 3 : next;
    }
  }
  for (let plus = text.indexOf("+", 1); plus > 0; plus = text.indexOf("+", plus + 1)) {
    if (!isDigitAt(text, plus + 1) || !LETTER.test(text[plus - 1] as string)) continue;
    // (after a letter of a script written without blanks, CANDIDATE has read it already: "电话+86 …")
    if (out.some((e) => e.start <= plus && plus < e.end)) continue;
    GLUED_AT.lastIndex = plus;
    const m = GLUED_AT.exec(text);
    if (m) candidateScore(text, written, m, -1, out);
  }
  // digits glued to their label ("Tel0612345678", "Mob07700900123"): tried where a label ends right before a digit
  if (LETTER_DIGIT.test(text)) {
    LETTER_DIGIT.lastIndex = 0;
    for (let g = LETTER_DIGIT.exec(text); g !== null; g = LETTER_DIGIT.exec(text)) {
      const at = g.index + g[0].length - 1;
      if (!isLabel(labelWord(text, Math.max(0, at - 16), at)) || out.some((e) => e.start <= at && at < e.end)) continue;
      GLUED_AT.lastIndex = at;
      const m = GLUED_AT.exec(text);
      if (m) candidateScore(text, written, m, -1, out);
    }
    LETTER_DIGIT.lastIndex = 0;
  }
  return out;
}

/** a letter (of a label) with a digit right after it */
const LETTER_DIGIT = /[A-Za-z\u00C0-\u024F\u0370-\u052F]\d/g;

/** Where the second group of a candidate starts when its first is of one to three digits and a number starts there, else 0. */
function secondGroup(raw: string): number {
  let k = raw.charCodeAt(0) === 40 ? 1 : 0;
  const from = k;
  while (k < raw.length && isDigitAt(raw, k)) k++;
  if (k === from || k - from > 3 || k >= raw.length) return 0;
  const sep = k;
  while (k < raw.length && !isDigitAt(raw, k) && raw.charCodeAt(k) !== 43) k++;
  // (only across a blank or a closing bracket: "12/03/2026 …" and "1.2.3.4" are no numbers side by side, and
  // retrying them group by group would read a long run of slashed dates many times)
  if (!/[ \t)]/.test(raw.slice(sep, k))) return 0;
  // (a number of its own starts with "+" or a trunk 0 or 8: "07814 …", "054-…", "8-913-…"; not "0000 0000 0008")
  const c = raw.charCodeAt(k);
  const trunk =
    c === 43 ||
    (c === 48 && isDigitAt(raw, k + 1) && raw.charCodeAt(k + 1) !== 48) ||
    (c === 56 && (raw.charCodeAt(k + 1) === 45 || raw.charCodeAt(k + 1) === 32 || raw.charCodeAt(k + 1) === 40));
  return k < raw.length && trunk ? k : 0;
}

/** China's mobile numbers (1, then 3 to 9) in their 3-4-4 grouping, one separator */
const CHINA_MOBILE = /^1[3-9]\d([ -])\d{4}\1\d{4}$/;

/** a letter (one UTF-16 unit: the one before a "+") */
const LETTER = /\p{L}/u;
/** "+" and 10 to 15 digits, nothing else */
const COMPACT_E164 = /^\+\d{10,15}$/;
/** where two numbers stand apart: two whitespace characters in a row, or a "/" with a blank either side */
const NUMBERS_APART = /\s\s|\s\/\s/;

/** A last group of one or two digits after a blank: a count that follows a number, not a part of it. */
const TRAILING_COUNT = /[ \t]\d{1,2}$/;
/** what follows such a count: a blank and a word in lower case ("2 times", "5 days") */
const COUNTED_WORD = /^[ \t]\p{Ll}/u;

/** The score of the candidate `m` (0: none), its entity pushed on `out` when it is a number. */
function candidateScore(text: string, written: string, m: RegExpExecArray, lastEnd: number, out: PiiEntity[]): number {
  let raw = m[0];
  // a leading "(" belongs to the number only when it closes later
  let start = m.index;
  if (raw.startsWith("(") && !raw.includes(")")) {
    raw = raw.slice(1);
    start++;
  }
  // after "word-" or "word.": only a label glued to its number ("fax-0 40 3218 771", "mob.+48…"), not a reference ("INV-2024 …")
  const glue = text.charCodeAt(start - 1);
  if (glue === 45 || glue === 46) {
    // (or a Hebrew one-letter prefix: "ב-054-331-8826")
    const glued = labelWord(text, Math.max(0, start - 16), start - 1);
    if (!isLabel(glued) && !HEBREW_PREFIX.test(glued)) return 0;
  }
  // after a letter, a "+": a number written in one run ("callme+4917612345678") or after its label ("Tel+44 20 …")
  if (raw.charCodeAt(0) === 43 && start > 0 && LETTER.test(text[start - 1] as string) && !COMPACT_E164.test(raw)) {
    if (!isLabel(labelWord(text, Math.max(0, start - 16), start))) return 0;
  }
  // a second number right after one ("+91 80 4112 7755 / 98450-22177", "…, or 040 …") has the first's label
  // (over a line break, the next line's number after a bullet or alone on its line: not "…1234567\n12345678 Berlin")
  const between = lastEnd >= 0 && start - lastEnd <= 8 ? text.slice(lastEnd, start) : null;
  const second =
    between !== null &&
    BETWEEN_NUMBERS.test(between) &&
    (!between.includes("\n") || BULLET_END.test(between) || aloneOnLine(text, start, start + raw.length));
  // a date and the hour of a time ("[03.12.2026 19:40]", "12/1/26 19:02"): no number
  if (text.charCodeAt(start + raw.length) === 58 && isDigitAt(text, start + raw.length + 1)) return 0;
  // a column after the number in a table ("Vodafone 0172 9876543   -39,99"): two blanks end it, as " / " does
  // between two numbers ("Phone: 0612345678 / 0612345679", "Tel 030 1234567 / 030 1234568"): the number before
  // them when it is one (not "0221 / 941 2273", an area code and its number)
  const gap = raw.search(NUMBERS_APART);
  let score = 0;
  if (gap >= 7) {
    score = phoneScore(raw.slice(0, gap), text, start, second);
    if (score > 0) raw = raw.slice(0, gap);
  }
  if (score === 0) score = phoneScore(raw, text, start, second);
  // a count right after the number, a word after it ("Call 555-123-4567 2 times a day"): the number without it
  // (not a digit short of a card: "Visa 715 8309 2615 9 (old card)")
  if (score === 0 && TRAILING_COUNT.test(raw) && COUNTED_WORD.test(text.slice(start + raw.length, start + raw.length + 3))) {
    raw = raw.replace(TRAILING_COUNT, "");
    score = phoneScore(raw, text, start, second);
  }
  if (score > 0) out.push(entity("phone_number", written, start, start + raw.length, score));
  return score;
}

/** a conference's word and "ID" (or "number", "no.", "#") right before a number, nothing but blanks, ":" or "#" after */
const MEETING_ID =
  /(?:^|[^\p{L}])(?:meeting|webinar|conference|zoom|teams|session)[ \t]{0,2}(?:id|number|no\.?|nr\.?|#)[ \t]{0,2}[:#.]?[ \t]{0,2}$/iu;

/**
 * MEETING_ID.test of the 32 characters before `start`, read only when the last of them that is no blank,
 * ":" or "#" is a "d", "r", "o", "." or "#" (the ends of its words): most numbers are passed over by a look at one character.
 */
function meetingId(text: string, start: number): boolean {
  let k = start;
  while (k > 0 && start - k < 6 && (isSpace(text.charCodeAt(k - 1)) || text.charCodeAt(k - 1) === 58)) k--;
  const c = text.charCodeAt(k - 1) | 32;
  if (c !== 0x64 && c !== 0x72 && c !== 0x6f && c !== 0x2e && c !== 0x23) return false; // d r o . #
  return MEETING_ID.test(text.slice(Math.max(0, start - 32), start));
}

/** NOT_PHONE_LABELS.has of the word before the blanks, ":", "#" and "." before `start` (the copy made only for a word of their lengths) */
function notPhoneLabel(text: string, start: number): boolean {
  const lo = Math.max(0, start - 12);
  const end = skipBack(text, start);
  let k = end;
  while (k > lo && isLabelChar(text.charCodeAt(k - 1))) k--;
  return end - k >= NOT_PHONE_SHORTEST && end - k <= NOT_PHONE_LONGEST && NOT_PHONE_LABELS.has(labelWord(text, lo, end));
}
const NOT_PHONE_SHORTEST = Math.min(...[...NOT_PHONE_LABELS].map((w) => w.length));
const NOT_PHONE_LONGEST = Math.max(...[...NOT_PHONE_LABELS].map((w) => w.length));

/** Whether a label or a word of calling says the number at `start` (`length` long) is a phone's; `second`: a second number after one. */
function labelled(text: string, start: number, length: number, second: boolean): boolean {
  if (second) return true;
  const before = text.slice(Math.max(0, start - 30), start);
  // "customer number 00871223", "order no. 4471 2210": the number of something else
  if (otherNumber(before)) return false;
  return (
    CONTEXT.test(before) ||
    MY_NUMBER.test(before) ||
    labelBefore(text, start) ||
    labelAfter(text, start + length) ||
    labelInLine(text, start) ||
    columnLabel(text, start)
  );
}

/** Words of a table's header that name a column of phone numbers ("phone", "Mobile No.", "msisdn", "Telefon"). */
const PHONE_COLUMN_WORDS = new Set(
  (
    "phone phones phonenumber telephone tel tél tel. telefon telefone telefono teléfono téléphone mobile mobil mobiel " +
    "mobiltelefon cell cellphone celular móvil movil portable cellulare fax msisdn handy gsm whatsapp sms landline puhelin " +
    "телефон тел мобильный τηλέφωνο 电话 手机 電話 携帯 전화 휴대폰"
  ).split(" "),
);
/** a table's column delimiters: a tab, ";", ",", "|" */
const isColumnDelimiter = (c: number): boolean => c === 9 || c === 59 || c === 44 || c === 124;
/** five digits in a row: a row's value, not a header's name */
const FIVE_DIGITS = /\d{5}/;

/**
 * The name a table's header gives the column of `start` ("name,phone\nAnna,0612345678", "id;msisdn\n1;447700900123"),
 * lower case, or null: the column of `start` in its line (its delimiters before it), the same column of the nearest
 * line above with that delimiter and no five digits in a row (the header; twelve lines up at most).
 */
export function columnHeader(text: string, start: number): string | null {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  if (lineStart === 0) return null;
  let lineEnd = text.indexOf("\n", start);
  if (lineEnd < 0) lineEnd = text.length;
  let delimiter = -1;
  for (let i = lineStart; i < lineEnd && delimiter < 0; i++)
    if (isColumnDelimiter(text.charCodeAt(i))) delimiter = text.charCodeAt(i);
  if (delimiter < 0) return null;
  let column = 0;
  for (let i = lineStart; i < start; i++) if (text.charCodeAt(i) === delimiter) column++;
  const mark = String.fromCharCode(delimiter);
  let end = lineStart - 1;
  for (let up = 0; up < 12 && end > 0; up++) {
    const from = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(from, end);
    end = from - 1;
    if (!line.includes(mark) || FIVE_DIGITS.test(line)) continue;
    return line.split(mark)[column]?.toLowerCase() ?? null;
  }
  return null;
}

/** Whether a table's header names the column of `start` a phone's ("phone", "Mobile No.", "msisdn", "Telefon"). */
function columnLabel(text: string, start: number): boolean {
  const header = columnHeader(text, start);
  return (
    header !== null &&
    header.split(HEADER_WORDS).some((w) => PHONE_COLUMN_WORDS.has(w) || PHONE_COLUMN_WORDS.has(w.replace(/\.$/, "")))
  );
}
/** what splits a header's name into words ("phone_number", "Mobile No.") */
const HEADER_WORDS = /[^\p{L}.]+/u;

/**
 * Score of a candidate at `start` in `text`. One pass over the characters counts digits,
 * parentheses and the groups between separators (whitespace, ".", "(", ")", "-"); the context
 * words before the number are looked at only when the shape alone does not settle it.
 */
function phoneScore(raw: string, text: string, start: number, second = false): number {
  let main = raw;
  if (raw.includes("x") || raw.includes("X") || raw.includes("#")) main = raw.replace(EXTENSION, "");
  // an extension after a dash, as Austrian and German numbers are written ("+43 1 512 48 30-9")
  // (only when a whole number stands before the dash: "+507 6418-2276" is Panama's eight-digit number)
  if (main.startsWith("+") && DASH_EXTENSION.test(main)) {
    const stripped = main.replace(/-\d{1,4}$/, "");
    if (stripped.replace(/\D/g, "").length >= 10) main = stripped;
  }
  // a country code in brackets: "(+34) 612 345 678"
  if (main.startsWith("(+")) main = main.replace(/^\((\+\d{1,3})\)/, "$1");
  // the trunk zero in brackets after a country code ("+33 (0)1 42 68 53 00") is no group of its own
  if (main.includes("(0)")) main = main.replace(/^((?:\+|00)\d{1,3}) ?\(0\) ?/, "$1 ");
  const international = main.startsWith("+") || main.startsWith("00");
  // groups are counted after the international prefix
  const from = main.startsWith("+") ? 1 : main.startsWith("00") ? 2 : 0;
  let digits = 0;
  let open = 0;
  let close = 0;
  let previousSpace = false;
  let groups = 0;
  let group = 0;
  let shortLaterGroup = false;
  for (let i = 0; i < main.length; i++) {
    const c = main.charCodeAt(i);
    const space = isSpace(c);
    // two whitespace characters in a row: two numbers side by side
    if (space && previousSpace) return 0;
    previousSpace = space;
    if (c >= 48 && c <= 57) digits++;
    else if (c === 40) open++;
    else if (c === 41) close++;
    if (i < from) continue;
    if (space || c === 46 || c === 40 || c === 41 || c === 45 || c === 47) {
      if (group > 0) {
        if (groups >= 2 && group < 2) shortLaterGroup = true;
        groups++;
      }
      group = 0;
    } else group++;
  }
  // (a last group of one digit after an international number of eight digits or more: the switchboard's
  // extension, as Austrian and German numbers are written: "+43 1 53114 0")
  let shortLast = false;
  if (group > 0) {
    if (groups >= 2 && group < 2) shortLast = true;
    groups++;
  }
  // (or a switchboard's 0 after a national number with its trunk 0 of seven digits or more, when a label says it is a
  // phone: "Tel. 0228 181 0"; not a count after it, "… 0958 2 days")
  const switchboard =
    shortLast && !shortLaterGroup && !international && digits - group >= 7 && TRUNK_ZERO.test(main) && /[ -]0$/.test(main);
  if (shortLast && !switchboard && !(international && !shortLaterGroup && digits - group >= 8 && /[ -]\d$/.test(main)))
    shortLaterGroup = true;
  if (digits < 7 || digits > 15) return 0;
  // a case's or a file's number and its year ("الدعوى رقم 1487/2026", "Az. 2291/2025")
  if (YEAR_REFERENCE.test(main) || YEAR_MONTH_DAY.test(main)) return 0;
  if (open !== close) return 0;
  // single digits after the first two groups are lists or versions, not phone numbers (but an
  // international number may hold one: Brazil's mobile "+55 (31) 9 9418-2273")
  if ((shortLaterGroup && !(international && digits >= 10)) || groups > 6) return 0;
  // (every test above and these two give 0 alike: the shapes are tested once the counts let the number through)
  if (DATE_SHAPE.test(main) || SSN_SHAPE.test(main)) return 0;
  // a tax or registry number after its label ("NIP 725-18-44-210", "OIB", "CVR"), not a phone
  if (notPhoneLabel(text, start)) return 0;
  // a conference's meeting ID ("Meeting ID: 845 2211 9034", "Webinar ID 912 3345 6678"): no number to call
  if (!international && meetingId(text, start)) return 0;
  // (asked up to three times below: worked out once)
  let known: boolean | null = null;
  const context = () => {
    known ??= labelled(text, start, raw.length, second);
    return known;
  };
  // an order's, a shipment's or a tracking number ("注文番号 2025-1106-4471", "Заказ № 118-552-907", "AWB 781 …")
  // (unless a label or a word of calling says otherwise: "order question, call 020 7946 0958")
  if (!international && orderNumberBefore(text, start) && !context()) return 0;

  // "00" and a country code: at least ten digits, and not the number of an order or a customer ("customer number 00871223")
  if (international && main.startsWith("00") && (digits < 10 || otherNumber(text.slice(Math.max(0, start - 30), start))))
    return 0;
  if (international) return digits >= 8 ? 0.9 + (context() ? 0.05 : 0) : 0;
  if (switchboard) return context() ? 0.8 : 0;
  // "/" between groups other than after the area code ("0221/941 2273") only in a labelled number
  if (main.includes("/") && main.replace(AREA_SLASH, "").includes("/") && !context()) return 0;
  if (NANP.test(main)) return 0.88 + (context() ? 0.05 : 0);
  if (INDIA_MOBILE.test(main)) return 0.8 + (context() ? 0.05 : 0);
  // a mobile number of mainland China as it is written, 3-4-4 ("159-2106-8843", "177 2014 8836")
  if (CHINA_MOBILE.test(main)) return 0.8 + (context() ? 0.05 : 0);
  // "(030) 1234567", and after a trunk digit: "8 (495) 231-47-80", "0 (542) 318 27 64"
  if (/^(?:[08] ?)?\(\d{2,5}\)/.test(main) && digits >= 8) return 0.85 + (context() ? 0.05 : 0);
  // trunk prefix 0 with separators: UK "020 7946 0958", FR "01 23 45 67 89", DE "030 1234567"
  if (/^0[1-9]/.test(main) && groups >= 2 && digits >= 9 && digits <= 12) return 0.8 + (context() ? 0.05 : 0);
  if ((groups >= 2 || digits === 10) && context()) return 0.75;
  // "08-32 77 14": an area code, then the groups
  if (digits >= 8 && digits <= 11 && AREA_THEN_GROUPS.test(main)) return 0.72;
  // "22 41 87 36", "33.12.47.90", "948 22 117": how European numbers are written, no label needed
  // (a trunk 0 written apart, "0 216 555 48 12", is not counted)
  if (digits >= 8 && digits <= (main.startsWith("0 ") ? 11 : 10) && groups >= 3 && EUROPEAN.test(main)) return 0.72;
  // the trunk 8 of Russia and its neighbours before the area code: "8 921 334 58 12", "8-921-334-58-12", "8 612 34567"
  if (digits >= 9 && digits <= 11 && TRUNK_EIGHT.test(main) && !THOUSANDS.test(main)) return 0.72;
  return layoutScore(main, text, start, raw.length, digits, groups, context);
}

/**
 * The score phoneScore gives a national number no shape above settled (`main` its digits and separators,
 * at `start` in `text`, `length` long as written): by where it stands (alone on its line, in brackets after
 * a name), by its groups (Chinese and Greek ones), or by a label (`context`) for a single run.
 */
function layoutScore(
  main: string,
  text: string,
  start: number,
  length: number,
  digits: number,
  groups: number,
  context: () => boolean,
): number {
  // a number alone on its line of a card or a signature ("Laura Jensen\nSales\n2912 3456")
  if (
    digits <= 12 &&
    groups >= 2 &&
    aloneOnLine(text, start, start + length) &&
    !THOUSANDS.test(main) &&
    !/^\d{4}(?: \d{4}){2,}$|^(?:19|20)\d{2}[ -]\d{3,4}$/.test(main) &&
    !NUMBER_OF_LINE.test(text.slice(Math.max(0, start - 40), start))
  )
    return 0.7;
  // "138 0013 8642", "210 3617 482": groups of two to four digits with a four among them, as Chinese,
  // Greek and other national numbers are written (not a thousands-separated amount, not 4-4-4)
  if (
    digits >= 9 &&
    digits <= 12 &&
    groups >= 3 &&
    MIXED_GROUPS.test(main) &&
    /(?:^| )\d{4}(?: |$)/.test(main) &&
    !/^\d{4} \d{4} \d{4}$/.test(main)
  )
    return 0.7;
  // one run of digits ("call me back 0117133") only right after a word that says it is a number
  // (up to fifteen: a number with its country code and no "+", "send?phone=5511912345678")
  if (groups === 1 && context()) return 0.7;
  // or in brackets after a name: "Anna (0612345678)", a national number with its trunk 0 (9 to 11 digits)
  if (groups === 1 && digits >= 9 && digits <= 11 && TRUNK_ZERO.test(main) && afterName(text, start, length)) return 0.7;
  return 0;
}

/** a trunk 0 before a digit that is none */
const TRUNK_ZERO = /^0[1-9]/;
/** a capitalised word ("Anna", "Kwame", "Zoë"), a blank and "(" at the end */
const NAME_AND_BRACKET = /(?:^|[^\p{L}])\p{Lu}\p{Ll}+ \($/u;

/** Whether the number at [start, start + length) stands in brackets right after a capitalised word ("Anna (0612345678)"). */
function afterName(text: string, start: number, length: number): boolean {
  if (text.charCodeAt(start - 1) !== 40 || text.charCodeAt(start + length) !== 41 || text.charCodeAt(start - 2) !== 32)
    return false;
  return NAME_AND_BRACKET.test(text.slice(Math.max(0, start - 24), start));
}
