// The Octopus console: a page per thing a person looks after, each read and
// changed through the API with the key they signed in with. Text from the
// server is only ever set as text (never as HTML), and the key stays in this
// tab's session storage.

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");
const status = document.getElementById("status");

// ---------------------------------------------------------------- session

const SESSION = "octopus-console";

/** `{key, admin, tenant: {id, name, key}?, minted: {tenantId: key}?}`: the
 * key signed in with; with the admin key, the tenant being looked at and the
 * keys minted for the tenants opened in this tab. */
function session() {
  try {
    return JSON.parse(sessionStorage.getItem(SESSION)) ?? null;
  } catch {
    return null;
  }
}

function saveSession(value) {
  if (value) sessionStorage.setItem(SESSION, JSON.stringify(value));
  else sessionStorage.removeItem(SESSION);
}

/** The key tenant data is read with: the tenant's own, or the one minted for
 * the tenant the admin chose. */
function tenantKey() {
  const s = session();
  return s?.admin ? s.tenant?.key : s?.key;
}

// ---------------------------------------------------------------- the API

class ApiError extends Error {
  constructor(status, code, message, field) {
    super(`${code}: ${message}${field ? ` (${field})` : ""}`);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, { query, body, key = tenantKey(), raw = false } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value));
  }
  const headers = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) {
    let detail = {};
    try {
      detail = (await response.json()).error ?? {};
    } catch {
      // Not an error body: the status says enough.
    }
    throw new ApiError(response.status, detail.code ?? `http_${response.status}`, detail.message ?? response.statusText, detail.field);
  }
  if (raw) return response.text();
  return response.status === 204 ? null : response.json();
}

const api = {
  get: (path, query, options) => call("GET", path, { query, ...options }),
  post: (path, body, options) => call("POST", path, { body, ...options }),
  patch: (path, body) => call("PATCH", path, { body }),
  delete: (path, query) => call("DELETE", path, { query }),
  items: async (path, query) => (await call("GET", path, { query })).items,
};

const enc = encodeURIComponent;

// ---------------------------------------------------------------- the DOM

/** An element: `h("a", {href: "#/"}, "text", child)`. Children are text or nodes. */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const link = (href, text, attributes = {}) => h("a", { href, ...attributes }, text);
const when = (at) => (at ? new Date(at).toLocaleString() : "—");
const score = (value) => (value === undefined || value === null ? "—" : Number(value).toFixed(3));

function table(headings, rows, { optional = [] } = {}) {
  const cls = (i) => (optional.includes(i) ? "optional" : undefined);
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, headings.map((text, i) => h("th", { scope: "col", class: cls(i) }, text)))),
      h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell, i) => h("td", { class: cls(i) }, cell))))),
    ),
  );
}

function empty(text) {
  return h("p", { class: "muted" }, text);
}

function say(text) {
  status.textContent = text;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => (status.textContent = ""), 4000);
}

/** A button that runs `action`, showing its failure beside the page rather than losing it. */
function button(text, action, attributes = {}) {
  return h("button", {
    type: "button",
    ...attributes,
    onclick: async (event) => {
      const target = event.currentTarget;
      target.disabled = true;
      try {
        await action(event);
      } catch (error) {
        say(error.message);
        report(error, target.closest("section") ?? main);
      } finally {
        target.disabled = false;
      }
    },
  }, text);
}

function report(error, where) {
  const shown = h("p", { class: "error", role: "alert", dataset: { code: error.code ?? "" } }, error.message);
  where.querySelector(":scope > .error")?.remove();
  where.append(shown);
}

/** A form whose submit runs `action` with its fields, by name. */
function form(fields, submitText, action, attributes = {}) {
  const element = h("form", attributes, fields, h("div", { class: "row" }, h("button", { type: "submit" }, submitText)));
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    const submit = element.querySelector("button[type=submit]");
    submit.disabled = true;
    try {
      await action(Object.fromEntries(new FormData(element)), element);
    } catch (error) {
      report(error, element);
    } finally {
      submit.disabled = false;
    }
  });
  return element;
}

const field = (labelText, control) => h("label", {}, labelText, control);

// ---------------------------------------------------------------- pages

const routes = [
  [/^#?\/?$/, home],
  [/^#\/sign-in$/, signIn],
  [/^#\/tenants$/, tenants],
  [/^#\/metrics$/, metrics],
  [/^#\/agents$/, agents],
  [/^#\/agents\/([^/]+)$/, agent],
  [/^#\/agents\/([^/]+)\/users$/, users],
  [/^#\/agents\/([^/]+)\/users\/([^/]+)$/, user],
  [/^#\/agents\/([^/]+)\/knowledge$/, knowledge],
  [/^#\/agents\/([^/]+)\/context$/, context],
  [/^#\/conversations\/([^/]+)$/, conversation],
  [/^#\/episodes\/([^/]+)$/, episode],
  [/^#\/procedures$/, procedures],
  [/^#\/procedures\/([^/]+)$/, procedure],
  [/^#\/export$/, exportDump],
  [/^#\/webhooks$/, webhooks],
  [/^#\/webhooks\/([^/]+)$/, webhook],
];

async function render() {
  const s = session();
  drawHeader(s);
  const hash = location.hash || "#/";
  if (!s && hash !== "#/sign-in") {
    location.replace("#/sign-in");
    return;
  }
  const [pattern, page] = routes.find(([pattern]) => pattern.test(hash)) ?? [null, notFound];
  const params = pattern ? hash.match(pattern).slice(1).map(decodeURIComponent) : [];
  const needsTenant = ![home, signIn, tenants, metrics, notFound].includes(page);
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  let content;
  try {
    if (needsTenant && !tenantKey()) {
      location.replace("#/tenants");
      return;
    }
    content = await page(...params);
  } catch (error) {
    content = h("div", {}, h("h1", { tabindex: "-1" }, "Could not load this page"), h("p", {
      class: "error",
      role: "alert",
      dataset: { code: error.code ?? "" },
    }, error.message));
  }
  if (!content) return;
  main.replaceChildren(content);
  // When the page was on screen, for scripts/bench-console.py.
  performance.mark("octopus:rendered");
  document.title = `${main.querySelector("h1")?.textContent ?? "Octopus"} · Octopus console`;
  // A page change is announced by moving to its heading.
  const heading = main.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: false });
  }
}

function drawHeader(s) {
  const links = [];
  if (s?.admin) links.push(link("#/tenants", "Tenants"), link("#/metrics", "Metrics"));
  if (tenantKey()) links.push(link("#/agents", "Agents"), link("#/procedures", "Procedures"), link("#/webhooks", "Webhooks"), link("#/export", "Export"));
  nav.replaceChildren(...links);
  who.replaceChildren();
  if (!s) return;
  const label = s.admin ? `admin${s.tenant ? ` · tenant ${s.tenant.name}` : ""}` : `tenant key ${s.key.slice(0, 12)}…`;
  who.append(label, " ", h("button", {
    type: "button",
    class: "secondary",
    onclick: () => {
      saveSession(null);
      location.hash = "#/sign-in";
    },
  }, "Sign out"));
}

async function home() {
  const s = session();
  location.replace(s?.admin && !s.tenant ? "#/tenants" : "#/agents");
  return null;
}

function notFound() {
  return h("div", {}, h("h1", {}, "No such page"), link("#/", "Back to the start"));
}

function signIn() {
  return h(
    "div",
    {},
    h("h1", {}, "Sign in"),
    h("p", {}, "With a tenant's API key, to see and look after its agents' memory; or with the admin key, to choose a tenant and see the server's metrics."),
    form(
      [field("API key", h("input", { name: "key", type: "password", autocomplete: "off", required: true, autofocus: true }))],
      "Sign in",
      async ({ key }) => {
        key = key.trim();
        // The admin key lists tenants; a tenant's key lists its agents.
        try {
          await call("GET", "/v1/tenants", { key, query: { limit: 1 } });
          saveSession({ key, admin: true });
        } catch (error) {
          if (error.code !== "admin_only") throw error;
          await call("GET", "/v1/agents", { key, query: { limit: 1 } });
          saveSession({ key, admin: false });
        }
        location.hash = "#/";
      },
      { id: "sign-in" },
    ),
  );
}

async function tenants() {
  const s = session();
  if (!s?.admin) throw new ApiError(403, "admin_only", "this page needs the admin key");
  const list = await call("GET", "/v1/tenants", { key: s.key, query: { limit: 1000 } });
  const open = (tenant) =>
    button(`Open ${tenant.name}`, async () => {
      // The admin key cannot read a tenant's data; the console asks for a
      // key of the tenant's own, named so, once per tenant for this tab.
      const minted = { ...s.minted };
      minted[tenant.id] ??= (await call("POST", `/v1/tenants/${enc(tenant.id)}/keys`, {
        key: s.key,
        body: { name: "console (admin)" },
      })).key;
      saveSession({ ...s, minted, tenant: { id: tenant.id, name: tenant.name, key: minted[tenant.id] } });
      location.hash = "#/agents";
    }, { class: "secondary" });
  return h(
    "div",
    {},
    h("h1", {}, "Tenants"),
    h("p", { class: "muted" }, "Opening a tenant creates an API key for it named “console (admin)”, once for this tab, kept until you sign out; revoke it with octopus keys revoke."),
    list.items.length
      ? table(["Name", "Id", "Created", ""], list.items.map((t) => [t.name, h("code", {}, t.id), when(t.created_at), open(t)]), { optional: [1, 2] })
      : empty("No tenants yet: octopus tenants create <name>."),
  );
}

async function metrics() {
  const s = session();
  if (!s?.admin) throw new ApiError(403, "admin_only", "this page needs the admin key");
  const text = await call("GET", "/metrics", { key: s.key, raw: true });
  const samples = parseMetrics(text);
  const byTenant = new Map();
  for (const sample of samples) {
    const tenant = sample.labels.tenant_id;
    if (!tenant) continue;
    const row = byTenant.get(tenant) ?? { live: 0, import: 0, parked: 0, oldest: 0 };
    if (sample.name === "octopus_memory_jobs_queued") row[sample.labels.class] = sample.value;
    if (sample.name === "octopus_memory_jobs_parked") row.parked = sample.value;
    if (sample.name === "octopus_memory_job_oldest_age_seconds") row.oldest = sample.value;
    byTenant.set(tenant, row);
  }
  const throughput = new Map();
  for (const sample of samples) {
    const purpose = sample.labels.purpose;
    if (!purpose) continue;
    const row = throughput.get(purpose) ?? { texts: 0, seconds: 0 };
    if (sample.name === "octopus_embedded_texts_total") row.texts = sample.value;
    if (sample.name === "octopus_embedding_seconds_total") row.seconds = sample.value;
    throughput.set(purpose, row);
  }
  const completed = samples.filter((m) => m.name === "octopus_memory_jobs_completed_total");
  const requests = samples.filter((m) => m.name === "octopus_http_requests_total").reduce((sum, m) => sum + m.value, 0);
  return h(
    "div",
    {},
    h("h1", {}, "Metrics"),
    h("p", { class: "muted" }, `From /metrics: ${requests} requests answered since the server started.`),
    h("section", { id: "memory-queue" },
      h("h2", {}, "Memory queue"),
      byTenant.size
        ? table(["Tenant", "Live jobs", "Import jobs", "Parked", "Oldest (s)"],
          [...byTenant].map(([tenant, r]) => [h("code", {}, tenant), r.live ?? 0, r.import ?? 0, r.parked, r.oldest.toFixed(1)]), { optional: [3, 4] })
        : empty("No memory work waiting."),
      h("p", {}, `Completed: ${completed.map((m) => `${m.value} ${m.labels.outcome}`).join(", ") || "none yet"}.`)),
    h("section", { id: "throughput" },
      h("h2", {}, "Embedding throughput"),
      throughput.size
        ? table(["For", "Texts", "Seconds", "Texts per second"],
          [...throughput].map(([purpose, r]) => [purpose, r.texts, r.seconds.toFixed(2), r.seconds > 0 ? (r.texts / r.seconds).toFixed(1) : "—"]))
        : empty("Nothing embedded yet.")),
  );
}

/** Prometheus text format: `{name, labels, value}` per sample line. */
function parseMetrics(text) {
  const samples = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/);
    if (!match) continue;
    const labels = {};
    for (const [, name, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

async function agents() {
  const list = await api.items("/v1/agents", { limit: 1000 });
  return h(
    "div",
    {},
    h("h1", {}, "Agents"),
    list.length
      ? table(["Name", "Model", "Active", "Updated"], list.map((a) => [
        link(`#/agents/${enc(a.id)}`, a.name),
        `${a.llm.provider} · ${a.llm.model}`,
        a.is_active ? "yes" : "no",
        when(a.updated_at),
      ]), { optional: [3] })
      : empty("No agents yet: octopus agents create."),
  );
}

function agentLinks(id) {
  return h("p", { class: "links" },
    link(`#/agents/${enc(id)}`, "Settings"),
    link(`#/agents/${enc(id)}/users`, "Users"),
    link(`#/agents/${enc(id)}/knowledge`, "Knowledge"),
    link(`#/agents/${enc(id)}/context`, "Context playground"));
}

async function agent(id) {
  const a = await api.get(`/v1/agents/${enc(id)}`);
  const settings = h("section", { id: "settings" },
    h("h2", {}, "Settings"),
    form([
      field("System prompt", h("textarea", { name: "system_prompt" }, a.system_prompt)),
      field("Model settings (JSON)", h("textarea", { name: "llm", class: "code" }, JSON.stringify(a.llm, null, 2))),
      field("Memory settings (JSON)", h("textarea", { name: "memory", class: "code" }, JSON.stringify(a.memory, null, 2))),
    ], "Save", async (values, element) => {
      let llm;
      let memory;
      try {
        llm = JSON.parse(values.llm);
        memory = JSON.parse(values.memory);
      } catch (error) {
        throw new ApiError(0, "invalid_json", `the settings are not JSON: ${error.message}`);
      }
      await api.patch(`/v1/agents/${enc(id)}`, { system_prompt: values.system_prompt, llm, memory });
      element.querySelector(":scope > .error")?.remove();
      say("Saved.");
    }, { id: "agent-settings" }));
  return h("div", {},
    h("h1", {}, `Agent ${a.name}`),
    agentLinks(id),
    h("p", { class: "muted" }, `${a.is_active ? "Active" : "Inactive"} · created ${when(a.created_at)} · id `, h("code", {}, a.id)),
    settings);
}

async function users(agentId) {
  const [a, list] = await Promise.all([
    api.get(`/v1/agents/${enc(agentId)}`),
    api.items(`/v1/agents/${enc(agentId)}/users`, { limit: 1000 }),
  ]);
  return h("div", {},
    h("h1", {}, `Users of ${a.name}`),
    agentLinks(agentId),
    list.length
      ? table(["User", "Conversations", "Last active"], list.map((u) => [
        link(`#/agents/${enc(agentId)}/users/${enc(u.user_id)}`, u.user_id),
        u.conversation_count,
        when(u.last_active_at),
      ]))
      : empty("Nobody has talked to this agent yet."));
}

async function user(agentId, userId) {
  const [a, conversations, profile] = await Promise.all([
    api.get(`/v1/agents/${enc(agentId)}`),
    api.items("/v1/conversations", { agent_id: agentId, user_id: userId, limit: 1000 }),
    // A user the agent knows nothing of yet has no profile: an empty page.
    api.get(`/v1/agents/${enc(agentId)}/users/${enc(userId)}/profile`)
      .catch((error) => (error.status === 404 ? null : Promise.reject(error))),
  ]);
  const forget = h("section", { id: "forget" }, h("h2", {}, "Forget this user"),
    h("p", {}, `Erases every conversation, episode, message, summary, fact and memory vector of ${userId}, with every agent, for good.`));
  const confirm = button(`Yes, forget ${userId} for good`, async () => {
    const receipt = await api.delete(`/v1/users/${enc(userId)}`);
    forget.replaceChildren(h("h2", {}, "Forgotten"), receiptTable(receipt));
    say(`${userId} is forgotten.`);
    forget.querySelector("h2").setAttribute("tabindex", "-1");
    forget.querySelector("h2").focus();
  }, { class: "danger", id: "forget-confirm", hidden: true });
  forget.append(h("div", { class: "row" }, button(`Forget ${userId}…`, () => {
    confirm.hidden = false;
    confirm.focus();
  }, { class: "secondary", id: "forget-start" }), confirm));
  const activity = profile?.activity;
  // What holds now, under a heading each: standing requests first, then
  // the agent's categories in its order, then facts of no category.
  const groups = profile ? [
    ["Instructions", "instruction", profile.instructions],
    ["Preferences", "preference", profile.preferences],
    ...profile.facts.map((g) => [g.category ?? (profile.facts.length > 1 ? "Other facts" : null), g.category, g.facts]),
  ].filter(([, , facts]) => facts.length) : [];
  const asFact = (category) => (f) => ({ ...f, category, valid_from: f.since });
  return h("div", {},
    h("h1", {}, `${userId}, with ${a.name}`),
    h("p", {}, link(`#/agents/${enc(agentId)}/users`, `All users of ${a.name}`)),
    activity
      ? h("p", { id: "activity" }, `${activity.conversations} conversations, ${activity.episodes} episodes, ${activity.messages} messages; since ${when(activity.first_seen_at)}, last active ${when(activity.last_active_at)}.`)
      : null,
    profile?.summary ? h("p", { id: "profile-summary" }, profile.summary.text) : null,
    h("section", { id: "facts" }, h("h2", {}, "What holds now"),
      groups.length
        ? groups.map(([heading, category, facts]) => h("div", { class: "fact-group" },
          heading ? h("h3", {}, heading) : null,
          h("ul", { class: "facts" }, facts.map((f) => factItem(asFact(category)(f), render)))))
        : empty("No facts yet: they are learned as the user talks, or added below."),
      addFactForm(agentId, userId, a.memory.fact_categories ?? [])),
    profile?.recent_episodes.length
      ? h("section", { id: "recent" }, h("h2", {}, "Recent conversations"),
        table(["Began", "Summary"], profile.recent_episodes.map((e) => [
          when(e.started_at),
          link(`#/episodes/${enc(e.episode_id)}`, e.summary),
        ])))
      : null,
    h("section", { id: "conversations" }, h("h2", {}, "Conversations"),
      conversations.length
        ? table(["Conversation", "Started", "Last change"], conversations.map((c) => [
          link(`#/conversations/${enc(c.id)}`, conversationName(c)),
          when(c.created_at),
          when(c.updated_at),
        ]))
        : empty("No live conversations.")),
    forget);
}

/** A fact a person adds by hand, of no conversation. */
function addFactForm(agentId, userId, categories) {
  const category = categories.length
    ? field("Category", h("select", { name: "category" }, h("option", { value: "" }, "none"),
      categories.map((c) => h("option", { value: c }, c))))
    : null;
  return form([
    field("A fact to add", h("input", { name: "text", required: true, maxlength: 2000 })),
    category,
    field("Why (kept in its history)", h("input", { name: "reason", maxlength: 500 })),
  ], "Add fact", async ({ text, category, reason }) => {
    await api.post(`/v1/agents/${enc(agentId)}/users/${enc(userId)}/facts`,
      { text, category: category || undefined, reason: reason || undefined });
    say("Fact added.");
    await render();
  }, { class: "fact-add", id: "fact-add" });
}

/** One fact that holds, with what a person can do to it: correct it (a new
 * version), delete it (every version, from every store) or read its history. */
function factItem(fact, changed) {
  const item = h("li", { dataset: { fact: fact.id } });
  const details = h("div", { class: "fact-details" });
  const edit = form([
    field("Corrected text", h("input", { name: "text", required: true, value: fact.text, maxlength: 2000 })),
    field("Why (kept in its history)", h("input", { name: "reason", maxlength: 500 })),
  ], "Save correction", async ({ text, reason }) => {
    await api.patch(`/v1/facts/${enc(fact.id)}`, { text, reason: reason || undefined });
    say("Fact corrected; the old version is kept in its history.");
    await changed();
  }, { class: "fact-edit" });
  const confirmDelete = button("Yes, delete this fact for good", async () => {
    const receipt = await api.delete(`/v1/facts/${enc(fact.id)}`);
    say(`Fact deleted: ${receipt.versions} versions, ${receipt.vectors} vectors.`);
    await changed();
  }, { class: "danger fact-delete-confirm", hidden: true });
  item.append(
    h("span", { class: "fact-text" }, fact.text), " ",
    h("span", { class: "muted" }, fact.category ? `${fact.category} · ` : "", `since ${when(fact.valid_from)}`,
      fact.source === "manual" ? `, written by ${fact.changed_by}` : ""),
    h("div", { class: "row" },
      button("Correct…", () => details.replaceChildren(edit), { class: "secondary fact-correct" }),
      button("History", async () => details.replaceChildren(await factHistory(fact.id)), { class: "secondary fact-history" }),
      button("Delete…", () => {
        confirmDelete.hidden = false;
        confirmDelete.focus();
      }, { class: "secondary fact-delete" }),
      confirmDelete),
    details);
  return item;
}

async function factHistory(id) {
  const entries = await api.items(`/v1/facts/${enc(id)}/history`);
  return table(["When", "What", "Text", "By", "Why"], entries.map((e) => [
    when(e.at), e.action, e.text ?? "—", e.changed_by, e.reason ?? "—",
  ]));
}

function receiptTable(receipt) {
  const rows = [];
  for (const [store, counts] of Object.entries(receipt)) {
    if (counts && typeof counts === "object") {
      for (const [what, count] of Object.entries(counts)) rows.push([store, what, count]);
    }
  }
  return h("div", { id: "receipt" }, h("p", {}, `Receipt for ${receipt.user_id}: what each store removed.`),
    table(["Store", "What", "Removed"], rows));
}

// A conversation by its title, else by what the user said first, else by
// when it began.
function conversationName(c) {
  if (c.title) return c.title;
  if (c.opening) return `“${c.opening}”`;
  return `Conversation of ${when(c.created_at)}`;
}

async function conversation(id) {
  const [c, episodes] = await Promise.all([
    api.get(`/v1/conversations/${enc(id)}`),
    api.items("/v1/episodes", { conversation_id: id, limit: 1000 }),
  ]);
  return h("div", {},
    h("h1", {}, conversationName(c)),
    h("p", {}, `With ${c.user_id}, since ${when(c.created_at)}.`),
    h("p", {}, link(`#/agents/${enc(c.agent_id)}/users/${enc(c.user_id)}`, `${c.user_id}'s page`)),
    episodes.length
      ? table(["Episode", "Started", "Ended", "Messages", "Summary"], episodes.map((e) => [
        link(`#/episodes/${enc(e.id)}`, when(e.started_at)),
        when(e.started_at),
        e.ended_at ? `${when(e.ended_at)} (${e.end_reason})` : "open",
        e.message_count,
        e.summary ? e.summary.slice(0, 120) : "—",
      ]), { optional: [1, 3] })
      : empty("No episodes."));
}

function contentText(content) {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? `[${part.type}]`).join("");
}

async function episode(id) {
  const e = await api.get(`/v1/episodes/${enc(id)}`);
  const messages = e.messages.map((m) => h("div", { class: `message ${m.role}`, dataset: { message: m.id } },
    h("div", { class: "meta" }, `${m.role}${m.name ? ` (${m.name})` : ""} · ${when(m.timestamp)} · ${m.token_count} tokens `,
      eraseButtons(m.id)),
    contentText(m.content) ? h("div", { class: "text" }, contentText(m.content)) : null,
    m.tool_call_id ? h("div", { class: "meta" }, `answers tool call ${m.tool_call_id}`) : null,
    (m.tool_calls ?? []).map((call) => h("div", { class: "tool-call" },
      h("div", { class: "meta" }, `calls ${call.function_name} (${call.tool_call_id})${call.is_error ? ", failed" : ""}${call.duration_ms ? `, ${call.duration_ms} ms` : ""}`),
      h("pre", {}, JSON.stringify(call.arguments ?? {}, null, 2)),
      call.result === undefined || call.result === null ? null : h("pre", { class: "tool-result" }, typeof call.result === "string" ? call.result : JSON.stringify(call.result, null, 2))))));
  return h("div", {},
    h("h1", {}, `Episode of ${when(e.started_at)}`),
    h("p", {}, link(`#/conversations/${enc(e.conversation_id)}`, "The conversation")),
    h("section", { id: "summary" }, h("h2", {}, "Summary"),
      e.summary ? h("p", {}, e.summary) : empty(e.ended_at ? "Not summarised yet." : "The episode is open: it is summarised when it closes."),
      (e.key_facts ?? []).length ? h("div", {}, h("h2", {}, "Key facts"), h("ul", { id: "key-facts" }, e.key_facts.map((f) => h("li", {}, f)))) : null),
    h("section", { id: "messages" }, h("h2", {}, `Messages (${e.messages.length})`), messages));
}

/** Erasing a message, after a second click: its words leave every store,
 * with the facts learned from it; the episode's summary is written again. */
function eraseButtons(id) {
  const confirm = button("Yes, erase it for good", async () => {
    const receipt = await api.delete(`/v1/messages/${enc(id)}`);
    say(`Message erased, with ${receipt.facts_deleted} facts learned from it.`);
    await render();
  }, { class: "danger message-erase-confirm", hidden: true });
  return h("span", {},
    button("Erase…", () => {
      confirm.hidden = false;
      confirm.focus();
    }, { class: "secondary message-erase" }),
    " ", confirm);
}

async function knowledge(agentId) {
  const [a, info, documents] = await Promise.all([
    api.get(`/v1/agents/${enc(agentId)}`),
    api.get(`/v1/agents/${enc(agentId)}/knowledge`),
    api.items(`/v1/agents/${enc(agentId)}/knowledge/documents`, { limit: 1000 }),
  ]);
  const results = h("div", { id: "hits" });
  const search = form([
    h("div", { class: "row" },
      field("Search", h("input", { name: "query", required: true, type: "search" })),
      field("Mode", h("select", { name: "mode" }, ["hybrid", "vector", "keyword"].map((m) => h("option", { value: m }, m)))),
      field("Top K", h("input", { name: "top_k", type: "number", min: 1, max: 100, value: 5 }))),
  ], "Search", async ({ query, mode, top_k }) => {
    const hits = (await api.post(`/v1/agents/${enc(agentId)}/knowledge/search`, { query, mode, top_k: Number(top_k) })).items;
    results.replaceChildren(hits.length
      ? table(["Source", "Text", "Score", "Meaning", "Words"], hits.map((hit) => [
        hit.chunk.source, hit.chunk.content, score(hit.score), score(hit.vector_score), score(hit.keyword_score),
      ]), { optional: [3, 4] })
      : empty("No hits."));
  }, { id: "knowledge-search" });
  return h("div", {},
    h("h1", {}, `Knowledge of ${a.name}`),
    agentLinks(agentId),
    h("section", { id: "documents" }, h("h2", {}, "Documents"),
      info.collection ? h("p", { class: "muted" }, `${info.collection.chunk_count} chunks, embedded with ${info.collection.model} (${info.collection.dimension} dimensions).`) : null,
      documents.length
        ? table(["Source", "Category", "Chunks", "Indexed"], documents.map((d) => [d.source, d.category ?? "—", d.chunk_count, when(d.indexed_at)]), { optional: [1, 3] })
        : empty("No documents: octopus ingest --agent <id> <files>.")),
    h("section", {}, h("h2", {}, "Search"), search, results));
}

async function context(agentId) {
  const [a, conversations] = await Promise.all([
    api.get(`/v1/agents/${enc(agentId)}`),
    api.items("/v1/conversations", { agent_id: agentId, limit: 200 }),
  ]);
  const picture = h("div", { id: "context-result" });
  const playground = form([
    field("Conversation", h("select", { name: "conversation" }, conversations.map((c) =>
      h("option", { value: c.id }, `${c.user_id} · ${conversationName(c)} · ${when(c.updated_at)}`)))),
    field("The user's next message", h("textarea", { name: "message", required: true })),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "explain" }),
      "Say why each candidate was kept or left out, and why recall found it"),
  ], "Build the context", async ({ conversation, message, explain }) => {
    const built = await api.post(`/v1/conversations/${enc(conversation)}/context`,
      explain ? { message, explain: true } : { message });
    picture.replaceChildren(contextPicture(built));
  }, { id: "context-form" });
  return h("div", {},
    h("h1", {}, `Context playground: ${a.name}`),
    agentLinks(agentId),
    h("p", {}, "What the agent's model would see for a message, block by block, and what was left out to keep within its budget. Nothing is stored."),
    conversations.length ? playground : empty("This agent has no conversations yet."),
    picture);
}

function contextPicture(built) {
  const trace = built.trace;
  const total = Math.max(trace.budget, trace.total_tokens, 1);
  const bar = h("div", { class: "bar", role: "img", "aria-label": `${trace.total_tokens} of ${trace.budget} tokens` },
    trace.blocks.filter((b) => b.tokens > 0).map((b) => {
      const block = h("div", {
        class: `block ${b.block}`,
        title: `${b.block}: ${b.tokens} tokens, ${b.items} items`,
        dataset: { block: b.block, tokens: b.tokens },
      }, b.block);
      // Set through the style object: the page's policy refuses style attributes.
      block.style.flex = `0 0 ${(100 * b.tokens / total).toFixed(3)}%`;
      return block;
    }));
  const retrieved = [
    ["Procedures", (trace.procedures ?? []).map((p) => [`${p.name} v${p.version}`, `matched by ${p.matched_by}`, score(p.score)])],
    ["Facts", (trace.facts ?? []).map((r) => [r.label, r.text, score(r.score)])],
    ["Knowledge", trace.knowledge.map((r) => [r.label, r.text, score(r.score)])],
    ["Episodes", trace.episodic.map((r) => [r.label, r.text, score(r.score)])],
  ].filter(([, rows]) => rows.length);
  return h("section", {},
    h("h2", {}, `${trace.total_tokens} of ${trace.budget} tokens`),
    bar,
    table(["Block", "Items", "Tokens"], trace.blocks.map((b) => [h("span", {}, h("span", { class: `swatch ${b.block}` }), b.block), b.items, b.tokens])),
    h("h2", {}, "Left out"),
    trace.pruned.length
      ? h("div", { id: "pruned" }, table(["Block", "What", "Tokens", "Why"], prunedGroups(trace.pruned).map((g) => [g.block, prunedWhat(g), g.tokens, pruneReason(g.reason)])))
      : empty("Nothing: everything fit."),
    trace.vector_search_unavailable ? h("p", { class: "error" }, `Search by meaning was unavailable: ${trace.vector_search_unavailable}`) : null,
    retrieved.map(([title, rows]) => h("div", {}, h("h2", {}, title), table(["What", "Text", "Score"], rows))),
    built.explanation ? h("section", { id: "why" }, h("h2", {}, "Why"),
      table(["Block", "What", "Fate", "Found by", "Moved"], built.explanation.candidates.map((c) => [
        c.block, c.id, fate(c), foundBy(c.recall), moves(c.recall)]), { optional: [3, 4] })) : null,
    h("details", {}, h("summary", {}, `The ${built.messages.length} messages sent`),
      built.messages.map((m) => h("div", { class: `message ${m.role}` }, h("div", { class: "meta" }, m.role), h("div", {}, contentText(m.content))))));
}

// What was left out, one row per block and reason: a long history pruned
// message by message is one row, not one per message.
function prunedGroups(pruned) {
  const groups = new Map();
  for (const p of pruned) {
    const key = `${p.block} ${p.reason}`;
    const group = groups.get(key) ?? { block: p.block, reason: p.reason, ids: [], tokens: 0 };
    group.ids.push(p.id);
    group.tokens += p.tokens;
    groups.set(key, group);
  }
  return [...groups.values()];
}

function prunedWhat(group) {
  const n = group.ids.length;
  if (group.block === "history") return n === 1 ? `message ${group.ids[0]} of the history` : `${n} messages of the history`;
  return n === 1 ? group.ids[0] : `${n} items`;
}

function fate(candidate) {
  return {
    kept: "kept",
    joined: `kept, shown with ${candidate.shown_in}`,
    repeat: "left out: its words were already shown",
    no_text: "left out: no text",
    block_limit: "left out: its block was over its own limit",
    over_budget: "left out: over the budget, the lowest-scored went",
  }[candidate.fate] ?? candidate.fate;
}

// The searches that found a recalled memory, each with its place there.
function foundBy(recall) {
  if (!recall) return "—";
  if (!recall.found_by.length) return "next to a turn that was found";
  return recall.found_by.map((f) => `${f.search}${f.looked_for ? ` "${f.looked_for}"` : ""} #${f.rank}`).join(", ");
}

function moves(recall) {
  if (!recall || !recall.moved.length) return "—";
  return recall.moved.map((m) => `${m.by.replaceAll("_", " ")}: ${m.from} → ${m.to}`).join("; ");
}

function pruneReason(reason) {
  return {
    block_limit: "its block was over its own share of the budget; the lowest-scored went first",
    oldest_history: "over budget: the oldest history goes first",
    lowest_score: "over budget with no older history left: the lowest-scored went",
    latest_exchange: "over budget with nothing else left: the latest exchange went",
  }[reason] ?? reason;
}

async function procedures() {
  const list = await api.items("/v1/procedures", { limit: 1000 });
  const pending = list.filter((p) => p.pending_version);
  const row = (p) => [
    link(`#/procedures/${enc(p.id)}`, p.name),
    p.serving_version ? `v${p.serving_version}` : "none",
    p.pending_version ? h("span", { class: "badge pending" }, `v${p.pending_version} waits`) : "—",
    p.trigger_pattern ?? "by meaning",
  ];
  return h("div", {},
    h("h1", {}, "Procedures"),
    h("section", { id: "pending" }, h("h2", {}, `Waiting for approval (${pending.length})`),
      pending.length ? table(["Name", "Serving", "Pending", "Trigger"], pending.map(row), { optional: [3] }) : empty("Nothing waits.")),
    h("section", { id: "all" }, h("h2", {}, "All"),
      list.length ? table(["Name", "Serving", "Pending", "Trigger"], list.map(row), { optional: [3] }) : empty("No procedures yet.")));
}

function versionLines(v) {
  return [
    `name: ${v.name}`,
    `trigger: ${v.trigger_pattern ?? "(by meaning)"}`,
    `description: ${v.description ?? ""}`,
    ...v.steps.map((s, i) => `${i + 1}. ${s.instruction}${s.tool ? ` [tool ${s.tool}]` : ""}${s.arguments ? ` ${JSON.stringify(s.arguments)}` : ""}`),
  ];
}

/** Lines of `before` and `after` as kept, removed and added (a longest common subsequence). */
function diffLines(before, after) {
  const n = before.length;
  const m = after.length;
  const common = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      common[i][j] = before[i] === after[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push(["kept", before[i++]]);
      j++;
    } else if (i < n && (j === m || common[i + 1][j] >= common[i][j + 1])) {
      out.push(["removed", before[i++]]);
    } else {
      out.push(["added", after[j++]]);
    }
  }
  return out;
}

async function procedure(id) {
  const [p, versions] = await Promise.all([
    api.get(`/v1/procedures/${enc(id)}`),
    api.items(`/v1/procedures/${enc(id)}/versions`),
  ]);
  const reload = () => render();
  const decisions = p.pending_version
    ? h("section", { id: "decision" }, h("h2", {}, `Version ${p.pending_version} waits for approval`),
      h("div", { class: "row" },
        button(`Approve v${p.pending_version}`, async () => {
          await api.post(`/v1/procedures/${enc(id)}/approve`);
          say(`v${p.pending_version} approved: it serves now.`);
          await reload();
        }, { id: "approve" }),
        button(`Reject v${p.pending_version}`, async () => {
          await api.post(`/v1/procedures/${enc(id)}/reject`);
          say(`v${p.pending_version} rejected.`);
          await reload();
        }, { class: "danger", id: "reject" })))
    : null;
  const sorted = [...versions].sort((a, b) => a.version - b.version);
  const pick = (name, chosen) => h("select", { name }, sorted.map((v) => h("option", { value: v.version, selected: v.version === chosen }, `v${v.version} (${v.status})`)));
  const diffView = h("div", { class: "diff", id: "diff" });
  const showDiff = ({ from, to }) => {
    const a = sorted.find((v) => v.version === Number(from));
    const b = sorted.find((v) => v.version === Number(to));
    diffView.replaceChildren(...diffLines(versionLines(a), versionLines(b)).map(([kind, text]) =>
      h("div", { class: kind }, `${{ kept: "  ", added: "+ ", removed: "- " }[kind]}${text}`)));
  };
  const to = p.pending_version ?? sorted.at(-1)?.version;
  const from = p.serving_version && p.serving_version !== to ? p.serving_version : sorted.at(-2)?.version ?? to;
  const diffForm = form([h("div", { class: "row" }, field("From", pick("from", from)), field("To", pick("to", to)))], "Compare", async (values) => showDiff(values), { id: "diff-form" });
  if (sorted.length) showDiff({ from, to });
  const rollbacks = sorted.filter((v) => v.status === "approved" && v.version !== p.serving_version);
  return h("div", {},
    h("h1", {}, `Procedure ${p.name}`),
    h("p", {}, link("#/procedures", "All procedures")),
    h("p", { id: "serving" }, p.serving_version ? `Serving v${p.serving_version}.` : "Not serving: no version is approved.",
      " ", p.is_active ? "" : h("span", { class: "badge" }, "inactive")),
    decisions,
    h("section", {}, h("h2", {}, "Versions"),
      table(["Version", "Status", "Made", "Decided"], sorted.map((v) => [
        `v${v.version}`, h("span", { class: `badge ${v.status === "pending" ? "pending" : v.status === "approved" ? "ok" : ""}` }, v.status),
        `${when(v.created_at)}${v.created_by ? ` by ${v.created_by}` : ""}`,
        v.decided_at ? `${when(v.decided_at)}${v.decided_by ? ` by ${v.decided_by}` : ""}` : "—",
      ]), { optional: [2, 3] }),
      rollbacks.length ? h("div", { class: "row" }, rollbacks.map((v) => button(`Roll back to v${v.version}`, async () => {
        await api.post(`/v1/procedures/${enc(id)}/rollback`, { version: v.version });
        say(`v${v.version} serves again.`);
        await reload();
      }, { class: "secondary", dataset: { version: v.version } }))) : null),
    h("section", {}, h("h2", {}, "Changes between versions"), diffForm, diffView));
}

const EVENT_TYPES = ["fact.added", "fact.updated", "fact.deleted", "message.erased", "episode.closed", "procedure.pending", "user.forgotten"];

function webhookState(w) {
  if (!w.enabled) return h("span", { class: "badge" }, "disabled");
  if (w.failing_since) return h("span", { class: "badge pending" }, `failing since ${when(w.failing_since)}`);
  return h("span", { class: "badge ok" }, "enabled");
}

async function webhooks() {
  const list = await api.items("/v1/webhooks");
  const secret = h("div", { id: "secret" });
  const boxes = EVENT_TYPES.map((type) => h("label", { class: "check" }, h("input", { type: "checkbox", name: type, checked: true }), type));
  return h("div", {},
    h("h1", {}, "Webhooks"),
    h("p", {}, "Endpoints that receive a signed event (Standard Webhooks) when this tenant's memory changes. Events carry ids, never the words of a message or a fact."),
    list.length
      ? table(["Endpoint", "Events", "State"], list.map((w) => [
        link(`#/webhooks/${enc(w.id)}`, w.url), w.events.join(", "), webhookState(w),
      ]), { optional: [1] })
      : empty("No webhooks yet."),
    h("section", {}, h("h2", {}, "Register an endpoint"),
      form([field("URL", h("input", { name: "url", type: "url", required: true, placeholder: "https://hooks.example.com/octopus" })),
        h("fieldset", {}, h("legend", {}, "Events"), boxes),
        field("Description (optional)", h("input", { name: "description" }))], "Register", async (values, element) => {
        const events = EVENT_TYPES.filter((type) => values[type]);
        const body = { url: values.url, events };
        if (values.description) body.description = values.description;
        const created = await api.post("/v1/webhooks", body);
        element.reset();
        secret.replaceChildren(h("p", {}, "Its signing secret, shown this once: keep it where the endpoint can verify deliveries with it."),
          h("pre", { id: "new-secret" }, created.secret), link(`#/webhooks/${enc(created.webhook.id)}`, "Its delivery log"));
        say("Registered.");
      }, { id: "webhook-form" }),
      secret));
}

async function webhook(id) {
  const [w, deliveries] = await Promise.all([
    api.get(`/v1/webhooks/${enc(id)}`),
    api.items(`/v1/webhooks/${enc(id)}/deliveries`, { limit: 100 }),
  ]);
  return h("div", {},
    h("h1", {}, `Webhook ${w.description ?? ""}`),
    h("p", {}, link("#/webhooks", "All webhooks")),
    h("p", { id: "webhook-state" }, w.url, " ", webhookState(w), w.disabled_reason ? ` ${w.disabled_reason}` : ""),
    h("div", { class: "row" },
      w.enabled ? null : button("Enable", async () => {
        await api.post(`/v1/webhooks/${enc(id)}/enable`);
        say("Enabled: what is written from now on is delivered.");
        await render();
      }, { id: "enable" }),
      button("Delete", async () => {
        if (!confirm("Delete this endpoint and its delivery log?")) return;
        await api.delete(`/v1/webhooks/${enc(id)}`);
        location.hash = "#/webhooks";
      }, { class: "danger", id: "delete-webhook" })),
    h("section", { id: "deliveries" }, h("h2", {}, "Deliveries"),
      deliveries.length
        ? table(["Event", "User", "State", "Attempts", "Last answer", "Made"], deliveries.map((d) => [
          d.event_type, d.user_id ?? "—",
          h("span", { class: `badge ${d.state === "delivered" ? "ok" : d.state === "pending" ? "pending" : ""}` }, d.state),
          String(d.attempts),
          d.last_error ?? (d.last_status ? `HTTP ${d.last_status}` : "—"),
          when(d.created_at),
        ]), { optional: [1, 5] })
        : empty("Nothing delivered yet.")));
}

async function exportDump() {
  const out = h("div", { id: "export-result" });
  return h("div", {},
    h("h1", {}, "Export"),
    h("p", {}, "The tenant's data as a dump (JSON Lines), to move it to another server with octopus import, or to keep."),
    form([field("Only this user (optional)", h("input", { name: "user_id" }))], "Export", async ({ user_id }) => {
      const text = await call("GET", "/v1/export", { query: { user_id }, raw: true });
      const records = text.split("\n").filter(Boolean).length;
      const href = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
      const name = `octopus-${user_id || "tenant"}-${new Date().toISOString().slice(0, 10)}.jsonl`;
      out.replaceChildren(h("p", {}, `${records} records, ${text.length} bytes. `, link(href, `Download ${name}`, { download: name, id: "download" })));
    }, { id: "export-form" }),
    out);
}

window.addEventListener("hashchange", () => {
  // A message about the last page does not follow the person to the next.
  status.textContent = "";
  render();
});
render();
