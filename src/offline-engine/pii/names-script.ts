/**
 * Person names in the other scripts the engine reads as languages: Cyrillic, Greek, Arabic,
 * Hebrew, Devanagari, Chinese and Japanese (Han and kana), Korean (Hangul). Evidence as for Latin
 * names: a cue before the name in the language itself ("Меня зовут", "Με λένε", "اسمي", "שמי",
 * "मेरा नाम", "我叫", "제 이름은") or in English ("Dear", "Regards,", "Name:"), a form's label
 * ("Имя:", "姓名：", "联系人："), an honorific after it ("様", "さん", "님"), or a given name of
 * the lists (given-names.ts) leading two capitalised words. A run stops at a function word of
 * the language (the `stopword` package's lists), at punctuation, or after three words.
 *
 * A text with no letter of these scripts costs one native scan (`NON_LATIN.test`).
 */
import { slicedEngine } from "../engines";
import { readStopwordLists } from "../stopwords";
import { hasNonAscii } from "./chars";
import { isFamilyName, isGivenName } from "./given-names";
import { entity, type PiiEntity } from "./types";

const NON_LATIN = /[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u097f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;

/** A word of one of the spaced scripts (Greek, Cyrillic, Hebrew, Arabic, Devanagari). */
const SPACED_WORD =
  /[\u0370-\u037d\u037f-\u0386\u0388-\u03ff\u1f00-\u1fff]+|[\u0400-\u04ff]+|[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4-\u05c7\u05d0-\u05ea\u05f0-\u05f2]+|[\u0620-\u065f\u066e-\u06d3\u06d5\u06e5\u06e6\u06fa-\u06ff\u0750-\u077f]+|[\u0900-\u0963\u0971-\u097f]+/gu;

/** Cues that end right before a name, in the name's language or in English (lower case where the script has case). */
const CUES = [
  // Russian, Ukrainian, Bulgarian
  "меня зовут",
  "мене звати",
  "зовут",
  "уважаемый",
  "уважаемая",
  "дорогой",
  "дорогая",
  "шановний",
  "шановна",
  "с уважением,?",
  "с наилучшими пожеланиями,?",
  "з повагою,?",
  "контактное лицо:?",
  "контакт:?",
  "имя:?",
  "фио:?",
  "ім'я:?",
  "от:?",
  "привет,?",
  "здравствуйте,?",
  "добрый день,?",
  "добрий день,?",
  "вітаю,?",
  "здравей,?",
  "здравейте,?",
  "казвам се",
  "поздрав,?",
  "поздрави,?",
  "срдачно,?",
  "с уважение,?",
  "всего доброго,?",
  "получатель:?",
  "получател:?",
  "отримувач:?",
  "адресат:?",
  "фамилия:?",
  "прізвище:?",
  "держатель карты:?",
  // Greek
  "με λένε",
  "ονομάζομαι",
  "όνομα:?",
  "αγαπητέ",
  "αγαπητή",
  "κύριε",
  "κυρία",
  // titles before a name (a closed class): Greek "κ." / "κα", Arabic "د." / "الحاج" / "السيد/", Persian "آقای",
  // Hebrew 'ד"ר' / 'עו"ד', Hindi "डॉ." / "श्रीमान"
  "(?<![\\p{L}\\p{M}.])κ\\.",
  "(?<![\\p{L}\\p{M}])κα\\.?",
  "με εκτίμηση,?",
  "φιλικά,?",
  "γεια σου,?",
  "γεια σας,?",
  "καλημέρα,?",
  "χαιρετισμούς,?",
  "παραλήπτης:?",
  "ονοματεπώνυμο:?",
  // Arabic
  "اسمي",
  "الاسم:?",
  "عزيزي",
  "عزيزتي",
  "السيد",
  "السيدة",
  "الأستاذ",
  "(?<![\\p{L}\\p{M}])د\\.",
  "الحاج",
  "الحاجة",
  "المرحوم",
  "المرحومة",
  "السيد/",
  "السيدة/",
  "آقای",
  "خانم",
  "جناب",
  "دکتر",
  "مهندس",
  "الدكتور",
  "مع تحياتي[،,]?",
  "مع خالص التحيات[،,]?",
  "مع التحية[،,]?",
  "تحياتي[،,]?",
  "مرحبا[،,]?",
  "أهلا[،,]?",
  "السلام عليكم[،,]?",
  "المستلم:?",
  "الأستاذة",
  "المهندس",
  "المهندسة",
  // Hebrew
  "שמי",
  "שם:",
  "לכבוד",
  "מר",
  "גברת",
  'ד"ר',
  'עו"ד',
  "בברכה,?",
  "שלום,?",
  "היי,?",
  "תודה,?",
  "הטלפון של",
  // Hindi
  "मेरा नाम",
  "नाम:?",
  "प्रिय",
  "श्री",
  "श्रीमती",
  "(?<![\\p{L}\\p{M}])डॉ\\.?",
  "श्रीमान",
  "सुश्री",
  "भवदीय,?",
  "नमस्ते,?",
  "धन्यवाद,?",
  // English and other Latin-script cues before a name in another script
  "dear",
  "hello",
  "hi",
  "hey",
  "regards,",
  "thanks,",
  "name:",
  "contact:",
  "contact person:",
  "from:",
  "from",
  "to:",
  "recipient:",
  "ship to:",
  "attn:?",
  "greetings from",
  "best wishes from",
  "mr\\.?",
  "mrs\\.?",
  "ms\\.?",
  "dr\\.?",
  // a relative or colleague named after "my", "our", "his", "her" ("on behalf of my father Κωνσταντίνος …")
  "(?:my|our|his|her|their|your) (?:father|mother|husband|wife|son|daughter|brother|sister|colleague|friend|manager|boss|partner|grandfather|grandmother|uncle|aunt|neighbou?r)",
];
const CUE_BEFORE = new RegExp(`(?:${CUES.join("|")})[\\s]*$`, "iu");
/** The cues of one word, bare ("שלום", "поздрав"): such a word starts no name itself. */
const CUE_WORDS = new Set(
  CUES.map((c) => {
    // the cue's bare word: "поздрав,?" -> "поздрав", "مع تحياتي[،,]?" stays two words, "mr\\.?" -> "mr"
    let w = (c.split("[")[0] as string).split("\\")[0] as string;
    while (w.endsWith("?") || w.endsWith(",") || w.endsWith(":")) w = w.slice(0, -1);
    return w.toLowerCase();
  }).filter((c) => !c.includes(" ")),
);

/** A Han or kana name after a cue or a label: "我叫刘洋", "联系人：陈静", "担当：高橋誠", "Hello 李明". */
const CJK_AFTER_CUE =
  /(?:我叫|我是|姓名[:：]\s*|联系人[:：]\s*|聯絡人[:：]\s*|收件人[:：]\s*|收货人[:：]?\s*|持卡人[:：]?\s*|负责人[:：]\s*|经办人[:：]\s*|客户[:：]\s*|担当[:：]\s*|担当の|氏名[:：]\s*|名前[:：]\s*|宛先[:：]\s*|(?:dear|hello|hi|regards,|name:|from:|to:)\s*)([\u3400-\u9fff]{2,4})(?=[^\u3400-\u9fff]|$)/giu;
/** A Han or kana name before an honorific or a self-introduction: "中村様", "佐藤健と申します", "王先生". */
const CJK_BEFORE = /(?<![\u3400-\u9fff])([\u3400-\u9fff]{2,4})(?=様|さん|さま|先生|女士|小姐|君|と申します|といいます)/gu;
/**
 * A Japanese name written family name, a blank, given name ("山本 裕子 様", "担当の佐藤 健太です",
 * "高橋 美咲 営業部"): before an honorific or the copula, after a label, or opening a line of a card.
 */
const CJK_SPACED = /(?<![\u3400-\u9fff])([\u3400-\u9fff]{1,2}[ \u3000][\u3400-\u9fff]{1,3})(?![\u3400-\u9fff])/gu;
const CJK_SPACED_AFTER = /^[ \u3000]?(?:様|さん|さま|先生|です|と申します)/u;
const CJK_SPACED_BEFORE = /(?:担当の|担当[:：]\s*|氏名[:：]\s*|名前[:：]\s*|宛先[:：]\s*|[（(])$/u;
/** A Han name opening a card's line, before a blank and a title or a number ("陈志强 销售经理 +86 …"). */
const CJK_LINE_TOP = /^([\u3400-\u9fff]{2,4})(?=[ \u3000]*\n|[ \u3000]+[^\s])/gmu;
/** A Korean name of three syllables before a blank and a job title ("박서준 과장"). */
const HANGUL_TITLE =
  /(?<![\uac00-\ud7af])([\uac00-\ud7af]{3})[ ](?=(?:과장|부장|차장|대리|사원|팀장|실장|이사|대표|상무|전무|주임|선임|책임|교수|박사|변호사)(?:[^\uac00-\ud7af]|$))/gu;
/** Korean: a name of three syllables before "님" or "씨", or after "이름은" before the copula. */
const HANGUL_HONORIFIC = /(?<![\uac00-\ud7af])([\uac00-\ud7af]{3})(?=님|씨)/gu;
const HANGUL_AFTER_CUE = /이름은\s+([\uac00-\ud7af]{2,4}?)(?=입니다|이에요|예요|이고|[\s.,]|$)/gu;
/**
 * Korean, where the first syllable must be a family name of the lists: a name of three syllables
 * glued to the copula ("김민지입니다", "I am Kim Minji"), or opening a card's line before an address
 * or a number ("박지훈 부산광역시 …").
 */
const HANGUL_COPULA = /(?<![\uac00-\ud7af])([\uac00-\ud7af]{3})(?=입니다|이에요|예요|이라고|라고)/gu;
const HANGUL_LINE_TOP = /^([\uac00-\ud7af]{3})(?=[ ]+[^\s])/gmu;

/**
 * A Han, kana or Hangul name after a label that names a person's role in a record (a closed class: a
 * label word ending in 人, 者, 主, 师/師 or 士, "氏名", "户名", "担任", "院長", "甲方"; in Korean one
 * ending in 인, 자, 원, 명 or 주, "본인", "배우자", "받는 분"): "报告人：邓磊", "契約者：鈴木 健太",
 * "貸主：松本 茂", "宛先 小林 さくら", "依頼人：ハシモト　ユウジ", "임대인: 강문호", "보호자: 오민석". After a colon any such
 * label; after a blank only the listed words ("喪主　田中 博之", "患者 鈴木健太", "원장 김태호").
 */
const CJK_ROLE_WORDS = String.raw`氏名|姓名|户名|戶名|名義|担任|主任|担当|院長|院长|社長|校長|校长|老板|客户|客戶|买家|買家|卖家|患者|宛先|お届け先|お客様|甲方|乙方|相手方|出租方|承租方|喪主|世帯主|弁護士|律师|律師|医师|醫師`;
const CJK_ROLE = new RegExp(
  String.raw`(?:(?:[\u3400-\u9fff\u3040-\u30ff]{0,6}(?:人|者|主|师|師|士)|${CJK_ROLE_WORDS})(?:[（(][^）)\n]{1,6}[）)])?[ \t\u3000]{0,3}[:：]|(?<![\u3400-\u9fff\u3040-\u30ff])(?:${CJK_ROLE_WORDS})(?=[ \u3000]))[ \t\u3000]{0,3}` +
    String.raw`([\u3400-\u9fff]{1,3}[ \u3000](?:[\u3400-\u9fff]{1,3}|[\u3041-\u3096]{2,4}(?![\u3041-\u3096]))|[\u3400-\u9fff]{2,4}|[\u30a1-\u30fa\u30fc]{2,8}(?:[・\u3000 ][\u30a1-\u30fa\u30fc]{2,8}){1,2})(?![\u3400-\u9fff\u30a1-\u30fa\u30fc])`,
  "gu",
);
/** The honorifics a Han name of CJK_ROLE may run into ("お届け先：李 明浩様"). */
const CJK_ROLE_HONORIFIC = /(?:様|殿|さん|先生|女士|小姐)$/u;
const HANGUL_ROLE_WORDS = String.raw`본인|배우자|자녀|고객|고객명|환자|환자명|원장|집주인|상주|받는 분|보내는 분|주최|담당`;
const HANGUL_ROLE = new RegExp(
  String.raw`(?:(?:[\uac00-\ud7af]{0,5}(?:인|자|원|명|주)|${HANGUL_ROLE_WORDS})[ \t]{0,3}[:：]|(?<![\uac00-\ud7af])(?:${HANGUL_ROLE_WORDS})(?= ))[ \t]{0,3}([\uac00-\ud7af]{3,4})(?![\uac00-\ud7af])`,
  "gu",
);

const STOPWORDS = slicedEngine("pii-script-stopwords", function* () {
  const lists = yield* readStopwordLists(["rus", "ukr", "bul", "ell", "ara", "fas", "heb", "hin", "mar"]);
  const all = new Set<string>();
  for (const list of Object.values(lists)) for (const w of list) all.add(w.toLowerCase());
  return all;
});

const HAN = /[\u3400-\u9fff]/;
const HANGUL = /[\uac00-\ud7af]/;
const KANA = /[\u30a1-\u30fa]/;

/** Arabic and Hebrew particles of a patronymic ("بن", "ابن", "בן"). */
const PATRONYMIC = new Set(["بن", "ابن", "بنت", "בן", "בת"]);
/** An Arabic family name of origin or tribe (nisba): the article, three letters or more, a final yā' ("الشمري", "الزهراني"). */
const NISBA = /^ال[\u0620-\u064a]{3,}ي$/u;
/** Honorifics after a name that are no part of it ("राजेश जी"). */
const HONORIFICS = new Set(["जी", "साहब", "साहिब", "बाबू"]);

/** An uncased script's family name closing a run: one of the lists, or a nisba. */
function listedLast(word: string): boolean {
  return isFamilyName(word) || NISBA.test(word);
}

function isCased(word: string): boolean {
  const c = word.charCodeAt(0);
  return (c >= 0x370 && c <= 0x3ff) || (c >= 0x1f00 && c <= 0x1fff) || (c >= 0x400 && c <= 0x4ff);
}

function isUpperFirst(word: string): boolean {
  const f = word.charAt(0);
  return f !== f.toLowerCase();
}

/** Spaced-script words after a cue: up to three, each the same script, no function word, capitalised where the script has case. */
function spacedNames(text: string, out: PiiEntity[]): void {
  const words = [...text.matchAll(SPACED_WORD)];
  const stop = STOPWORDS();
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as RegExpMatchArray;
    const start = w.index as number;
    const first = w[0];
    if (stop.has(first.toLowerCase())) continue;
    const cased = isCased(first);
    if (cased && !isUpperFirst(first)) continue;
    const cue = CUE_BEFORE.test(text.slice(Math.max(0, start - 30), start));
    // two capitalised words, the first a given name of the lists, need no cue
    let j = i + 1;
    let end = start + first.length;
    // (Arabic "عبد" and the word after it are one given name: "عبد الرحمن", "عبد الله"; a name may run to four words)
    let limit = first === "عبد" ? 4 : 3;
    while (j < words.length && j - i < limit) {
      const next = words[j] as RegExpMatchArray;
      const gap = text.slice(end, next.index as number);
      if (gap !== " ") break;
      // "عمر بن سعيد": a patronymic particle between given name and father's name
      const particle = !cased && PATRONYMIC.has(next[0]) && j + 1 < words.length && j - i < limit - 1;
      if (particle) {
        end = (next.index as number) + next[0].length;
        j++;
        continue;
      }
      if (stop.has(next[0].toLowerCase()) || HONORIFICS.has(next[0])) break;
      // (uncased: the second word, a listed one, the word after "عبد", or a nisba family name closing the run: "الشمري", "القحطاني")
      const prev = (words[j - 1] as RegExpMatchArray)[0];
      if (
        cased
          ? !isUpperFirst(next[0])
          : !(
              isGivenName(next[0]) ||
              isFamilyName(next[0]) ||
              j === i + 1 ||
              prev === "عبد" ||
              (j - i >= 2 && NISBA.test(next[0]))
            )
      )
        break;
      // an uncased word that starts with "and" (Arabic و, Hebrew ו) after the first word is the next clause
      if (!cased && j > i && /^[وו]/.test(next[0]) && !isGivenName(next[0]) && !isFamilyName(next[0])) break;
      end = (next.index as number) + next[0].length;
      if (next[0] === "عبد") limit = 4;
      j++;
    }
    // (the last word a family name of the lists counts too: "Κωνσταντίνος Παπαδόπουλος")
    const lastWord = j - i >= 2 ? (words[j - 1] as RegExpMatchArray)[0] : "";
    const known = isGivenName(first) || isFamilyName(first) || (cased && lastWord !== "" && isFamilyName(lastWord));
    // a greeting or cue is no name's start ("שלום אבי": the name is the word after it)
    if (CUE_WORDS.has(first.toLowerCase())) continue;
    // an uncased script's given name of the lists and one more word opening a line ("ليلى منصور مديرة …")
    const lineTop = (start === 0 || text[start - 1] === "\n") && !cased && j - i >= 2 && isGivenName(first);
    // a cased script's given name inside a sentence, after a lower-case word ("Звонила Марина, просила …")
    const inside = cased && j - i === 1 && isGivenName(first) && /\p{Ll}[ ]$/u.test(text.slice(Math.max(0, start - 2), start));
    if (lineTop || inside) {
      out.push(
        entity(
          "name",
          text,
          start,
          lineTop ? (words[i + 1]?.index as number) + (words[i + 1] as RegExpMatchArray)[0].length : end,
          0.75,
        ),
      );
      i = lineTop ? i + 1 : j - 1;
      continue;
    }
    // two words or more after a field's colon ("Участники: Гарипов Ильдар", "المؤجر: سالم بن راشد", "आवेदक: नेहा
    // श्रीवास्तव"): capitalised, not in capitals, where the script has case; where it has none, led by a listed name
    // and closed by one or by a nisba; a greeting is none ("العميل: السلام عليكم")
    const afterColon =
      !cue &&
      j - i >= 2 &&
      /[:：][ \t]*$/.test(text.slice(Math.max(0, start - 3), start)) &&
      end - start <= 60 &&
      !CUE_BEFORE.test(text.slice(start, end)) &&
      (cased
        ? (words.slice(i, j) as RegExpMatchArray[]).every((w) => w[0] !== w[0].toUpperCase())
        : (isGivenName(first) || isFamilyName(first)) && (isGivenName(lastWord) || listedLast(lastWord)));
    if (cue || afterColon || (cased && j - i >= 2 && known)) {
      out.push(entity("name", text, start, end, cue ? 0.85 : 0.8));
      i = j - 1;
    }
  }
}

/** CJK_ROLE's names: a Han name whose first one to three characters are a family name of the lists, or katakana words. */
function roleNames(text: string, out: PiiEntity[]): void {
  for (const m of text.matchAll(CJK_ROLE)) {
    let name = m[1] as string;
    const at = (m.index as number) + m[0].length - name.length;
    if (HAN.test(name.charAt(0))) {
      // a name glued to its honorific ("李 明浩様" reads as one run)
      name = name.replace(CJK_ROLE_HONORIFIC, "");
      const [family, given] = name.split(/[ \u3000]/) as [string, string?];
      // (a Chinese name before the next label's word, "王志刚 地点", is its first part alone)
      if (given !== undefined && !isFamilyName(family)) name = family;
      if (given === undefined || name === family) {
        if (name.length < 2 || !(isFamilyName(name.slice(0, 1)) || isFamilyName(name.slice(0, 2)))) continue;
      }
    }
    out.push(entity("name", text, at, at + name.length, 0.8));
  }
}

export function findScriptNames(text: string): PiiEntity[] {
  if (!hasNonAscii(text) || !NON_LATIN.test(text)) return [];
  const out: PiiEntity[] = [];
  spacedNames(text, out);
  for (const m of text.matchAll(CJK_AFTER_CUE)) {
    const name = m[1] as string;
    const at = (m.index as number) + m[0].length - name.length;
    out.push(entity("name", text, at, at + name.length, 0.85));
  }
  for (const m of text.matchAll(CJK_BEFORE)) {
    const name = m[1] as string;
    if (!isFamilyName(name.slice(0, 2)) && !isFamilyName(name.slice(0, 1))) continue;
    out.push(entity("name", text, m.index as number, (m.index as number) + name.length, 0.8));
  }
  const han = HAN.test(text);
  if (han)
    for (const m of text.matchAll(CJK_SPACED)) {
      const name = m[1] as string;
      const at = m.index as number;
      const family = name.split(/[ \u3000]/)[0] as string;
      if (!isFamilyName(family)) continue;
      const lineTop = at === 0 || text[at - 1] === "\n";
      if (
        !CJK_SPACED_AFTER.test(text.slice(at + name.length, at + name.length + 6)) &&
        !CJK_SPACED_BEFORE.test(text.slice(Math.max(0, at - 8), at)) &&
        !lineTop
      )
        continue;
      out.push(entity("name", text, at, at + name.length, 0.8));
    }
  if (han)
    for (const m of text.matchAll(CJK_LINE_TOP)) {
      const name = m[1] as string;
      if (!isFamilyName(name.slice(0, 1)) && !isFamilyName(name.slice(0, 2))) continue;
      // a card goes on with a phone number or an email (on the line or the next ones)
      if (!/@|\d{3}/.test(text.slice(m.index as number, (m.index as number) + 80))) continue;
      out.push(entity("name", text, m.index as number, (m.index as number) + name.length, 0.75));
    }
  if (han || KANA.test(text)) roleNames(text, out);
  if (HANGUL.test(text)) {
    for (const m of text.matchAll(HANGUL_ROLE)) {
      const name = m[1] as string;
      if (!isFamilyName(name.length === 4 ? name.slice(0, 2) : name.slice(0, 1))) continue;
      const at = (m.index as number) + m[0].length - name.length;
      out.push(entity("name", text, at, at + name.length, 0.8));
    }
    for (const re of [HANGUL_HONORIFIC, HANGUL_AFTER_CUE, HANGUL_TITLE]) {
      for (const m of text.matchAll(re)) {
        const name = m[1] as string;
        const at = (m.index as number) + m[0].indexOf(name);
        out.push(entity("name", text, at, at + name.length, 0.8));
      }
    }
    for (const re of [HANGUL_COPULA, HANGUL_LINE_TOP]) {
      for (const m of text.matchAll(re)) {
        const name = m[1] as string;
        if (!isFamilyName(name.slice(0, 1))) continue;
        // a card's line goes on with an address's or a phone's digits
        if (re === HANGUL_LINE_TOP && !/\d{3}/.test(text.slice(m.index as number, (m.index as number) + 80))) continue;
        out.push(entity("name", text, m.index as number, (m.index as number) + name.length, 0.75));
      }
    }
  }
  return out;
}
