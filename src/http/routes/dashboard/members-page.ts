/** The Members page (docs/teams.md) and the page an invitation's link opens: server-rendered HTML. */
import { MAX_NAME } from "../../../auth/attributes";
import { MIN_PASSWORD } from "../../../auth/passwords";
import { type Member, ROLES, type Role } from "../../../dashboard/members";
import { breakableEmail, counted, type Html, html } from "./html";
import { chosen, dataTable, fieldValue, focusOn, type Refill } from "./pages";

const roleSelect = (id: string, selected: Role, label: string) =>
  html`<select id="${id}" name="role" aria-label="${label}">${ROLES.map(
    (r) => html`<option value="${r}"${r === selected ? " selected" : ""}>${r}</option>`,
  )}</select>`;

/** Owners' controls in a member's row: its role and Remove. */
const manage = (m: Member, me: string) =>
  html`<form method="post" action="/dashboard/members/${m.id}/role" class="row">${roleSelect(`role-${m.id}`, m.role, `Role of ${m.email}`)}<button type="submit">Change role</button></form>
<form method="post" action="/dashboard/members/${m.id}/remove" data-confirm="Remove ${m.email} from the account? Their sessions end at once."><button type="submit" class="danger" aria-label="Remove ${m.email}">${m.id === me ? "Leave" : "Remove"}</button></form>`;

/** The account's members; an owner also invites, changes roles and removes. */
export function membersPage(
  members: Member[],
  o: {
    canManage: boolean;
    me: string;
    invited?: { email: string; role: Role; url: string; expires_at: string } | null;
    refill?: Refill | null;
    /** the account requires single sign-on (`sso_required`): no invitation, its members come from the provider */
    ssoOnly?: boolean;
  },
): Html {
  const a = "/dashboard/members";
  const role = chosen(o.refill, a, "role", "developer");
  const invited = o.invited
    ? html`<div class="card" role="status" id="invitation"><p>Send this link to ${o.invited.email} (role ${o.invited.role}). It is shown only now, and works once until ${o.invited.expires_at}.</p>
<p class="row"><code id="invite-url">${o.invited.url}</code><button type="button" data-copy="invite-url">Copy</button></p></div>`
    : "";
  const inviteForm = o.ssoOnly
    ? html`<p class="hint">This account requires single sign-on: it takes no invitation; its members are made at their first sign-in by the identity provider's groups.</p>`
    : o.canManage
      ? html`<form method="post" action="/dashboard/members" class="card narrow" aria-label="Invite a member"><h2>Invite a member</h2>
<label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required${fieldValue(o.refill, a, "email")}>
<label for="invite-role">Role</label><select id="invite-role" name="role">${ROLES.map((r) => html`<option value="${r}"${r === role ? " selected" : ""}>${r}</option>`)}</select>
<button type="submit">Invite</button></form>`
      : html`<p class="hint">Only the account's owners invite members and change roles.</p>`;
  return html`${invited}${dataTable({
    caption: counted(members.length, "member"),
    id: "members",
    rows: members,
    columns: [
      { head: "Email", cell: (m) => breakableEmail(m.email) },
      { head: "Name", cell: (m) => m.name ?? "" },
      { head: "Role", cell: (m) => m.role },
      { head: "Since", cell: (m) => new Date(m.createdAt).toISOString().slice(0, 10), cls: "nw" },
      ...(o.canManage ? [{ head: "Manage", cell: (m: Member) => manage(m, o.me) }] : []),
    ],
  })}
${inviteForm}
<p class="hint">Owners manage members; admins keys and policies; developers their own keys, the playground and the request log; viewers read.</p>`;
}

/** The page of an invitation's link: who is invited, and the form to join. */
export function joinPage(invitation: { email: string; role: Role }, action: string, r?: Refill | null): Html {
  return html`<p>You are invited as <strong>${invitation.role}</strong> with the email <strong>${invitation.email}</strong>.</p>
<form method="post" action="${action}" class="card narrow">
<label for="name">Name</label><input id="name" name="name" autocomplete="name" maxlength="${MAX_NAME}"${fieldValue(r, action, "name")}>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD}" required${focusOn(r, action, "password")}>
<button type="submit">Join</button></form>`;
}
