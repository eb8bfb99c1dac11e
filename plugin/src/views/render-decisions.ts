// Decisions: what the daemon did to a digest node and why, with the diff it
// wrote and a way to take it back.

import type { PanelActions } from "./actions";
import type { Decision } from "../api/types";
import { button, muted, noteLink, noteTitle, section, shortTime } from "./dom-util";

export type DiffLineKind = "add" | "del" | "hunk" | "meta" | "context";

/** Classify one unified-diff line. File headers are checked before +/- so
 * "+++ b/x" is not shown as an added line. */
export function diffLineKind(line: string): DiffLineKind {
	if (line.startsWith("+++ ") || line.startsWith("--- ")) return "meta";
	if (line.startsWith("@@")) return "hunk";
	if (line.startsWith("+")) return "add";
	if (line.startsWith("-")) return "del";
	return "context";
}

/** The diff in a <pre>, one block span per line so whole lines can be tinted. */
export function renderDiff(parent: HTMLElement, diff: string): HTMLPreElement {
	const pre = parent.createEl("pre", { cls: "vaultlink-diff" });
	const lines = diff.replace(/\n$/, "").split("\n");
	for (const line of lines) {
		pre.createSpan({ cls: `vaultlink-diff-line vaultlink-diff-${diffLineKind(line)}`, text: line });
	}
	return pre;
}

export function renderDecision(
	parent: HTMLElement,
	d: Decision,
	actions: PanelActions,
): HTMLElement {
	const card = parent.createDiv({
		cls: ["vaultlink-decision", d.undone ? "is-undone" : ""].filter(Boolean),
		attr: { "data-decision-id": d.id },
	});
	const head = card.createDiv({ cls: "vaultlink-decision-head" });
	head.createSpan({
		cls: ["vaultlink-action", `vaultlink-action-${d.action.toLowerCase()}`],
		text: d.action,
	});
	noteLink(head, d.target, noteTitle(d.target), actions);
	head.createSpan({ cls: "vaultlink-time", text: shortTime(d.at) });

	if (d.note) card.createDiv({ cls: "vaultlink-decision-note", text: d.note });
	const unit = card.createDiv({ cls: "vaultlink-unit" });
	unit.setText(`unit ${d.unit.name}${d.unit.bucket ? ` (${d.unit.bucket})` : ""} · run ${d.run_id}`);

	if (d.diff) renderDiff(card, d.diff);

	const foot = card.createDiv({ cls: "vaultlink-decision-foot" });
	if (d.undone) {
		foot.createSpan({ cls: "vaultlink-badge", text: "undone" });
		if (d.redoable) button(foot, "Redo", "vaultlink-redo", () => actions.redo(d), true);
	} else if (d.undoable) {
		button(foot, "Undo", "vaultlink-undo", () => actions.undo(d), true);
	}
	return card;
}

export function renderDecisions(
	parent: HTMLElement,
	decisions: Decision[],
	actions: PanelActions,
	title = "Decisions",
): HTMLElement {
	const sec = section(parent, title, decisions.length);
	sec.addClass("vaultlink-decisions");
	if (decisions.length === 0) muted(sec, "No decisions recorded.");
	for (const d of decisions) renderDecision(sec, d, actions);
	return sec;
}
