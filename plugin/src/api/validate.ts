// Shape checks for daemon answers. They are deliberately shallow: enough that
// the renderers can index every field they touch without crashing, so a
// daemon that drifts from the contract shows "bad response" instead of a
// blank or broken panel.

import type {
	Decision,
	NodeRef,
	NoteInfo,
	Proposal,
	ProposalList,
	RedoResult,
	RerunResult,
	SettleResult,
	Status,
	UndoNeed,
	UndoResult,
} from "./types";

type Obj = Record<string, unknown>;

function isObj(x: unknown): x is Obj {
	return typeof x === "object" && x !== null && !Array.isArray(x);
}

function isStr(x: unknown): x is string {
	return typeof x === "string";
}

function isNum(x: unknown): x is number {
	return typeof x === "number" && Number.isFinite(x);
}

function arrayOf(x: unknown, item: (v: unknown) => boolean): boolean {
	return Array.isArray(x) && x.every(item);
}

function isNodeRef(x: unknown): x is NodeRef {
	return isObj(x) && isStr(x.path) && isStr(x.name) && isStr(x.description);
}

export function isDecision(x: unknown): x is Decision {
	return (
		isObj(x) &&
		isNum(x.id) &&
		isStr(x.action) &&
		isStr(x.target) &&
		isStr(x.diff) &&
		typeof x.undone === "boolean" &&
		typeof x.undoable === "boolean" &&
		isObj(x.unit) &&
		isStr(x.unit.name)
	);
}

/** Checks everything but api_version, which the client judges separately. */
export function isStatus(x: unknown): x is Status {
	return (
		isObj(x) &&
		isStr(x.state) &&
		arrayOf(x.queue, (q) => isObj(q) && isStr(q.path)) &&
		arrayOf(x.failed, (f) => isObj(f) && isStr(f.unit) && isStr(f.error)) &&
		// absent from daemons older than the field: still api_version 1
		(x.unreadable === undefined || arrayOf(x.unreadable, (u) => isObj(u) && isStr(u.path) && isStr(u.reason))) &&
		(x.backlog === undefined ||
			(isObj(x.backlog) && isNum(x.backlog.waiting) && isNum(x.backlog.queued) && isNum(x.backlog.eta_seconds)))
	);
}

export function isNoteInfo(x: unknown): x is NoteInfo {
	if (!isObj(x) || !isStr(x.path)) return false;
	switch (x.kind) {
		case "other":
			return true;
		case "digest":
			return (
				isStr(x.name) &&
				isStr(x.description) &&
				arrayOf(x.sources, (s) => isObj(s) && isStr(s.path) && isStr(s.sentence)) &&
				arrayOf(x.related, isNodeRef) &&
				arrayOf(x.backlinks, isNodeRef) &&
				arrayOf(x.decisions, isDecision)
			);
		case "source":
			return (
				isStr(x.state) &&
				(x.settles_in_seconds === null || isNum(x.settles_in_seconds)) &&
				(x.error === null || isStr(x.error)) &&
				arrayOf(x.fed, isNodeRef) &&
				arrayOf(x.decisions, isDecision)
			);
		default:
			return false;
	}
}

export function isRerunResult(x: unknown): x is RerunResult {
	return isObj(x) && arrayOf(x.queued, isStr);
}

export function isUndoResult(x: unknown): x is UndoResult {
	return isObj(x) && isNum(x.undone) && isDecision(x.decision);
}

export function isRedoResult(x: unknown): x is RedoResult {
	return isObj(x) && isNum(x.redone) && isDecision(x.decision);
}

export function isProposal(x: unknown): x is Proposal {
	return (
		isObj(x) &&
		isNum(x.id) &&
		isStr(x.state) &&
		typeof x.stale === "boolean" &&
		isStr(x.action) &&
		isStr(x.target) &&
		isStr(x.reason) &&
		isStr(x.why) &&
		isStr(x.diff) &&
		isObj(x.unit) &&
		isStr(x.unit.name) &&
		arrayOf(x.unit.paths, isStr)
	);
}

export function isProposalList(x: unknown): x is ProposalList {
	return isObj(x) && isNum(x.open) && arrayOf(x.proposals, isProposal);
}

export function isSettleResult(x: unknown): x is SettleResult {
	return isObj(x) && isProposal(x.proposal) && typeof x.stale === "boolean" && isStr(x.message);
}

/** The `needs` of a 409 undo refusal (the decisions --cascade would revert too). */
export function needsOf(x: unknown): UndoNeed[] | undefined {
	if (!isObj(x) || !Array.isArray(x.needs)) return undefined;
	const ok = x.needs.every(
		(n) => isObj(n) && isNum(n.id) && isStr(n.action) && isStr(n.path) && isStr(n.why),
	);
	return ok ? (x.needs as UndoNeed[]) : undefined;
}

/** The `error` field of a documented error body, if there is one. */
export function errorMessage(x: unknown): string | null {
	return isObj(x) && isStr(x.error) ? x.error : null;
}

/** The raw api_version field of a body (undefined when absent). */
export function apiVersionOf(x: unknown): unknown {
	return isObj(x) ? x.api_version : undefined;
}
