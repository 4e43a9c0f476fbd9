/**
 * A message without its signature and contact data, for summaries: a summary says what the
 * message says and asks, and never repeats the sender's address, phone number or links (the
 * PII engine finds them, so they are found the same way redaction finds them).
 */
import { detectPii } from "../../offline-engine/pii";

/**
 * A closing ("Thanks,", "Best regards, Maria", "Cordialement") in any of the engine's seven
 * languages, on a line of its own or after the last sentence, with the writer's name.
 */
const SIGN_OFF =
  /(?:^|(?<=[.!?]))[ \t]*(?:thanks(?: again| so much| a lot| in advance)?|thank you(?: so much| in advance)?|many thanks|best(?: wishes)?|(?:best|kind|warm|warmest) regards|regards|cheers|sincerely|yours(?: truly| sincerely| faithfully)?|merci(?: d'avance| beaucoup)?|cordialement|bien à vous|(?:viele|liebe|beste) grüße|mit freundlichen grüßen|(?:un )?saludos?(?: cordiales)?|atentamente|cordiali saluti|saluti|distinti saluti|atenciosamente|obrigad[oa]|(?:met )?vriendelijke groet(?:en)?|groeten)[ \t]*(?:[,.!-][ \t]*(?:\p{Lu}[\p{L}'’.-]*(?:[ \t]+\p{Lu}[\p{L}'’.-]*){0,2}[ \t]*)?)?(?:\r?\n|$)/imu;

/** Header lines a pasted email starts with ("From: ...", "Subject: ..."). */
const HEADERS =
  /^(?:[ \t]*(?:from|to|cc|bcc|date|sent|subject|reply-to|de|von|an|betreff|objet|asunto|oggetto|assunto|onderwerp|van|aan)[ \t]*:[^\n]*(?:\r?\n|$))+/iu;
/** A greeting before the message ("Hi team,", "Hello,", "Dear Ms Patel,", "Bonjour,"). */
const GREETING =
  /^[ \t]*(?:(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings|bonjour|hallo|guten tag|hola|buongiorno|ciao|olá|bom dia|beste|geachte)\b[^,!\n]{0,40}[,!]|(?:hi|hello|hey)\b[^\n]{0,30}(?=\r?\n))[ \t]*/iu;

/**
 * What the writer wrote: `text` without the header lines of a pasted email, the greeting, and
 * the sign-off with everything after it (when some content comes before it). Politeness says
 * nothing about the writer's mood, nor about what the message says.
 */
export function messageBody(text: string): string {
  let body = text.replace(HEADERS, "");
  const m = SIGN_OFF.exec(body);
  if (m && m.index > 0 && body.slice(0, m.index).trim()) body = body.slice(0, m.index);
  const rest = body.trimStart().replace(GREETING, "");
  return rest.trim() ? rest : body;
}

const URL = /\bhttps?:\/\/\S+|\bwww\.\S+/giu;

/** The message body (messageBody) with emails, phone numbers and links removed. */
export function withoutContactData(text: string): string {
  const body = messageBody(text);
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
