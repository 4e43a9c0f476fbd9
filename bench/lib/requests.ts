/**
 * The bench's requests, defined once for every bench script.
 */

/**
 * ~`size` characters of text with PII (names, emails, phones, a card, an address, an IP): the load
 * bench's 1 KB prompt at 1024 (scenarios `compat-1k`, `guarded`, `offline`), grown the same way
 * for larger sizes.
 */
export function piiPrompt(size: number): string {
  const parts = [
    "Hello team, please contact Maria Keller at maria.keller@example.com or +1 (415) 555-0134 about the renewal.",
    "Her billing address is 221B Baker Street, London NW1 6XE, and the card on file ends 4111 1111 1111 1111.",
    "The customer portal login for the account is under the same email; the backup contact is John Smith, 020 7946 0958.",
    "Our shipping partner confirmed the parcel for order 88213 was delivered on 12 March to the reception desk.",
    "If anything is unclear, reply to this thread or write to support@northwind.example and mention ticket 55102.",
    "IP of the last login was 192.168.14.27; the session was ended by the user after the password reset.",
    "Thanks again for your patience while we sorted out the invoice discrepancy from the previous quarter.",
    "Best regards, the Northwind accounts team.",
  ];
  let t = parts.join(" ");
  while (t.length < size) t += ` ${parts[t.length % parts.length]}`;
  return t.slice(0, size);
}
