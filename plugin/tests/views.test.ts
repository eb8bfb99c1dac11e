import { container } from "./setup-dom";
import { test } from "node:test";
import assert from "node:assert/strict";
import type { PanelActions } from "../src/views/actions";
import type { Decision, DigestNote, SourceNote } from "../src/api/types";
import { renderDigest } from "../src/views/render-digest";
import { renderSource } from "../src/views/render-source";
import { diffLineKind, renderDiff } from "../src/views/render-decisions";
import { renderNoteResult } from "../src/views/render-note";
import { NO_NOTE, NOT_TOUCHED, renderEmpty, renderFailure, renderLoading } from "../src/views/render-state";
import { fixture } from "./fake-daemon";

/** Actions that record what the panel asked for. */
function recorder() {
	const calls: string[] = [];
	const actions: PanelActions = {
		openNote: (p) => calls.push(`open ${p}`),
		undo: (d: Decision) => calls.push(`undo ${d.id}`),
		redo: (d: Decision) => calls.push(`redo ${d.id}`),
		rerun: (p) => calls.push(`rerun ${p}`),
		refresh: () => calls.push("refresh"),
	};
	return { calls, actions };
}

const texts = (root: HTMLElement, sel: string) =>
	[...root.querySelectorAll(sel)].map((e) => (e.textContent ?? "").trim());

function one(root: HTMLElement, sel: string): HTMLElement {
	const el = root.querySelector(sel);
	assert.ok(el, `expected ${sel}`);
	return el as HTMLElement;
}

test("digest: title, description, each source with the sentence that cites it", () => {
	const el = container();
	const note = fixture<DigestNote>("note-digest.json");
	renderDigest(el, note, recorder().actions);
	assert.equal(one(el, ".vaultlink-title").textContent, "Hybrid search");
	assert.equal(one(el, ".vaultlink-path").textContent, "digest/wiki/hybrid-search.md");
	assert.match(one(el, ".vaultlink-header").textContent ?? "", /blends BM25 keyword scores/);
	const sources = [...el.querySelectorAll(".vaultlink-source")];
	assert.equal(sources.length, 2);
	assert.equal(sources[0].querySelector("a")?.textContent, "daily/2026-06-20.md");
	assert.equal(
		sources[0].querySelector(".vaultlink-sentence")?.textContent,
		"The ranking rule was decided in [[daily/2026-06-20.md]].",
	);
	assert.equal(sources[1].querySelector("a")?.getAttribute("data-href"), "resources/bm25-notes.md");
	assert.deepEqual(texts(el, ".vaultlink-sources .vaultlink-count"), ["2"]);
});

test("digest: related nodes and backlinks are links that open the note", () => {
	const el = container();
	const { calls, actions } = recorder();
	renderDigest(el, fixture<DigestNote>("note-digest.json"), actions);
	assert.deepEqual(texts(el, ".vaultlink-related a"), ["Rebuild the index"]);
	assert.deepEqual(texts(el, ".vaultlink-related .vaultlink-desc"), [
		"How to rebuild both indexes after a schema change.",
	]);
	assert.deepEqual(texts(el, ".vaultlink-backlinks a"), ["Search overview"]);
	one(el, ".vaultlink-related a").click();
	one(el, ".vaultlink-sources a").click();
	assert.deepEqual(calls, ["open digest/procedure/rebuild-index.md", "open daily/2026-06-20.md"]);
});

test("digest: decisions show action, note, diff lines styled, and Undo only where undoable", () => {
	const el = container();
	const { calls, actions } = recorder();
	renderDigest(el, fixture<DigestNote>("note-digest.json"), actions);
	const cards = [...el.querySelectorAll(".vaultlink-decision")] as HTMLElement[];
	assert.equal(cards.length, 2);
	assert.equal(cards[0].getAttribute("data-decision-id"), "31");
	assert.equal(one(cards[0], ".vaultlink-action").textContent, "REFINE");
	assert.ok(one(cards[0], ".vaultlink-action").classList.contains("vaultlink-action-refine"));
	assert.equal(one(cards[0], ".vaultlink-decision-note").textContent, "added the tie-break rule");
	assert.equal(one(cards[0], ".vaultlink-time").textContent, "2026-06-21 08:03");
	assert.equal(one(cards[0], ".vaultlink-unit").textContent, "unit hybrid-search (wiki) · run 17");

	const pre = one(cards[0], "pre.vaultlink-diff");
	assert.deepEqual(texts(pre, ".vaultlink-diff-add"), [
		"+Ties are broken by recency: the newer note ranks first.",
		"+The ranking rule was decided in [[daily/2026-06-20.md]].",
	]);
	assert.deepEqual(texts(pre, ".vaultlink-diff-del"), ["-Ties are broken arbitrarily."]);
	assert.equal(pre.querySelectorAll(".vaultlink-diff-meta").length, 2, "---/+++ headers are not +/- lines");
	assert.equal(pre.querySelectorAll(".vaultlink-diff-line").length, 7, "trailing newline adds no empty line");

	assert.deepEqual(texts(cards[0], "button"), ["Undo"]);
	assert.equal(cards[1].querySelectorAll("button").length, 0, "CREATE #12 is not undoable");
	const undo = one(cards[0], "button.vaultlink-undo") as HTMLButtonElement;
	undo.click();
	undo.click();
	assert.deepEqual(calls, ["undo 31"], "a second click while the undo is in flight sends nothing");
	assert.equal(undo.disabled, true);
});

test("diff line classes: headers before +/-, hunks, context", () => {
	assert.equal(diffLineKind("+++ b/x.md"), "meta");
	assert.equal(diffLineKind("--- a/x.md"), "meta");
	assert.equal(diffLineKind("@@ -1 +1 @@"), "hunk");
	assert.equal(diffLineKind("+new"), "add");
	assert.equal(diffLineKind("-old"), "del");
	assert.equal(diffLineKind(" same"), "context");
	const el = container();
	renderDiff(el, "a\n\n+b");
	assert.deepEqual(texts(el, ".vaultlink-diff-line"), ["a", "", "+b"], "blank context lines are kept");
});

test("source failed: state, error, Re-run posts the note's path; fed nodes open", () => {
	const el = container();
	const { calls, actions } = recorder();
	renderSource(el, fixture<SourceNote>("note-source-failed.json"), actions);
	assert.equal(one(el, ".vaultlink-title").textContent, "2026-06-19");
	assert.equal(one(el, ".vaultlink-path").textContent, "daily/2026-06-19.md");
	const state = one(el, ".vaultlink-state");
	assert.ok(state.classList.contains("vaultlink-state-failed"));
	assert.equal(one(state, ".vaultlink-state-text").textContent, "failed");
	assert.equal(one(state, ".vaultlink-error").textContent, "model timed out after 120 s");
	one(state, "button.vaultlink-rerun").click();
	assert.deepEqual(texts(el, ".vaultlink-fed a"), ["Rebuild the index"]);
	one(el, ".vaultlink-fed a").click();
	assert.deepEqual(calls, ["rerun daily/2026-06-19.md", "open digest/procedure/rebuild-index.md"]);
});

test("source failed: decisions list FAILED without undo and the undone one marked", () => {
	const el = container();
	renderSource(el, fixture<SourceNote>("note-source-failed.json"), recorder().actions);
	assert.deepEqual(texts(el, ".vaultlink-action"), ["FAILED", "CORROBORATE"]);
	assert.equal(el.querySelectorAll(".vaultlink-decision button").length, 0);
	const undone = one(el, '.vaultlink-decision[data-decision-id="27"]');
	assert.ok(undone.classList.contains("is-undone"));
	assert.equal(one(undone, ".vaultlink-badge").textContent, "undone");
	assert.equal(one(el, '.vaultlink-decision[data-decision-id="29"]').querySelector("pre"), null, "empty diff: no <pre>");
});

test("source settling: seconds left, rounded up; no Re-run; empty lists say so", () => {
	const el = container();
	renderSource(el, fixture<SourceNote>("note-source-settling.json"), recorder().actions);
	assert.equal(one(el, ".vaultlink-state-text").textContent, "settling: integrates in 42 s");
	assert.equal(el.querySelectorAll("button").length, 0);
	assert.deepEqual(texts(el, ".vaultlink-fed .vaultlink-muted"), ["No digest node cites this note yet."]);
	assert.deepEqual(texts(el, ".vaultlink-decisions .vaultlink-muted"), ["No decisions recorded."]);
});

test("source queued and integrated read as such", () => {
	const el = container();
	const base = fixture<SourceNote>("note-source-settling.json");
	renderSource(el, { ...base, state: "queued", settles_in_seconds: null }, recorder().actions);
	assert.equal(one(el, ".vaultlink-state-text").textContent, "queued for the next run");
	renderSource(el, { ...base, state: "integrated", settles_in_seconds: null }, recorder().actions);
	assert.equal(one(el, ".vaultlink-state-text").textContent, "integrated");
	assert.equal(el.querySelectorAll(".vaultlink-state").length, 1, "re-render replaces, not appends");
});

test("note result: digest and source dispatch to their renderers", () => {
	const el = container();
	renderNoteResult(el, { kind: "ok", data: fixture("note-digest.json") }, recorder().actions);
	assert.ok(el.querySelector(".vaultlink-digest"));
	renderNoteResult(el, { kind: "ok", data: fixture("note-source-failed.json") }, recorder().actions);
	assert.ok(el.querySelector(".vaultlink-source-note"));
	assert.equal(el.querySelector(".vaultlink-digest"), null);
	// Settling with nothing fed yet is still news: the countdown must show.
	renderNoteResult(el, { kind: "ok", data: fixture("note-source-settling.json") }, recorder().actions);
	assert.equal(one(el, ".vaultlink-state-text").textContent, "settling: integrates in 42 s");
});

test("empty states: other note, unseen source and 404 all say vaultlink has not touched it", () => {
	for (const result of [
		{ kind: "ok", data: fixture("note-other.json") },
		{ kind: "ok", data: fixture("note-source-unseen.json") },
		{ kind: "rejected", status: 404, message: "no such note" },
	] as const) {
		const el = container();
		renderNoteResult(el, result, recorder().actions);
		assert.equal(one(el, ".vaultlink-empty").textContent, NOT_TOUCHED, JSON.stringify(result));
	}
	const el = container();
	renderEmpty(el, NO_NOTE);
	assert.equal(el.textContent, "No note open.");
	renderLoading(el);
	assert.equal(el.textContent, "Loading…");
});

test("daemon down: title, message and the `vaultlink watch` hint as code; Retry refreshes", () => {
	const el = container();
	const { calls, actions } = recorder();
	const message = "Cannot reach the vaultlink daemon at http://127.0.0.1:8765 (net::ERR_CONNECTION_REFUSED).";
	renderNoteResult(el, { kind: "down", message }, actions);
	assert.ok(el.querySelector(".vaultlink-failure-down"));
	assert.equal(one(el, ".vaultlink-failure-title").textContent, "vaultlink daemon not running");
	assert.equal(one(el, ".vaultlink-failure-message").textContent, message);
	assert.equal(one(el, ".vaultlink-hint").textContent, "Start it with vaultlink watch in this vault.");
	assert.equal(one(el, ".vaultlink-hint code").textContent, "vaultlink watch");
	one(el, "button.vaultlink-retry").click();
	assert.deepEqual(calls, ["refresh"]);
});

test("wrong token and version mismatch each get their own title and the client's message", () => {
	const el = container();
	renderFailure(el, { kind: "unauthorized", message: "The daemon refused the token." });
	assert.equal(one(el, ".vaultlink-failure-title").textContent, "Wrong token");
	assert.match(one(el, ".vaultlink-hint").textContent ?? "", /\.vaultlink\/token/);
	assert.equal(el.querySelector("button"), null, "no Retry without a handler");

	renderFailure(el, { kind: "version-mismatch", message: "The daemon speaks api_version 2; this plugin speaks 1." });
	assert.equal(one(el, ".vaultlink-failure-title").textContent, "Daemon and plugin versions do not match");
	assert.match(one(el, ".vaultlink-failure-message").textContent ?? "", /api_version 2/);

	renderFailure(el, { kind: "bad-response", message: "not JSON" });
	assert.equal(one(el, ".vaultlink-failure-title").textContent, "Unreadable answer from the daemon");
	assert.equal(el.querySelectorAll(".vaultlink-failure").length, 1);
});

test("decisions: an undone decision that can be brought back shows Redo", () => {
	const el = container();
	const { calls, actions } = recorder();
	const note = fixture<DigestNote>("note-digest.json");
	const undone = { ...note.decisions[0], undone: true, undoable: false, redoable: true };
	renderDigest(el, { ...note, decisions: [undone] }, actions);
	assert.equal(el.querySelector("button.vaultlink-undo"), null);
	one(el, "button.vaultlink-redo").click();
	assert.deepEqual(calls, [`redo ${undone.id}`]);
});
