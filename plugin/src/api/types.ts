// Shapes of the daemon's status API, transcribed from docs/status-api.md.
// Keep this file in step with that document: it is the only place the
// plugin spells out the contract.

/** The only api_version this plugin speaks. */
export const API_VERSION = 1;

export interface QueueItem {
	path: string;
	settles_in_seconds: number;
	state: "settling" | "ready";
}

export interface FailedUnit {
	unit: string;
	paths: string[];
	error: string;
	attempts: number;
	failed_at: string;
	/** "unit", or "note" when the note's extraction failed. Absent from older daemons. */
	kind?: "unit" | "note";
	/** Tried as often as auto_dream.park_after allows: waits for Re-run. */
	parked?: boolean;
	/** Guard refusal codes seen while it failed. */
	codes?: string[];
}

/** A daily/resource note the daemon could not read; it waits, unchecked, until fixed. */
export interface UnreadableNote {
	path: string;
	since: string;
	reason: string;
}

/** What integrating some notes would take at the integrator's pace. */
export interface BacklogEstimate {
	notes: number;
	units: number;
	seconds: number;
	provider: string;
	seconds_per_unit: number;
	/** false: an assumed pace, nothing measured in this vault yet */
	measured: boolean;
}

/** Older notes a first start held back: waiting (not asked for) or queued (worked). */
export interface Backlog {
	waiting: number;
	queued: number;
	waiting_estimate: BacklogEstimate;
	eta_seconds: number;
	how: string;
}

export interface Status {
	api_version: number;
	version: string;
	vault: string;
	pid: number;
	started_at: string;
	state: "idle" | "working" | "waiting-for-model" | "stopping";
	model: { provider: string; host: string; model: string; reachable: boolean };
	queue: QueueItem[];
	/** tokens/seconds: the model's answer so far (absent from older daemons). */
	current: {
		unit: string;
		paths: string[];
		stage?: "extract" | "integrate";
		tokens?: number;
		seconds?: number;
	} | null;
	last_run: {
		id: number;
		started_at: string;
		finished_at: string;
		counts: Record<string, number>;
		changes: { target: string; action: string; note: string }[];
	} | null;
	failed: FailedUnit[];
	/** Absent from daemons that predate it. */
	unreadable?: UnreadableNote[];
	/** Absent from daemons that predate it. */
	backlog?: Backlog;
	/** Decisions held for review (review.mode). Absent from daemons that predate it. */
	proposals?: number;
}

export type DecisionAction =
	| "CREATE"
	| "CORROBORATE"
	| "REFINE"
	| "CORRECT"
	| "UNDO"
	| "REDO"
	| "RELINK"
	| "SKIP"
	| "FAILED";

export interface Decision {
	id: number;
	at: string;
	run_id: number;
	unit: { name: string; bucket: string; summary: string; paths: string[] };
	action: DecisionAction;
	target: string;
	note: string;
	diff: string;
	undone: boolean;
	undoable: boolean;
	/** Undone, and can be brought back (POST /redo). Absent from older daemons. */
	redoable?: boolean;
}

/** A reference to another digest node, as /note lists them. */
export interface NodeRef {
	path: string;
	name: string;
	description: string;
}

export interface DigestNote {
	path: string;
	kind: "digest";
	name: string;
	description: string;
	sources: { path: string; sentence: string }[];
	related: NodeRef[];
	backlinks: NodeRef[];
	decisions: Decision[];
}

export type SourceState = "unseen" | "queued" | "settling" | "integrated" | "failed";

export interface SourceNote {
	path: string;
	kind: "source";
	state: SourceState;
	settles_in_seconds: number | null;
	error: string | null;
	fed: NodeRef[];
	decisions: Decision[];
}

export interface OtherNote {
	path: string;
	kind: "other";
}

export type NoteInfo = DigestNote | SourceNote | OtherNote;

export interface RerunResult {
	queued: string[];
}

export interface UndoResult {
	undone: number;
	decision: Decision;
	/** Every journal row of the undo group (a cascade has several). */
	ids?: number[];
}

export interface RedoResult {
	redone: number;
	decision: Decision;
	ids?: number[];
}

/** A later decision an undo would also have to revert (409 `needs`, see --cascade). */
export interface UndoNeed {
	id: number;
	action: string;
	path: string;
	why: string;
}

export type ProposalState = "open" | "approved" | "rejected" | "created" | "stale";

/** A decision held for the owner's review instead of written (GET /proposals). */
export interface Proposal {
	id: number;
	at: string;
	state: ProposalState;
	/** Open, but its node changed since: approving has the next run decide it again. */
	stale: boolean;
	action: string;
	target: string;
	/** Why it waits (vaultlink's rule). */
	reason: string;
	/** Why vaultlink would do it (the integrator's note). */
	why: string;
	unit: { name: string; bucket: string; summary: string; paths: string[] };
	diff: string;
	integrator: string;
	run_id: number | null;
	decided_at: string | null;
	journal_id: number | null;
}

export interface ProposalList {
	proposals: Proposal[];
	open: number;
}

export type ProposalVerb = "approve" | "reject" | "new";

/** What POST /proposals/{id}/approve|reject|new answers. */
export interface SettleResult {
	proposal: Proposal;
	journal_id: number | null;
	/** The node changed since: nothing written, the unit is decided again. */
	stale: boolean;
	message: string;
}
