// The live log: every event of the research once, in order, from the first one.
//
// An EventSource on /api/research/ID/events. The browser reconnects by itself after a dropped
// connection and sends Last-Event-ID; when it gives up (an HTTP error) or the stream goes quiet
// for longer than the heartbeats allow, we reconnect with ?since= the last seq shown. Events are
// shown by seq, so whatever a reconnection sends again is shown once.
import { element } from "./api.js";

const STALL_MS = 40000;
const RETRY_MS = [1000, 2000, 5000, 10000, 30000];

class LiveLog {
  constructor(id, log, status, handlers) {
    this.url = `/api/research/${encodeURIComponent(id)}/events`;
    this.log = log;
    this.list = log.querySelector("ol");
    this.status = status;
    this.handlers = handlers;
    this.kinds = (log.dataset.kinds || "").split(/\s+/).filter(Boolean);
    // The events the page came with (rendered by the server): the stream goes on after them.
    const shown = [...this.list.querySelectorAll("li[data-seq]")].map((li) => Number(li.dataset.seq));
    this.last = Math.max(0, ...shown);
    this.retries = 0;
    this.ended = false;
  }

  connect() {
    const source = new EventSource(this.url + (this.last ? `?since=${this.last}` : ""));
    this.source = source;
    this.kinds.forEach((kind) => source.addEventListener(kind, (message) => this.shown(message)));
    source.addEventListener("heartbeat", () => this.alive());
    source.addEventListener("end", () => this.end());
    source.addEventListener("open", () => { this.retries = 0; this.alive(); });
    source.addEventListener("unavailable", (message) => this.say(unavailable(message)));
    source.addEventListener("error", () => this.failed(source));
    this.alive();
  }

  shown(message) {
    this.alive();
    const event = JSON.parse(message.data);
    const seq = Number(event.seq ?? message.lastEventId);
    if (!(seq > this.last)) return;
    this.last = seq;
    this.say("");
    append(this.log, this.list, event);
    this.handlers.onEvent(event);
  }

  // Any sign of life (an event, a heartbeat) puts off the reconnection a silent stream gets.
  alive() {
    clearTimeout(this.stall);
    if (!this.ended) this.stall = setTimeout(() => this.restart("the stream went quiet"), STALL_MS);
  }

  failed(source) {
    if (this.ended || source !== this.source) return;
    if (source.readyState === EventSource.CLOSED) this.restart("the connection failed");
    else this.say("Connection lost: reconnecting…");
  }

  restart(why) {
    if (this.ended) return;
    this.source.close();
    clearTimeout(this.stall);
    const wait = RETRY_MS[Math.min(this.retries++, RETRY_MS.length - 1)];
    this.say(`${why[0].toUpperCase()}${why.slice(1)}: reconnecting in ${wait / 1000} s…`);
    setTimeout(() => this.connect(), wait);
  }

  end() {
    this.ended = true;
    clearTimeout(this.stall);
    this.source.close();
    // A research only the library knows (Temporal forgot it) has no events left to show.
    this.say(this.last ? "" : "No progress events are kept for this research any more.");
    this.handlers.onEnd();
  }

  say(text) {
    this.status.textContent = text;
    this.status.hidden = !text;
  }
}

export function openLog(id, log, status, handlers) {
  const live = new LiveLog(id, log, status, handlers);
  live.connect();
  return live;
}

function unavailable(message) {
  const data = JSON.parse(message.data || "{}");
  return data.reason || "The research is not answering: still trying…";
}

// A stage's name as words ("awaiting plan review"), as the page's stage line says it.
function shownText(event) {
  if (event.kind !== "stage") return event.text;
  return event.text.replace(/^[a-z_]+/, (name) => name.replace(/_/g, " "));
}

function append(log, list, event) {
  const at = new Date(event.at);
  const item = element("li", { "data-seq": String(event.seq), class: `event kind-${event.kind}` });
  // The same clock as the events the page was served with (UTC, 24 hours: "22:26:24"), so one
  // log never mixes "22:26:24" and "10:26:24 PM".
  const time = element("time", { datetime: event.at }, isNaN(at) ? "" : at.toISOString().slice(11, 19));
  item.append(time, " ", element("span", { class: "kind" }, event.kind.replace(/_/g, " ")), " ",
    element("span", { class: "text" }, shownText(event)));
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
  list.append(item);
  if (atBottom) log.scrollTop = log.scrollHeight;
}
