/**
 * A message without its signature and contact data, for summaries: a summary says what the
 * message says and asks, and never repeats the sender's address, phone number or links (the
 * PII engine finds them, so they are found the same way redaction finds them).
 */
import { detectPii } from "../../local/pii";

/** A closing line ("Thanks,", "Best regards, Maria", "Cordialement") in any of the engine's seven languages. */
const SIGN_OFF =
  /^[ \t]*(?:thanks(?: again| so much| a lot)?|thank you(?: so much)?|many thanks|best(?: wishes)?|(?:best|kind|warm|warmest) regards|regards|cheers|sincerely|yours(?: truly| sincerely| faithfully)?|merci(?: d'avance| beaucoup)?|cordialement|bien à vous|(?:viele|liebe|beste) grüße|mit freundlichen grüßen|(?:un )?saludos?(?: cordiales)?|atentamente|cordiali saluti|saluti|distinti saluti|atenciosamente|obrigad[oa]|(?:met )?vriendelijke groet(?:en)?|groeten)[ \t]*(?:[,.!][ \t]*)?(?:\r?\n|$)/imu;

const URL = /\bhttps?:\/\/\S+|\bwww\.\S+/giu;

/** `text` up to its sign-off (when one follows some content) with emails, phone numbers and links removed. */
export function withoutContactData(text: string): string {
  const m = SIGN_OFF.exec(text);
  const body = m && m.index > 0 && text.slice(0, m.index).trim() ? text.slice(0, m.index) : text;
  const contacts = detectPii(body, { types: ["email", "phone_number"] });
  let out = "";
  let at = 0;
  for (const e of contacts) {
    out += body.slice(at, e.start);
    at = e.end;
  }
  out += body.slice(at);
  return (
    out
      .replace(URL, "")
      // the lookbehind starts each try at the first blank of a run: from every blank it is quadratic
      .replace(/(?<![ \t])[ \t]+([,.;:!?])/g, "$1")
      .replace(/[ \t]{2,}/g, " ")
  );
}
