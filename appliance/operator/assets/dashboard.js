// The operator's dashboard: reads /status.json (the figures `appliance status` prints too) and
// draws them as SVG. No library and nothing fetched from elsewhere: the box may be offline.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const REFRESH_MS = 15000;
  const MAX_ROWS = 12;

  // Atomic USDC units (6 decimals) as text, exactly.
  function usdc(atomic) {
    const a = Math.round(atomic);
    return Math.floor(a / 1e6) + "." + String(a % 1e6).padStart(6, "0");
  }
  function usdcShort(atomic) { return (atomic / 1e6).toFixed(atomic < 1e6 ? 4 : 2); }
  // Decimal wei as ETH text, exactly (BigInt: wei passes 2^53).
  function eth(wei) {
    const w = BigInt(wei || "0"), unit = 10n ** 18n;
    const frac = String(w % unit).padStart(18, "0").replace(/0+$/, "");
    return String(w / unit) + (frac ? "." + frac : "") + " ETH";
  }
  function ethShort(wei) { return (Number(BigInt(wei || "0") / 1000000000n) / 1e9).toPrecision(3) + " ETH"; }
  function gwei(wei) { return Number(BigInt(wei || "0") / 1000000000n); }
  function bytes(n) {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + units[i];
  }
  function ago(from, to) {
    const s = Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);
    if (s < 60) return Math.floor(s) + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 172800) return Math.floor(s / 3600) + "h" + Math.floor((s % 3600) / 60) + "m";
    return Math.floor(s / 86400) + "d" + Math.floor((s % 86400) / 3600) + "h";
  }

  function el(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(w, h) { return el("svg", { viewBox: "0 0 " + w + " " + h, role: "img" }); }
  function empty(box, msg) {
    const s = svg(600, 40);
    s.appendChild(el("text", { x: 8, y: 24, class: "empty" }, msg));
    box.replaceChildren(s);
  }
  function niceMax(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // Vertical bars, one per item {label, value, title}; fmt writes axis values.
  function columns(box, items, fmt, emptyMsg) {
    if (!items.some(i => i.value > 0)) return empty(box, emptyMsg);
    const W = 1200, H = 220, L = 64, B = 26, T = 10, R = 8;
    const s = svg(W, H), max = niceMax(Math.max(...items.map(i => i.value)));
    for (let g = 0; g <= 4; g++) {
      const y = T + (H - T - B) * (1 - g / 4);
      s.appendChild(el("line", { x1: L, x2: W - R, y1: y, y2: y, stroke: "#e3e7ec" }));
      s.appendChild(el("text", { x: L - 6, y: y + 4, "text-anchor": "end" }, fmt(max * g / 4)));
    }
    const step = (W - L - R) / items.length, every = Math.ceil(items.length / 10);
    items.forEach((it, i) => {
      const h = (H - T - B) * it.value / max, x = L + i * step + step * 0.15;
      const r = el("rect", { class: "bar", x: x.toFixed(1), y: (H - B - h).toFixed(1), width: (step * 0.7).toFixed(1),
        height: h.toFixed(1), "data-label": it.label, "data-value": String(it.raw !== undefined ? it.raw : it.value) });
      r.appendChild(el("title", {}, it.title));
      s.appendChild(r);
      if (i % every === 0 || i === items.length - 1) {
        s.appendChild(el("text", { x: (L + i * step + step / 2).toFixed(1), y: H - 8, "text-anchor": "middle" }, it.label.slice(5)));
      }
    });
    box.replaceChildren(s);
  }

  // Horizontal stacked bars: rows {label, parts: [{cls, value, title}]}; the first part of a
  // one-part chart is a plain bar.
  function rows(box, list, fmtTotal, emptyMsg) {
    list = list.filter(r => r.parts.some(p => p.value > 0)).slice(0, MAX_ROWS);
    if (!list.length) return empty(box, emptyMsg);
    const W = 600, row = 22, L = 170, R = 90, H = list.length * row + 6;
    const s = svg(W, H);
    const max = Math.max(...list.map(r => r.parts.reduce((a, p) => a + p.value, 0)));
    list.forEach((r, i) => {
      const y = 4 + i * row;
      s.appendChild(el("text", { x: L - 6, y: y + 14, "text-anchor": "end" }, r.label));
      let x = L, total = 0;
      for (const p of r.parts) {
        const w = (W - L - R) * p.value / max;
        total += p.value;
        if (p.value <= 0) continue;
        const rect = el("rect", { class: p.cls, x: x.toFixed(1), y: y + 2, width: Math.max(w, 1).toFixed(1), height: row - 6,
          "data-label": r.label, "data-value": String(p.value) });
        rect.appendChild(el("title", {}, p.title));
        s.appendChild(rect);
        x += w;
      }
      s.appendChild(el("text", { x: (x + 6).toFixed(1), y: y + 14 }, fmtTotal(total)));
    });
    box.replaceChildren(s);
  }

  function dl(id, pairs) {
    const box = document.getElementById(id);
    box.replaceChildren();
    for (const [k, v, cls] of pairs) {
      const dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = k;
      dd.textContent = v;
      if (cls) dd.className = cls;
      box.append(dt, dd);
    }
  }
  function tiles(list) {
    const box = document.getElementById("tiles");
    box.replaceChildren();
    for (const [value, label, cls] of list) {
      const d = document.createElement("div"), b = document.createElement("b"), s = document.createElement("span");
      d.className = "tile";
      b.textContent = value;
      if (cls) b.className = cls;
      s.textContent = label;
      d.append(b, s);
      box.append(d);
    }
  }

  function draw(s) {
    const rev = s.revenue, st = s.settlement, farm = s.browser_farm, px = s.proxy, ex = s.exit;
    document.getElementById("version").textContent = s.version;
    document.getElementById("days").textContent = rev.by_day.length;
    document.getElementById("summary").textContent = "health " + s.health.status + " · up " + ago(s.started_at, s.generated_at) +
      " · " + s.health.routes_available + " of " + s.health.routes + " routes available";
    document.getElementById("summary").className = s.health.status === "ok" ? "good" : "problem";
    const month = rev.by_day.reduce((a, d) => a + d.amount, 0);
    const queue = st.queued.payments + st.broadcast.payments;
    tiles([
      [rev.error ? "—" : usdc(rev.today), "USDC today", ""],
      [rev.error ? "—" : usdc(month), "USDC, last " + rev.by_day.length + " days", ""],
      [rev.error ? "—" : usdc(rev.total), "USDC all time, " + rev.calls + " paid calls", ""],
      [String(s.routes.total.calls), "calls since start, " + s.routes.total.server_errors + " failed", s.routes.total.server_errors ? "problem" : ""],
      [st.error ? "—" : String(queue), "payments in the settlement queue", queue ? "" : "good"],
      [st.error ? "—" : ethShort(st.gas_wei), "gas spent", ""],
      [farm.error ? "down" : farm.busy + "/" + farm.browsers_up, "browsers busy/up, queue " + farm.queue, farm.running ? "" : "problem"],
      [ex.error ? "unknown" : (ex.live ? "live" : "down"), "exit " + [ex.country, ex.asn].filter(Boolean).join(" "), ex.live ? "good" : "problem"],
    ]);
    if (rev.error) empty(document.getElementById("chart-revenue-day"), rev.error);
    else columns(document.getElementById("chart-revenue-day"),
      rev.by_day.map(d => ({ label: d.day, value: d.amount, title: d.day + ": " + usdc(d.amount) + " USDC, " + d.calls + " paid calls, " + d.free_calls + " free" })),
      usdcShort, "No settled revenue in these days yet.");
    if (rev.error) empty(document.getElementById("chart-revenue-route"), rev.error);
    else rows(document.getElementById("chart-revenue-route"),
      rev.by_route.map(r => ({ label: r.route, parts: [{ cls: "bar", value: r.amount, title: r.route + ": " + usdc(r.amount) + " USDC, " + r.calls + " calls" }] })),
      usdcShort, "No route has earned yet.");
    rows(document.getElementById("chart-calls"), s.routes.by_route.map(r => ({ label: r.route, parts: [
      { cls: "seg ok", value: r.ok, title: r.route + ": " + r.ok + " delivered" },
      { cls: "seg asked", value: r.payment_required, title: r.route + ": " + r.payment_required + " payment asked" },
      { cls: "seg refused", value: r.client_errors, title: r.route + ": " + r.client_errors + " refused" },
      { cls: "seg failed", value: r.server_errors, title: r.route + ": " + r.server_errors + " failed" },
    ] })), String, "No calls since the API started.");
    if (st.error) empty(document.getElementById("chart-gas-day"), st.error);
    else columns(document.getElementById("chart-gas-day"),
      st.gas_by_day.map(d => ({ label: d.day, value: gwei(d.wei), raw: d.wei, title: d.day + ": " + eth(d.wei) + " over " + d.transactions + " transactions" })),
      v => String(Math.round(v)), "No settlement transaction mined in these days.");
    dl("farm", farm.error ? [["state", farm.error, "problem"]] : [
      ["browsers", farm.browsers_up + " up of " + farm.size], ["busy", String(farm.busy)],
      ["queue", farm.queue + " of " + farm.queue_cap + " (free lane " + farm.free_queued + ")"],
      ["jobs", farm.jobs_done + " done, " + farm.jobs_failed + " failed, " + farm.rejected + " turned away"],
      ["crashes", farm.page_crashes + " pages, " + farm.restarts + " browser restarts"], ["memory", farm.memory_mb + " MB"]]);
    dl("proxy", [
      ...(px.error ? [["proxy", px.error, "problem"]] : [
        ["packages", px.packages_active + " active of " + px.packages], ["tunnels", px.tunnels_open + " open, " + px.tunnels_total + " since start"],
        ["bytes", "↑ " + bytes(px.bytes_up) + " ↓ " + bytes(px.bytes_down)], ["refused", px.refused + " tunnels, " + px.dial_failed + " dials failed"]]),
      ...(ex.error ? [["exit", ex.error, "problem"]] : [
        ["exit", (ex.live ? "live" : "down") + (ex.problem ? ": " + ex.problem : ""), ex.live ? "good" : "problem"],
        ["address", [ex.ip, ex.country, ex.asn, ex.carrier].filter(Boolean).join(" · ")],
        ["reachable", ex.reachable || "unknown"], ["checked", ex.checked_at ? ago(ex.checked_at, s.generated_at) + " ago" : "never"]]),
    ]);
    dl("settlement", st.error ? [["ledger", st.error, "problem"]] : [
      ["queued", st.queued.payments + " (" + usdc(st.queued.amount) + " USDC)"],
      ["broadcast", st.broadcast.payments + " (" + usdc(st.broadcast.amount) + " USDC)"],
      ["running", st.running.payments + " reserved while their work runs"],
      ["settled", st.settled.payments + " (" + usdc(st.settled.amount) + " USDC)"],
      ["failed", st.failed.payments + " (" + usdc(st.failed.amount) + " USDC)", st.failed.payments ? "problem" : ""],
      ["oldest owed", st.oldest_owed ? ago(st.oldest_owed, s.generated_at) : "none"], ["gas spent", eth(st.gas_wei)]]);
    const ch = s.channels, t = ch.totals, g = st.gas_per_paid_call, cl = ch.claimer;
    dl("channels", ch.error ? [["channels", ch.error, "problem"]] : !ch.enabled && !ch.channels.length ? [["channels", "batch-settlement is off (no receiver authorizer)"]] : [
      ["channels", t.channels + " (" + t.pending_withdrawals + " withdrawals pending)", t.pending_withdrawals ? "problem" : ""],
      ["paid calls", String(t.calls)], ["escrow", usdc(t.balance) + " USDC"], ["charged", usdc(t.charged) + " USDC"],
      ["claimed", usdc(t.claimed) + " USDC"], ["unclaimed", usdc(t.unclaimed) + " USDC"],
      ["claimer", (cl.interval_seconds ? "every " + cl.interval_seconds + " s" : "not running") + ", from " + usdc(cl.min_claimable) + " USDC, " +
        cl.rounds + " rounds" + (cl.last_error ? ", last failed: " + cl.last_error : ""), cl.last_error ? "problem" : ""],
      ...(st.error ? [] : [["gas per paid call", g.per_call.gas + " gas (" + eth(g.per_call.wei) + ") · exact " + g.exact_per_call.gas +
        " over " + g.exact_calls + " · batch " + g.batch_per_call.gas + " over " + g.batch_calls]])]);
    const table = document.getElementById("channel-list");
    table.replaceChildren();
    const row = (cells, tag) => { const tr = document.createElement("tr"); for (const c of cells) { const td = document.createElement(tag); td.textContent = c; tr.append(td); } return tr; };
    if (!ch.error && ch.channels.length) {
      table.append(row(["channel", "payer", "balance", "charged", "claimed", "unclaimed", "calls", "withdrawal finalizes"], "th"));
      for (const c of ch.channels) table.append(row([c.id.slice(0, 10) + "…", c.payer, usdc(c.balance), usdc(c.charged), usdc(c.claimed),
        usdc(c.unclaimed), String(c.calls), c.withdraw_finalize_at || "none"], "td"));
    }
    drawFleet(s.fleet, s.generated_at, row);
    dl("health", Object.keys(s.health.components || {}).sort().map(k => [k, s.health.components[k], s.health.components[k] === "ok" ? "good" : "problem"]));
    document.getElementById("refreshed").textContent = "Figures of " + s.generated_at + " (UTC), from /status.json; refreshed every " + REFRESH_MS / 1000 + " s.";
    document.body.dataset.loaded = s.generated_at;
  }

  // A gateway's boxes: their revenue as stacked bars, then one table row each.
  function drawFleet(fl, at, row) {
    const card = document.getElementById("fleet");
    card.hidden = !fl;
    if (!fl) return;
    const live = fl.boxes.filter(b => b.live).length, gw = fl.gateway;
    document.getElementById("fleet-summary").textContent = fl.boxes.length + " boxes, " + live + " live · the gateway itself served " +
      gw.calls + " paid calls for " + usdc(gw.amount) + " USDC" + (fl.error ? " · earnings unknown: " + fl.error : "");
    rows(document.getElementById("chart-revenue-box"), fl.boxes.map(b => ({ label: b.box, parts: [
      { cls: "seg settled", value: b.earned.settled.amount, title: b.box + ": " + usdc(b.earned.settled.amount) + " USDC settled over " + b.earned.settled.payments + " calls" },
      { cls: "seg vouchers", value: b.earned.vouchers.amount, title: b.box + ": " + usdc(b.earned.vouchers.amount) + " USDC charged over " + b.earned.vouchers.payments + " vouchers" },
    ] })), usdcShort, "No box has earned yet.");
    const table = document.getElementById("fleet-list");
    table.replaceChildren(row(["box", "state", "exit", "load/slots", "last seen", "routes", "calls", "USDC"], "th"));
    for (const b of fl.boxes) {
      const state = !b.known ? "not enrolled" : b.live ? b.health : (b.last_seen ? "gone" : "not connected");
      table.append(row([b.box, state, [b.country, b.asn ? "AS" + b.asn : ""].filter(Boolean).join(" ") || "-", b.load + "/" + b.slots,
        b.last_seen ? ago(b.last_seen, at) + " ago" : "never", String(b.routes.length), String(b.earned.calls), usdc(b.earned.amount)], "td"));
    }
  }

  async function load() {
    try {
      const r = await fetch("status.json", { cache: "no-store" });
      if (!r.ok) throw new Error("/status.json answered " + r.status);
      draw(await r.json());
    } catch (e) {
      const p = document.getElementById("summary");
      p.textContent = "The figures cannot be read: " + e.message;
      p.className = "problem";
    }
  }
  load();
  setInterval(load, REFRESH_MS);
})();
