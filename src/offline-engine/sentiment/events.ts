/**
 * Complaints and praise stated as facts: no word of the lexicon judges "I've been on hold for an
 * hour", "third time I'm asking", "the app keeps logging me out" or "support called back within
 * five minutes", yet each says how the writer fares. These cues name such events as classes (a
 * wait of hours or days, a request repeated, a failure that recurs, nobody answering, a fix the
 * same day) and give each a valence on VADER's scale; vader.ts adds it at the cue's first word,
 * flipped by a negation just before it ("wasn't on time"). Matched on a sentence's lower-cased
 * words joined by single spaces, edge punctuation stripped.
 */
import { tickCpuBudget } from "../budget";

const NUM =
  "(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|several|many|a few|half an|\\d+(?:\\.\\d+)?)";
const LONG = "(?:hours?|hrs?|days|weeks?|wks?|months?|years?)";
const SHORT = "(?:seconds?|secs?|minutes?|mins?)";
const ABOUT = "(?:over |almost |nearly |more than |about |around |only |just |under |less than )?";
const ORDINAL = "(?:second|third|fourth|fifth|sixth|seventh|2nd|3rd|4th|5th|6th|7th|\\d+th)";
const REQUESTED =
  "(?:asked|asking|called|calling|emailed|e-mailed|written|wrote|phoned|rang|contacted|chased|complained|messaged|reported|requested|tried)";

export interface EventCue {
  re: RegExp;
  value: number;
  /** a negation right before the cue turns it ("wasn't on time") */
  negatable: boolean;
}

/** a cue starts and ends at a word's edge */
const AT = "(?<![\\w'])(?:";
const TO = ")(?![\\w'])";

export const EVENT_CUES: readonly EventCue[] = [
  // a wait: "on hold for an hour", "waited 40 minutes", "still waiting", "waiting since 2 weeks"
  { re: new RegExp(`${AT}on hold${TO}`, "g"), value: -1.8, negatable: true },
  {
    re: new RegExp(`${AT}(?:waited|waiting|queued|queuing) (?:for |since )?${ABOUT}${NUM} (?:${SHORT}|${LONG}|day)${TO}`, "g"),
    value: -1.8,
    negatable: true,
  },
  {
    re: new RegExp(`${AT}still (?:waiting|chasing|no(?! (?:complaints?|issues?|problems?))|not|nothing)${TO}`, "g"),
    value: -1.5,
    negatable: false,
  },
  { re: new RegExp(`${AT}it(?:'s| has| is) been ${ABOUT}${NUM} ${LONG}${TO}`, "g"), value: -1.2, negatable: true },
  { re: new RegExp(`${AT}${NUM} ${LONG} later${TO}`, "g"), value: -1.0, negatable: true },
  // "delivery took four days" is a fact; "took more than two weeks" a grievance
  {
    re: new RegExp(`${AT}took (?:over|more than|almost|nearly) ${NUM} (?:hours?|hrs?|days|weeks?|months?)${TO}`, "g"),
    value: -1.5,
    negatable: true,
  },
  // a request repeated, a failure recurring: "third time I'm asking", "fourth email", "yet again"
  {
    re: new RegExp(
      `${AT}(?:the )?${ORDINAL} (?:time(?! lucky)|email|e-mail|call|letter|message|request|complaint|attempt|visit|reminder|week in a row|day in a row|month in a row)${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: false,
  },
  { re: new RegExp(`${AT}${REQUESTED}(?: [\\w']+){0,3} (?:twice|${NUM} times)${TO}`, "g"), value: -1.5, negatable: false },
  { re: new RegExp(`${AT}yet again|^again|same (?:problem|issue|question|error)${TO}`, "g"), value: -1.2, negatable: false },
  {
    re: new RegExp(
      `${AT}(?:keeps?|kept) (?:on )?(?!using|buying|coming|going|ordering|recommending|improving)[a-z]+ing(?! (?:better|stronger|well|great))${TO}`,
      "g",
    ),
    value: -1.3,
    negatable: false,
  },
  // nobody answering: "nobody picked up", "no one knew anything"
  {
    re: new RegExp(
      `${AT}(?:nobody|no one|noone|no-one) (?:[a-z]+ ){0,2}(?:picked up|came|knew|helped|cared|bothered|got back|showed up|turned up|explained|apologi[sz]ed)${TO}`,
      "g",
    ),
    value: -1.8,
    negatable: false,
  },
  {
    re: new RegExp(
      `${AT}without (?:any )?(?:replying|responding|answering|warning|notice|telling (?:me|us)|an? (?:reply|response|answer|apology|explanation)|explanation|doing anything)${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: false,
  },
  // what a customer finds wrong, said as a plain event (2026-12-06): a smell, a noise, damage or
  // dirt, food served wrong, a device dead, an item late, a message ignored, staff rude, a charge twice
  {
    re: new RegExp(
      `${AT}(?:smell(?:ed|s)? of|smelt of|smelled like|smells like|stank|stinks?|stinking|reek(?:s|ed|ing)?)${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}(?:rattl(?:ed|es|ing)|bang(?:ed|ing)|buzz(?:ed|es|ing)|squeak(?:ed|s|ing)|creak(?:ed|s|ing)|bark(?:ed|ing)|thump(?:ed|ing)|clank(?:ed|ing)|dripp(?:ed|ing)|drips)${TO}`,
      "g",
    ),
    value: -1.2,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}(?:(?:with|has|had|have|left) (?:a |an )?(?:new |big |huge |deep |long )?(?:dent|scratch|tear|crack|hole|stain|chip)s?|dented|scratched|torn|smashed|shattered|bent|stained|soaked(?: through)?|in pieces|came off|fell off|broke(?: off)?|(?:legs?|wheel|handle|zip|lid|screen|strap) (?:snapped|broke|came off|fell off|cracked|bent))${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}(?:(?:came|arrived|was|were|served) (?:stone |ice )?cold|(?:raw|undercooked|burnt) in the middle|undercooked|(?:found|was|were) (?:a |an )?(?:long |dead )?(?:hair|fly|bug|insect|cockroach|slug)s? in|food poisoning)${TO}`,
      "g",
    ),
    value: -1.8,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}(?:went (?:black|blank|silent|dead)|will not (?:turn on|start|charge|boot|open|close|connect)|won't (?:turn on|start|charge|boot|open|close|connect)|(?:drops?|dropped|cuts?) out|(?:half|some|most|two|three|d+) (?:of )?(?:the )?[a-z]+ (?:were |was )?(?:missing|broken)|(?:screws|parts|pieces|items) missing)${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: false,
  },
  {
    re: new RegExp(
      `${AT}(?:${NUM} (?:${SHORT}|${LONG}|day) (?:late|after (?:we|i|our|my|the) )|(?:arrived|came|showed up|turned up|was|were) (?:very |really )?late)${TO}`,
      "g",
    ),
    value: -1.3,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}(?:(?:did not|didn't|never|has not|hasn't|have not|haven't) (?:even )?(?:return|answer|acknowledge|respond to|reply to|read) (?:our|my|any|the)|to (?:even )?acknowledge|(?:a number|an? (?:email|address|line)) (?:that )?(?:nobody|no one) (?:answers|reads|checks)|nobody answers)${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: false,
  },
  {
    re: new RegExp(
      `${AT}(?:shrugged|rolled (?:his|her|their) eyes|hung up (?:on|when)|laughed at (?:me|us)|(?:shouted|yelled|swore) at|told (?:me|us) to (?:go|leave|call|come back)|spent (?:most|half|all) of (?:the|our|my) [a-z]+ on (?:his|her|their) phone|could do nothing|did nothing|threw (?:my|our|the) (?:parcel|package|box|bag|delivery))${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: false,
  },
  {
    re: new RegExp(
      `${AT}(?:charged|billed)(?: [a-z']+){0,3} (?:twice|two times|double)|(?:charged|billed) (?:me|us) (?:a fee|extra) for${TO}`,
      "g",
    ),
    value: -1.5,
    negatable: true,
  },
  // help beyond the job: "even folded our laundry", "stayed after closing", "before I noticed", "at no cost"
  {
    re: new RegExp(
      `${AT}even (?:fixed|cleaned|folded|checked|called|brought|carried|replaced|offered|gave|drove|walked|waited|remembered|sent)|stayed (?:late|after closing|behind|on the line)|before (?:i|we) (?:even )?(?:noticed|asked|mentioned)|without (?:me|us) (?:even )?(?:asking|having to ask)|(?:charged|cost) (?:me|us) nothing|at no (?:extra )?(?:cost|charge)|did not charge extra|didn't charge (?:me |us )?extra|upgraded (?:us|me)${TO}`,
      "g",
    ),
    value: 1.5,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}without (?:a |one |any )?(?:single )?(?:repair|problem|issue|fault|hiccup|glitch|breakdown)s?${TO}`,
      "g",
    ),
    value: 1.5,
    negatable: false,
  },
  // lasting: "still works after two years", "never had a single problem"
  {
    re: new RegExp(
      `${AT}still (?:works|working|lasts|runs|holds up|looks (?:new|like new)|like new|waterproof|going strong)${TO}`,
      "g",
    ),
    value: 1.2,
    negatable: false,
  },
  {
    re: new RegExp(`${AT}never had (?:a single|any|one) (?:issue|problem|fault|complaint)s?${TO}`, "g"),
    value: 1.5,
    negatable: false,
  },
  // done fast or early: "within five minutes", "the same day", "a day early", "ahead of schedule"
  { re: new RegExp(`${AT}(?:in|within|took) ${ABOUT}${NUM} ${SHORT}${TO}`, "g"), value: 1.2, negatable: true },
  {
    re: new RegExp(
      `${AT}within (?:the|an|one|a|24|48) (?:hours?|day)|(?:the )?same (?:day|week|morning|afternoon|evening|night)|the next (?:day|morning)|the day after (?:i|we) (?:placed|ordered|called|asked|reported)${TO}`,
      "g",
    ),
    value: 1.2,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}${NUM} days? early|ahead of (?:schedule|time)|earlier than (?:expected|promised|planned|estimated|the estimate)|on time${TO}`,
      "g",
    ),
    value: 1.2,
    negatable: true,
  },
  {
    re: new RegExp(
      `${AT}(?:on the |at the )?first (?:try|attempt|go)|in (?:one|a single) (?:call|phone call|visit|go|pass|lesson|session|morning|afternoon)${TO}`,
      "g",
    ),
    value: 1.0,
    negatable: true,
  },
];

/** Each cue found in `joined` (words joined by single spaces): its first word's index and value. */
export function eventCues(joined: string): { word: number; cue: EventCue }[] {
  const found: { word: number; cue: EventCue }[] = [];
  if (!joined) return found;
  for (const c of EVENT_CUES) {
    tickCpuBudget();
    c.re.lastIndex = 0;
    for (const m of joined.matchAll(c.re)) {
      tickCpuBudget();
      let word = 0;
      for (let k = 0; k < m.index; k++) if (joined.charCodeAt(k) === 32) word++;
      found.push({ word, cue: c });
    }
  }
  return found;
}
