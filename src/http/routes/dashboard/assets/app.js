// Progressive enhancement for the dashboard's server-rendered pages: every page works without
// it except the playground and the live gateway state.

// "1 failure", "3 failures": a count and its noun, as html.ts `counted` writes it on the server
const counted = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function sameOriginJson(method, url, body) {
  return fetch(url, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then((r) => r.json().then((j) => ({ status: r.status, json: j })));
}

// Revoke (and any other form with data-confirm) asks first
document.addEventListener("submit", (e) => {
  const form = e.target;
  const question = form.getAttribute?.("data-confirm");
  if (question && !window.confirm(question)) e.preventDefault();
});

// copy buttons
document.addEventListener("click", (e) => {
  const btn = e.target.closest?.("[data-copy]");
  if (!btn) return;
  const el = document.getElementById(btn.getAttribute("data-copy"));
  if (!el) return;
  const done = () => {
    btn.textContent = "Copied";
    setTimeout(() => (btn.textContent = "Copy"), 2000);
  };
  if (navigator.clipboard) navigator.clipboard.writeText(el.textContent).then(done, () => selectText(el));
  else selectText(el);
});
function selectText(el) {
  const range = document.createRange();
  range.selectNodeContents(el);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}

// sortable, filterable tables
for (const table of document.querySelectorAll("table.sortable")) {
  table.addEventListener("click", (e) => {
    const btn = e.target.closest("button[data-sort]");
    if (!btn) return;
    const col = Number(btn.getAttribute("data-sort"));
    const th = btn.closest("th");
    const dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    for (const other of table.querySelectorAll("th[aria-sort]")) other.setAttribute("aria-sort", "none");
    th.setAttribute("aria-sort", dir);
    const body = table.tBodies[0];
    const cell = (tr) => {
      const td = tr.cells[col];
      return td.hasAttribute("data-value") ? td.getAttribute("data-value") : td.textContent.trim().toLowerCase();
    };
    const rows = [...body.rows].sort((a, b) => (cell(a) < cell(b) ? -1 : cell(a) > cell(b) ? 1 : 0));
    if (dir === "descending") rows.reverse();
    for (const r of rows) body.appendChild(r);
  });
}
for (const input of document.querySelectorAll("input[data-filter]")) {
  const table = document.getElementById(input.getAttribute("data-filter"));
  input.addEventListener("input", () => {
    const q = input.value.trim().toLowerCase();
    // a cell with data-text (one holding a form) is matched on that text, not on its form's labels
    const text = (tr) => [...tr.cells].map((td) => td.getAttribute("data-text") ?? td.textContent).join(" ");
    for (const tr of table.tBodies[0].rows) tr.hidden = q !== "" && !text(tr).toLowerCase().includes(q);
  });
}

// create a key without leaving the page: the plaintext lives in this page's DOM only
const createForm = document.getElementById("create-key");
if (createForm) {
  createForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const label = createForm.elements.label.value.trim();
    if (!label) return;
    sameOriginJson("POST", "/dashboard/api/keys", { label }).then(({ status, json }) => {
      const box = document.getElementById("new-key");
      box.hidden = false;
      box.replaceChildren();
      if (status !== 201) {
        const p = document.createElement("p");
        p.textContent = json.message || "The key could not be created.";
        p.setAttribute("role", "alert");
        box.appendChild(p);
        return;
      }
      const k = json.data.result;
      const p = document.createElement("p");
      p.textContent = `Your new key “${k.label}”. Copy it now: it is shown only this once.`;
      const row = document.createElement("p");
      row.className = "row";
      const code = document.createElement("code");
      code.id = "new-key-value";
      code.textContent = k.key;
      const copy = document.createElement("button");
      copy.type = "button";
      copy.setAttribute("data-copy", "new-key-value");
      copy.textContent = "Copy";
      row.append(code, copy);
      box.append(p, row);
      createForm.reset();
      refreshKeys();
    });
  });
}
function refreshKeys() {
  // the table, re-rendered by the server without the secret
  fetch("/dashboard/keys", { credentials: "same-origin" })
    .then((r) => r.text())
    .then((text) => {
      const doc = new DOMParser().parseFromString(text, "text/html");
      const fresh = doc.getElementById("keys-table");
      const cur = document.getElementById("keys-table");
      if (fresh && cur) cur.tBodies[0].replaceWith(fresh.tBodies[0]);
      if (!doc.getElementById("no-keys")) document.getElementById("no-keys")?.remove();
    });
}

// a table box that scrolls sideways (a narrow window) says so: focusable, so the arrow keys scroll
// it, named by its caption, and marked for the stylesheet's "scroll sideways" hint
function markScrollers() {
  for (const box of document.querySelectorAll(".scroll")) {
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls === box.hasAttribute("data-scrolls")) continue;
    if (scrolls) {
      box.setAttribute("data-scrolls", "");
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", box.querySelector("caption")?.textContent || "Table");
    } else for (const a of ["data-scrolls", "tabindex", "role", "aria-label"]) box.removeAttribute(a);
  }
}
markScrollers();
window.addEventListener("resize", markScrollers);

// a table of the operator's gateway state: caption, column heads, rows of cell texts
const stateTable = (el, caption, heads, rows) => {
  const wrap = el("div");
  wrap.className = "scroll";
  const table = el("table");
  table.append(el("caption", caption), el("thead"));
  const head = el("tr");
  for (const h of heads) {
    const th = el("th", h);
    th.scope = "col";
    head.append(th);
  }
  table.tHead.append(head);
  const body = el("tbody");
  for (const r of rows) {
    const tr = el("tr");
    for (const v of r) tr.append(el("td", String(v)));
    body.append(tr);
  }
  table.append(body);
  wrap.append(table);
  return wrap;
};

// the operator's live gateway state
const stateBox = document.getElementById("gateway-state");
if (stateBox) {
  const render = () =>
    sameOriginJson("GET", stateBox.getAttribute("data-src")).then(({ json }) => {
      const s = json.data?.result;
      if (!s) return;
      const rate = s.cache.hit_rate === null ? "no lookups yet" : `${Math.round(s.cache.hit_rate * 1000) / 10} %`;
      const el = (tag, text) => {
        const x = document.createElement(tag);
        if (text !== undefined) x.textContent = text;
        return x;
      };
      const figures = el("div");
      figures.className = "figures";
      for (const [name, value] of [
        ["API calls per minute", s.requests_per_minute],
        ["Errors (5xx) per minute", s.errors_per_minute],
        ["Cache hit rate", rate],
        ["API calls since start", s.requests_total],
      ]) {
        const f = el("div");
        f.className = "figure";
        const n = el("span", name);
        n.className = "name";
        const v = el("span", String(value));
        v.className = "value";
        f.append(n, v);
        figures.append(f);
      }
      const wrap = stateTable(
        el,
        `Providers (breaker opens after ${counted(s.breaker.failure_threshold, "failure")}, cool-down ${s.breaker.cooldown_ms / 1000} s)`,
        ["Provider", "Type", "Breaker", "Consecutive failures"],
        s.providers.map((p) => [
          p.name,
          p.type,
          p.breaker === "closed" ? "closed (healthy)" : `${p.breaker} (cooling down)`,
          p.consecutive_failures,
        ]),
      );
      const groups = (s.groups || []).map((g) =>
        stateTable(
          el,
          `Model group ${g.name}: its deployments`,
          ["Deployment", "In flight", "Calls in 60 s", "Tokens in 60 s", "Cool-down", "Latency (TTFB)", "Calls from this node"],
          g.deployments.map((d) => [
            d.name,
            d.in_flight,
            d.rpm_limit === null ? d.rpm_used : `${d.rpm_used} of ${d.rpm_limit}`,
            d.tpm_limit === null ? d.tpm_used : `${d.tpm_used} of ${d.tpm_limit}`,
            d.cooling_s > 0 ? `cooling down, ${d.cooling_s} s left` : "no",
            d.latency_ms === null ? "no answer yet" : `${d.latency_ms} ms`,
            d.calls,
          ]),
        ),
      );
      stateBox.replaceChildren(figures, wrap, ...groups);
      markScrollers();
    });
  render();
  setInterval(render, 10000);
}

// the playground: a form built from the function's request schema
const pg = document.getElementById("playground");
if (pg) {
  // picking another function loads its form at once (the Choose button stays for pages without
  // scripts): Run never runs, and charges, a function other than the one the list shows
  const pick = document.getElementById("fn");
  pick?.addEventListener("change", () => {
    if (pick.value !== pg.dataset.fn) pick.form.submit();
  });
  const { schema, example } = JSON.parse(document.getElementById("fn-schema").textContent);
  const fields = document.getElementById("fields");
  const props = schema?.properties || {};
  const required = new Set(schema?.required || []);
  const inputs = [];
  const ex = example || {};
  for (const [name, s] of Object.entries(props)) {
    const id = `f-${name}`;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = name + (required.has(name) ? "" : " (optional)");
    let input;
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    const en = s.enum || (s.anyOf?.every((a) => a.const !== undefined) ? s.anyOf.map((a) => a.const) : null);
    if (en) {
      input = document.createElement("select");
      if (!required.has(name)) input.append(new Option("", ""));
      for (const v of en) input.append(new Option(String(v), String(v)));
      input.dataset.kind = "enum";
    } else if (type === "boolean") {
      input = document.createElement("select");
      input.append(new Option("", ""), new Option("true", "true"), new Option("false", "false"));
      input.dataset.kind = "boolean";
    } else if (type === "integer" || type === "number") {
      input = document.createElement("input");
      input.type = "number";
      input.step = type === "integer" ? "1" : "any";
      input.dataset.kind = "number";
    } else if (type === "string") {
      input = document.createElement(s.maxLength && s.maxLength <= 200 ? "input" : "textarea");
      input.dataset.kind = "string";
    } else {
      input = document.createElement("textarea");
      input.dataset.kind = "json";
    }
    input.id = id;
    input.name = name;
    if (s.description) input.title = s.description;
    if (ex[name] !== undefined)
      input.value = input.dataset.kind === "json" ? JSON.stringify(ex[name], null, 2) : String(ex[name]);
    fields.append(label, input);
    inputs.push(input);
  }
  const body = () => {
    const out = {};
    for (const i of inputs) {
      if (i.value === "") continue;
      const k = i.dataset.kind;
      try {
        out[i.name] =
          k === "number" ? Number(i.value) : k === "boolean" ? i.value === "true" : k === "json" ? JSON.parse(i.value) : i.value;
      } catch {
        out[i.name] = i.value;
      }
    }
    return out;
  };
  const curl = document.getElementById("curl");
  // a field the path carries (a chatbot's id) goes into the curl's path, not its body
  const inPath = (pg.dataset.inPath || "").split(" ").filter(Boolean);
  const showCurl = () => {
    const b = body();
    const path = pg.dataset.path.replace(/:(\w+)/g, (m, n) => (b[n] === undefined ? m : encodeURIComponent(String(b[n]))));
    for (const n of inPath) delete b[n];
    const json = JSON.stringify(b).replace(/'/g, "'\\''");
    curl.textContent = `curl -s ${pg.dataset.origin}${path} \\\n  -H 'x-api-key: YOUR_API_KEY' \\\n  -H 'content-type: application/json' \\\n  -d '${json}'`;
  };
  pg.addEventListener("input", showCurl);
  showCurl();
  pg.addEventListener("submit", (e) => {
    e.preventDefault();
    if (pick && pick.value !== pg.dataset.fn) return pick.form.submit();
    const out = document.getElementById("envelope");
    out.textContent = "Running…";
    sameOriginJson("POST", `/dashboard/api/playground/${encodeURIComponent(pg.dataset.fn)}`, body()).then(
      ({ json }) => (out.textContent = JSON.stringify(json, null, 2)),
      (err) => (out.textContent = String(err)),
    );
  });
}
