// A daily or resource note: where it is in the daemon's pipeline and which
// digest nodes it fed.

import type { PanelActions } from "./actions";
import type { SourceNote } from "../api/types";
import { button, muted, nodeList, noteTitle, section } from "./dom-util";
import { renderDecisions } from "./render-decisions";

/** One line for the note's state, e.g. "settling: integrates in 42 s". */
export function sourceStateText(note: SourceNote): string {
	switch (note.state) {
		case "unseen":
			return "not seen by vaultlink yet";
		case "queued":
			return "queued for the next run";
		case "settling": {
			const s = note.settles_in_seconds;
			// The daemon waits for a quiet period after the last edit.
			return s === null ? "settling" : `settling: integrates in ${Math.max(0, Math.ceil(s))} s`;
		}
		case "integrated":
			return "integrated";
		case "failed":
			return "failed";
		default:
			return String(note.state);
	}
}

export function renderSource(container: HTMLElement, note: SourceNote, actions: PanelActions): void {
	container.empty();
	const root = container.createDiv({ cls: ["vaultlink-panel", "vaultlink-source-note"] });

	const head = root.createDiv({ cls: "vaultlink-header" });
	head.createDiv({ cls: "vaultlink-kind", text: "source note" });
	head.createEl("h4", { cls: "vaultlink-title", text: noteTitle(note.path) });
	head.createDiv({ cls: "vaultlink-path", text: note.path });

	const state = root.createDiv({ cls: ["vaultlink-state", `vaultlink-state-${note.state}`] });
	state.createSpan({ cls: "vaultlink-state-dot" });
	state.createSpan({ cls: "vaultlink-state-text", text: sourceStateText(note) });
	if (note.state === "failed") {
		if (note.error) state.createDiv({ cls: "vaultlink-error", text: note.error });
		button(state, "Re-run", "vaultlink-rerun mod-cta", () => actions.rerun(note.path), true);
	}

	const fed = section(root, "Fed these digest nodes", note.fed.length);
	fed.addClass("vaultlink-fed");
	if (note.fed.length === 0) muted(fed, "No digest node cites this note yet.");
	else nodeList(fed, note.fed, actions);

	renderDecisions(root, note.decisions, actions);
}
