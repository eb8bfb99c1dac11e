import { container } from "./setup-dom";
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ClientResult } from "../src/api/result";
import type { Status } from "../src/api/types";
import { isStatus } from "../src/api/validate";
import { StatusBarItem, duration, statusText, statusTooltip } from "../src/status-bar";
import { fixture } from "./fake-daemon";

const ok = (data: Status): ClientResult<Status> => ({ kind: "ok", data });

test("status text: queued, failed, unreadable and to-review counts, and the backlog with its ETA", () => {
	assert.equal(
		statusText(ok(fixture("status.json"))),
		"vaultlink: 3 queued, 2 failed (1 parked), 1 unreadable, 2 to review, backlog 120 (5 h 12 min)",
	);
	const onlyFailed = { ...fixture<Status>("status.json"), queue: [], unreadable: [], backlog: undefined, proposals: 0 };
	assert.equal(statusText(ok(onlyFailed)), "vaultlink: 2 failed (1 parked)");
	// a daemon older than the fields sends none: still a status, not a bad response
	const { unreadable: _, backlog: __, proposals: ___, ...older } = fixture<Status>("status.json");
	assert.ok(isStatus(older));
	assert.equal(statusText(ok(older)), "vaultlink: 3 queued, 2 failed (1 parked)");
	assert.doesNotMatch(statusTooltip(ok(older)), /cannot read|backlog/);
	// waiting notes alone are a choice left to the user, not work: the idle line stays
	const waiting = fixture<Status>("status-idle.json");
	waiting.backlog = { ...waiting.backlog!, waiting: 40 };
	assert.equal(statusText(ok(waiting)), "vaultlink: idle");
	assert.ok(!isStatus({ ...waiting, backlog: { waiting: "40" } }));
});

test("tooltip: the backlog, queued with its ETA and waiting with the command that takes it", () => {
	const tip = statusTooltip(ok(fixture("status.json")));
	assert.match(tip, /backlog: 120 older notes queued, about 5 h 12 min to go/);
	assert.match(
		tip,
		/backlog: 9,812 older notes wait, not integrated \(about 25,511 units, 18 days\); vaultlink backfill --all/,
	);
	assert.equal(duration(45), "45 s");
	assert.equal(duration(720), "12 min");
});

test("status text: idle, or the daemon's state when nothing is waiting", () => {
	const idle = fixture<Status>("status-idle.json");
	assert.equal(statusText(ok(idle)), "vaultlink: idle");
	assert.equal(statusText(ok({ ...idle, state: "waiting-for-model" })), "vaultlink: waiting-for-model");
});

test("status text: each failure", () => {
	assert.equal(statusText({ kind: "down", message: "x" }), "vaultlink: daemon not running");
	assert.equal(statusText({ kind: "unauthorized", message: "x" }), "vaultlink: wrong token");
	assert.equal(statusText({ kind: "version-mismatch", message: "x" }), "vaultlink: version mismatch");
	assert.equal(statusText({ kind: "bad-response", message: "x" }), "vaultlink: error");
});

test("tooltip: current unit, failures and an unreachable model", () => {
	const tip = statusTooltip(ok(fixture("status.json")));
	assert.match(tip, /^vaultlink 0\.1\.0: working/);
	assert.match(tip, /working on rebuild-index \(37 tokens, 52 s\)/);
	assert.match(tip, /failed sync-conflicts, retried next run \(tried 2\): model timed out after 120 s/);
	assert.match(tip, /failed extract of daily\/2026-06-18\.md, parked, waits for Re-run: /);
	assert.match(tip, /cannot read daily\/2026-06-15\.md: its YAML frontmatter does not parse/);
	assert.doesNotMatch(tip, /unreachable/);
	const offline = statusTooltip(ok(fixture("status-idle.json")));
	assert.match(offline, /offline integrator \(no model\)/);
	assert.doesNotMatch(offline, /unreachable/);
	const down = { ...fixture<Status>("status.json") };
	down.model = { ...down.model, reachable: false };
	assert.match(statusTooltip(ok(down)), /model qwen3:4b at http:\/\/127\.0\.0\.1:11434 unreachable/);
	assert.equal(statusTooltip({ kind: "down", message: "Cannot reach it." }), "Cannot reach it.");
});

test("status bar item: poll writes text and tooltip; click opens the panel", async () => {
	const el = container();
	let opened = 0;
	let answer: ClientResult<Status> = ok(fixture("status.json"));
	const item = new StatusBarItem(el, async () => answer, () => opened++);
	assert.ok(el.classList.contains("mod-clickable"));
	await item.poll();
	assert.equal(el.textContent, "vaultlink: 3 queued, 2 failed (1 parked), 1 unreadable, 2 to review, backlog 120 (5 h 12 min)");
	assert.match(el.getAttribute("aria-label") ?? "", /sync-conflicts/);
	answer = { kind: "down", message: "gone" };
	await item.poll();
	assert.equal(el.textContent, "vaultlink: daemon not running");
	el.click();
	assert.equal(opened, 1);
});
