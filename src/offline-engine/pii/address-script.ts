/**
 * Street addresses in other scripts and in Vietnamese, which the Latin patterns cannot read:
 * Chinese ("上海市徐汇区漕溪北路88号1204室", a six-digit postcode after it), Japanese ("東京都港区六本木6丁目10番1号",
 * "〒106-0032"), Korean ("서울특별시 강남구 테헤란로 152"), Arabic ("شارع الملك فهد 221، الرياض 12211"), Hebrew
 * ("רחוב הרצל 12, תל אביב"), Cyrillic ("ул. Ленина, д. 12, кв. 5"), Greek ("οδός Ερμού 25") and Vietnamese, the
 * house number before the street ("45 Lý Thường Kiệt, Hoàn Kiếm, Hà Nội"). Each pattern needs its
 * script's street or number word; a text without a letter of those scripts is not scanned.
 *
 * Every repetition is bounded, every pattern starts at a fixed word or a script's letter run.
 */
import { extended } from "./address-world";
import { hasNonAscii } from "./chars";
import { entity, type PiiEntity } from "./types";

/** letters of the scripts below (and Vietnamese letters outside Latin-1): a text without one is passed over */
const SCRIPT_LETTER =
  /[\u0370-\u03ff\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u1ea0-\u1ef9\u0111\u0110\u01a0\u01a1\u01af\u01b0]/;

const HAN_DIGIT = "[0-9０-９]";
/** "上海市徐汇区漕溪北路88号1204室", "北京市朝阳区建国路88号SOHO现代城2号楼1805", a postcode after it */
const CHINESE = new RegExp(
  `\\p{Script=Han}{1,20}?(?:路|街|道|巷|弄|胡同|大街|大道)${HAN_DIGIT}{1,5}(?:号|號)(?:[\\p{Script=Han}A-Za-z-]{0,12}?${HAN_DIGIT}{1,5}(?:室|号楼|號樓|楼|樓|层|層|单元|單元|栋|棟|座|号|號)?){0,3}(?:[ \\t]{0,4}\\r?\\n?[ \\t]{0,4}\\d{6}(?!\\d))?`,
  "gu",
);
/** "東京都港区六本木6丁目10番1号", "大阪市北区梅田1-2-3", with "〒530-0001" before it */
const JAPANESE =
  /(?:〒[ \t]?\d{3}-\d{4}[ \t]{0,4}\r?\n?[ \t]{0,4})?[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]{2,20}?(?:都|道|府|県|市|区|町|村)[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー]{0,10}?\d{1,4}(?:丁目|-)\d{1,4}(?:番地?|-)\d{1,4}(?:号)?/gu;
/** "서울특별시 강남구 테헤란로 152", "부산시 해운대구 우동 1408-5번지" */
const KOREAN =
  /(?:\p{Script=Hangul}{1,10}(?:시|도)[ \t]?)?(?:\p{Script=Hangul}{1,10}(?:구|군)[ \t]?)?\p{Script=Hangul}{1,10}\d{0,3}(?:로|길|동)[ \t]?\d{1,4}(?:-\d{1,4})?(?:번지|번길)?(?:[ \t,]{0,3}\d{1,4}(?:동|호|층)){0,3}/gu;
const AR_WORD = "\\p{Script=Arabic}{1,20}";
const AR_DIGITS = "[0-9٠-٩]";
/** "شارع الملك فهد 221، الرياض 12211", "شارع التحلية، مبنى 14\nجدة 23414" */
const ARABIC = new RegExp(
  `(?<!\\p{Script=Arabic})(?:شارع|طريق|ش\\.)[ \\t]+(?:${AR_WORD}[ \\t]+){0,3}${AR_WORD}(?:[ \\t]*[،,][ \\t]*(?:مبنى|عمارة|رقم|بناية|فيلا)?)?[ \\t]*${AR_DIGITS}{1,5}(?:(?:[ \\t]*[،,][ \\t]*|[ \\t]*\\r?\\n[ \\t]*)${AR_WORD}(?:[ \\t]${AR_WORD})?[ \\t]+${AR_DIGITS}{4,6}(?!${AR_DIGITS}))?`,
  "gu",
);
const HE_WORD = "\\p{Script=Hebrew}[\\p{Script=Hebrew}'״\"-]{0,19}";
/** "רחוב הרצל 12, תל אביב", "שד' רוטשילד 45" */
const HEBREW = new RegExp(
  `(?<!\\p{Script=Hebrew})(?:רחוב|רח'|שדרות|שד')[ \\t]+(?:${HE_WORD}[ \\t]+){0,2}${HE_WORD}[ \\t]+\\d{1,4}(?:[ \\t]*,[ \\t]*${HE_WORD}(?:[ \\t]${HE_WORD})?)?`,
  "gu",
);
const CY_WORD = "\\p{Script=Cyrillic}[\\p{Script=Cyrillic}-]{0,29}";
/** "ул. Ленина, д. 12, кв. 5", "вул. Хрещатик, 22, кв. 8", "пр. Мира 5" */
const CYRILLIC = new RegExp(
  `(?<!\\p{Script=Cyrillic})(?:ул\\.|улица|вул\\.|вулиця|пр\\.|просп\\.|проспект|пер\\.|переулок|бул\\.|бульвар|пл\\.|площадь|ш\\.|шоссе|наб\\.|набережная)[ \\t]*\\p{Lu}[\\p{Script=Cyrillic}-]{1,29}(?:[ \\t]+${CY_WORD}){0,2},?[ \\t]*(?:(?:д\\.|дом|буд\\.)[ \\t]*)?\\d{1,4}(?:[а-яА-Я](?!\\p{L}))?(?:(?:[ \\t]*,[ \\t]*|[ \\t]+)(?:кв\\.|квартира|оф\\.|офис|корп\\.|к\\.|стр\\.)[ \\t]*\\d{1,4}){0,3}`,
  "gu",
);
/** "οδός Ερμού 25", "Λεωφ. Κηφισίας 120" */
const GREEK =
  /(?<!\p{Script=Greek})(?:οδός|Οδός|οδ\.|Οδ\.|Λεωφόρος|λεωφόρος|Λεωφ\.|λεωφ\.|Πλατεία|πλατεία)[ \t]+\p{Lu}[\p{Script=Greek}]{1,29}(?:[ \t]+\p{Script=Greek}{1,30}){0,2}[ \t]+\d{1,4}/gu;
const VN_WORD = "\\p{Lu}[\\p{Ll}\\p{M}]{0,7}(?![\\p{L}\\p{M}])";
const VN_PLACE = `(?:(?:Phường|P\\.|Quận|Q\\.|Huyện|Xã|Thị xã|TP\\.|Tp\\.|Thành phố|Tỉnh)[ \\t]*)?(?:\\d{1,2}(?![\\p{L}\\p{N}])|${VN_WORD}(?:[ \\t]+${VN_WORD}){0,3})`;
/** "45 Lý Thường Kiệt, Hoàn Kiếm, Hà Nội", "12 Nguyễn Huệ, Quận 1" */
const VIETNAMESE = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?:Số|số)[ \\t]+)?\\d{1,4}[A-Z]?(?:/\\d{1,4})?[ \\t]+(?:(?:Đường|đường|Phố|phố|Ngõ|ngõ|Hẻm|hẻm)[ \\t]+)?${VN_WORD}(?:[ \\t]+${VN_WORD}){1,4}(?:,[ \\t]*${VN_PLACE}){1,3}`,
  "gu",
);
/** letters only Vietnamese writes (with a hook, a horn, a dot below, "đ") */
const VN_LETTER = /[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]/i;
/** what makes such a run an address: a district word, or a city */
const VN_PLACE_WORD =
  /Phường|Quận|Huyện|Xã|TP\.|Tp\.|Thành phố|Tỉnh|Hà Nội|Hồ Chí Minh|Đà Nẵng|Hải Phòng|Cần Thơ|Huế|Nha Trang|Biên Hòa|Vũng Tàu/;

export function findScriptAddresses(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  if (!hasNonAscii(text) || !SCRIPT_LETTER.test(text)) return out;
  const add = (re: RegExp, score: number, extend: boolean, check?: (s: string) => boolean) => {
    for (const m of text.matchAll(re)) {
      if (check && !check(m[0])) continue;
      const end = m.index + m[0].length;
      out.push(extend ? extended(text, m.index, end, score) : entity("address", text, m.index, end, score));
    }
  };
  if (/[\u3400-\u9fff]/.test(text)) {
    add(CHINESE, 0.9, false);
    add(JAPANESE, 0.9, false);
  }
  if (/[\uac00-\ud7af]/.test(text)) add(KOREAN, 0.88, false, (s) => /\d/.test(s) && /(?:시|도|구|군)[ \t]/.test(s));
  if (/[\u0600-\u06ff]/.test(text)) add(ARABIC, 0.9, false);
  if (/[\u0590-\u05ff]/.test(text)) add(HEBREW, 0.9, false);
  if (/[\u0400-\u04ff]/.test(text)) add(CYRILLIC, 0.9, true);
  if (/[\u0370-\u03ff]/.test(text)) add(GREEK, 0.9, true);
  if (VN_LETTER.test(text)) add(VIETNAMESE, 0.9, true, (s) => VN_LETTER.test(s) && VN_PLACE_WORD.test(s));
  return out;
}
