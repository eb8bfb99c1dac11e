// The fixtures stand in for the daemon, so they must say exactly what
// docs/status-api.md says it answers: same keys, no extras, no omissions.
// Key lists are transcribed from the doc, and each is checked to appear in
// it, so the doc changing underneath the plugin fails here first.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
	isDecision,
	isNoteInfo,
	isProposal,
	isProposalList,
	isRerunResult,
	isSettleResult,
	isStatus,
	isUndoResult,
} from "../src/api/validate";
import { fixture } from "./fake-daemon";

const DOC = readFileSync(join(__dirname, "..", "..", "..", "docs", "status-api.md"), "utf8");

const KEYS = {
	status: ["api_version", "version", "vault", "pid", "started_at", "state", "model", "queue", "current", "last_run", "failed", "unreadable", "backlog", "proposals"],
	model: ["provider", "host", "model", "reachable"],
	queue: ["path", "settles_in_seconds", "state"],
	current: ["unit", "paths", "stage", "tokens", "seconds"],
	last_run: ["id", "started_at", "finished_at", "counts", "changes"],
	counts: ["scanned", "changed", "extracted", "integrated", "skipped", "failed", "checkpointed", "held"],
	change: ["target", "action", "note"],
	failed: ["unit", "paths", "error", "attempts", "failed_at", "kind", "parked", "codes"],
	unreadable: ["path", "since", "reason"],
	backlog: ["waiting", "queued", "waiting_estimate", "eta_seconds", "how"],
	estimate: ["notes", "units", "seconds", "provider", "seconds_per_unit", "measured"],
	digest: ["path", "kind", "name", "description", "sources", "related", "backlinks", "decisions"],
	source_ref: ["path", "sentence"],
	node_ref: ["path", "name", "description"],
	source: ["path", "kind", "state", "settles_in_seconds", "error", "fed", "decisions"],
	other: ["path", "kind"],
	decision: ["id", "at", "run_id", "unit", "action", "target", "note", "diff", "undone", "undoable"],
	decision_unit: ["name", "bucket", "summary", "paths"],
	rerun: ["queued"],
	undo: ["undone", "decision"],
	error: ["error"],
	proposal_list: ["proposals", "open"],
	proposal: ["id", "at", "state", "stale", "action", "target", "reason", "why", "unit", "diff", "integrator", "run_id", "decided_at", "journal_id"],
	settle: ["proposal", "journal_id", "stale", "message"],
};

const STATES = ["unseen", "queued", "settling", "integrated", "failed"];
const ACTIONS = ["CREATE", "CORROBORATE", "REFINE", "CORRECT", "UNDO", "SKIP", "FAILED"];

function keys(o: object, expected: string[], where: string): void {
	assert.deepEqual(Object.keys(o).sort(), [...expected].sort(), where);
}

function decision(d: Record<string, any>, where: string): void {
	keys(d, KEYS.decision, where);
	keys(d.unit, KEYS.decision_unit, `${where}.unit`);
	assert.ok(ACTIONS.includes(d.action), `${where}.action ${d.action}`);
	assert.ok(isDecision(d), `${where} passes the client's check`);
}

test("every documented key is in docs/status-api.md", () => {
	for (const [group, list] of Object.entries(KEYS)) {
		for (const k of list) assert.ok(DOC.includes(`"${k}"`), `${group}.${k} not in the doc`);
	}
	for (const s of [...STATES, ...ACTIONS]) assert.ok(DOC.includes(s), `${s} not in the doc`);
});

test("status fixtures have exactly the documented keys", () => {
	for (const name of ["status.json", "status-idle.json"]) {
		const s = fixture(name);
		keys(s, KEYS.status, name);
		assert.equal(s.api_version, 1);
		keys(s.model, KEYS.model, `${name} model`);
		for (const q of s.queue) keys(q, KEYS.queue, `${name} queue`);
		for (const f of s.failed) keys(f, KEYS.failed, `${name} failed`);
		for (const u of s.unreadable ?? []) keys(u, KEYS.unreadable, `${name} unreadable`);
		keys(s.backlog, KEYS.backlog, `${name} backlog`);
		keys(s.backlog.waiting_estimate, KEYS.estimate, `${name} backlog estimate`);
		if (s.current) keys(s.current, KEYS.current, `${name} current`);
		if (s.last_run) {
			keys(s.last_run, KEYS.last_run, `${name} last_run`);
			keys(s.last_run.counts, KEYS.counts, `${name} counts`);
			for (const c of s.last_run.changes) keys(c, KEYS.change, `${name} change`);
		}
		assert.ok(isStatus(s), `${name} passes the client's check`);
	}
	assert.equal(fixture("status-idle.json").current, null, "current may be null");
	assert.equal(fixture("status-idle.json").last_run, null, "last_run may be null");
});

test("note fixtures have exactly the documented keys for their kind", () => {
	const digest = fixture("note-digest.json");
	keys(digest, KEYS.digest, "digest");
	for (const s of digest.sources) keys(s, KEYS.source_ref, "digest source");
	for (const r of [...digest.related, ...digest.backlinks]) keys(r, KEYS.node_ref, "digest node ref");
	digest.decisions.forEach((d: Record<string, unknown>, i: number) => decision(d, `digest decision ${i}`));
	assert.ok(isNoteInfo(digest));

	for (const name of ["note-source-failed.json", "note-source-settling.json", "note-source-unseen.json"]) {
		const s = fixture(name);
		keys(s, KEYS.source, name);
		assert.ok(STATES.includes(s.state), `${name} state`);
		for (const f of s.fed) keys(f, KEYS.node_ref, `${name} fed`);
		s.decisions.forEach((d: Record<string, unknown>, i: number) => decision(d, `${name} decision ${i}`));
		assert.ok(isNoteInfo(s), name);
	}
	keys(fixture("note-other.json"), KEYS.other, "other");
	assert.ok(isNoteInfo(fixture("note-other.json")));
});

test("POST answers and errors have exactly the documented keys", () => {
	keys(fixture("rerun.json"), KEYS.rerun, "rerun");
	assert.ok(isRerunResult(fixture("rerun.json")));
	const undo = fixture("undo.json");
	keys(undo, KEYS.undo, "undo");
	decision(undo.decision, "undo decision");
	assert.equal(undo.decision.action, "UNDO");
	assert.ok(isUndoResult(undo));
	keys(fixture("error-undo-409.json"), KEYS.error, "409");
	keys(fixture("error-401.json"), KEYS.error, "401");
});

test("proposal answers have exactly the documented keys", () => {
	const list = fixture("proposals.json");
	keys(list, KEYS.proposal_list, "proposals");
	for (const p of list.proposals) {
		keys(p, KEYS.proposal, `proposal ${p.id}`);
		keys(p.unit, KEYS.decision_unit, `proposal ${p.id} unit`);
		assert.ok(isProposal(p));
	}
	assert.ok(isProposalList(list));
	for (const name of ["settle-approved.json", "settle-stale.json"]) {
		const settled = fixture(name);
		keys(settled, KEYS.settle, name);
		keys(settled.proposal, KEYS.proposal, `${name} proposal`);
		assert.ok(isSettleResult(settled), name);
	}
	assert.equal(fixture("settle-stale.json").proposal.state, "stale");
	assert.equal(fixture("settle-stale.json").journal_id, null);
});

