/**
 * An address in a record's address field, as machines write it (issue 41, the sixth blind part's
 * kinds): the value of a JSON key, an XML element or a `key: value` / `key=value` pair whose key
 * says "address" in one of the engine's languages (`"address":"Rue Hamra, Bldg 22, 4th floor,
 * Beirut"`, `<direccion>Av. Providencia 1208, …</direccion>`, `"收货地址":"浙江省杭州市…"`), and a
 * vCard's ADR line (street;town;region;postcode). The key says what the value is; the value must
 * still hold a digit or two commas (a town alone is no address).
 */
import { keyedFields } from "./fields";
import { entity, type PiiEntity } from "./types";

const ADDRESS_KEY = String.raw`(?:[\p{L}_-]{0,16}(?:address|addr|adresse|adres|adresa|adressi|direccion|dirección|endereco|endereço|indirizzo|anschrift|osoite|cím|lakcím|адрес|地址|住所|주소)[\p{L}_-]{0,8})`;
/** JSON "key":"value", XML <key>value</key>, key: value / key=value to the line's or field's end */
const ADDRESS_FIELD = new RegExp(
  String.raw`"(${ADDRESS_KEY})"[ \t]{0,2}:[ \t]{0,2}"([^"\n]{4,160})"|<(${ADDRESS_KEY})>([^<\n]{4,160})</|(?<![\p{L}])(${ADDRESS_KEY})[ \t]{0,2}[=:][ \t]{0,2}(?!")([^\n|;"<]{4,160})`,
  "iuy",
);
/** the stems of ADDRESS_KEY: the field is tried only where one stands */
const ADDRESS_STEMS = /addr|adres|direcc|endere|indirizzo|anschrift|osoite|cím|адрес|地址|住所|주소/giu;
/** a vCard's address: ADR…:po-box;extended;street;town;region;postcode;country */
const VCARD_ADR = /^ADR[^:\n]{0,40}:[^;\n]{0,40};[^;\n]{0,40};([^;\n]{1,80};[^;\n]{0,60};[^;\n]{0,40};[^;\n]{0,20})/gm;

const NOT_POSTAL =
  /(?:^|[^a-z])(?:e-?mail|ip|mac|web|url|wallet|btc|eth|host|server|remote|local|bind|listen|adres[aá]t|adressat|addressee)(?:[^a-z]|$)/i;

function addressValue(value: string): boolean {
  return /\d/.test(value) || value.split(/[,，、]/).length >= 3;
}

export function findAddressFields(text: string): PiiEntity[] {
  const out: PiiEntity[] = [];
  // every form of ADDRESS_FIELD has a ":", a "=" or a "<" after or before its key, and so has a vCard's ADR line:
  // a text with none of them (most prose) has no field, and is not scanned for the stems (about 1.5 µs a KB)
  if (!text.includes(":") && !text.includes("=") && !text.includes("<")) return out;
  for (const { at, m } of keyedFields(text, ADDRESS_STEMS, ADDRESS_FIELD, 16, '"<')) {
    // not an email's, a machine's or a wallet's address (the key and the word before it: "ip addr:", "mac address:")
    const key = (m[1] ?? m[3] ?? m[5]) as string;
    if (NOT_POSTAL.test(text.slice(Math.max(0, at - 8), at + m[0].indexOf(key) + key.length))) continue;
    const raw = (m[2] ?? m[4] ?? m[6]) as string;
    const value = raw.trim().replace(/[.,;]$/, "");
    if (!addressValue(value)) continue;
    const from = at + m[0].lastIndexOf(raw) + (raw.length - raw.trimStart().length);
    // (a value to the line's end may run past the address: it yields to a name after it, "…, z. Hd. Frau Petra Lange")
    out.push(entity("address", text, from, from + value.length, m[6] === undefined ? 0.9 : 0.8));
  }
  if (text.includes("ADR")) {
    for (const m of text.matchAll(VCARD_ADR)) {
      let value = m[1] as string;
      while (value.endsWith(";")) value = value.slice(0, -1);
      if (!addressValue(value)) continue;
      const from = (m.index as number) + m[0].length - (m[1] as string).length;
      out.push(entity("address", text, from, from + value.length, 0.9));
    }
  }
  return out;
}
