/**
 * HTTP 5xx status codes as people write them, the one rule every reading of a message uses
 * (signals.ts: priority, the technical category, the writer's mood). A code counts when it is
 * written as a status: after a word for error or status in the engine's languages ("error 500",
 * "HTTP 502", "status code 503", "Fehler 500", "erreur: 504"), before one ("500 error", "502 Bad
 * Gateway", "503 Service Unavailable", "500-Fehler", "504 responses"), in the plural ("getting
 * 504s"), as the class ("5xx"), in brackets after a failure ("went wrong (500)"), or as what
 * something returns, shows or gives ("returns a 503 for every customer", "comes back 500"); the
 * status names alone count too ("internal server error", "bad gateway"). A number that is not a
 * status is not one: "room 502", "500 units", "$503", "flight 504", "shows 500 rows" (after a verb,
 * a code counts only before the sentence's end, a preposition or an error word).
 */

const CODE = "5(?:\\d\\d|xx)";
/** words for "error" or "status" that a code follows, in English, French, German, Spanish, Italian, Portuguese and Dutch */
const BEFORE =
  "(?:http(?:\\s+error)?|status(?:\\s+code)?|error(?:\\s+code)?|erreur|code d'erreur|fehler(?:code)?|errore|codice di errore|erro|código de error|código de erro|fout(?:melding|code)?|statuscode)";
/** what follows a code written as a status */
const AFTER =
  "(?:errors?|fehler|erreur|errore|erro|fout|responses?|internal(?:\\s+server)?(?:\\s+error)?|bad\\s+gateway|service\\s+(?:temporarily\\s+)?unavailable|gateway\\s+time-?out|status)";
/** verbs a status is the object of: "returns a 503", "getting a 502", "shows 500" */
const VERB =
  "(?:returns?|returning|returned|throws?|throwing|threw|gets?|getting|got|hits?|hitting|sees?|seeing|saw|shows?|showing|showed|gives?|giving|gave|answers?|answering|answered|receiv(?:e|es|ed|ing)|fails?\\s+with|failing\\s+with|failed\\s+with|comes?\\s+back(?:\\s+with)?|came\\s+back(?:\\s+with)?|respond(?:s|ed|ing)?\\s+with)";
/** what may follow a code that is a verb's object: the sentence's end, a preposition, a conjunction */
const OBJECT_END =
  "(?=\\s*(?:$|[.,;:!?)\\]\"'-]|(?:on|for|from|when|whenever|to|at|every|again|with|while|since|in|after|and|but|now|yesterday|today|tonight|earlier|this|last|all|everywhere|sometimes|occasionally|intermittently|constantly)(?![\\p{L}\\d])))";

export const SERVER_STATUS = new RegExp(
  [
    `(?<![\\p{L}\\d])${BEFORE}\\s?[:#]?\\s?["'(\\[]?${CODE}(?![\\p{L}\\d])`,
    `(?<![\\p{L}\\d$€£.,])${CODE}[\\s-]?${AFTER}(?![\\p{L}])`,
    `(?<![\\p{L}\\d$€£.,#])${CODE}'?s(?![\\p{L}\\d])`,
    `(?<![\\p{L}\\d])5xx(?![\\p{L}\\d])`,
    `(?<![\\p{L}])(?:wrong|failed|failure)[\\s:]{0,2}[(\\[]${CODE}[)\\]]`,
    `(?<![\\p{L}])${VERB}\\s+(?:(?:a|an|the)\\s+)?${CODE}${OBJECT_END}`,
    "(?<![\\p{L}])(?:internal server error|bad gateway|service (?:temporarily )?unavailable|gateway time-?out)(?![\\p{L}])",
  ].join("|"),
  "iu",
);

/**
 * Said to have passed: "once", "went away", "worked on retry", "after a refresh it worked",
 * "for a second", "everything works". A 5xx said so is a glitch, not an outage.
 */
const PASSED =
  /(?<![\p{L}])(?:once(?! again| more)|a single|just one|one (?:request|call|time)|for a (?:second|moment)|went away|(?:worked|works|fine|ok|okay) (?:on|after) (?:a |the )?(?:retry|refresh|reload|second try)|(?:retry|retrying|reloading|refreshing)(?: it)? (?:fixed|solved|helped)|after (?:a |one )?(?:refresh|reload|retry)|(?:tried|try) (?:it )?again|then it (?:\p{L}+ )?(?:normally|fine)|everything (?:else )?(?:works|is working|is fine))(?![\p{L}])/iu;

/** The first 5xx status the text reports, as written, and where; null when none. */
export function serverStatus(text: string): { text: string; index: number } | null {
  const m = SERVER_STATUS.exec(text);
  return m ? { text: m[0], index: m.index } : null;
}

/** A 5xx the text reports as ongoing (an outage): a status, not said to have gone away. */
export function outageStatus(text: string): { text: string; index: number } | null {
  const status = serverStatus(text);
  return status && !PASSED.test(text) ? status : null;
}
