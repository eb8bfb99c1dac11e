// Chooses what the panel shows for one /note answer.

import type { PanelActions } from "./actions";
import type { ClientResult } from "../api/result";
import type { NoteInfo, SourceNote } from "../api/types";
import { renderDigest } from "./render-digest";
import { renderSource } from "./render-source";
import { NOT_TOUCHED, renderEmpty, renderFailure } from "./render-state";

/** A source the daemon knows of but has never acted on: nothing worth a panel. */
function untouched(note: SourceNote): boolean {
	return note.state === "unseen" && note.fed.length === 0 && note.decisions.length === 0;
}

export function renderNoteResult(
	container: HTMLElement,
	result: ClientResult<NoteInfo>,
	actions: PanelActions,
): void {
	if (result.kind === "ok") {
		const note = result.data;
		if (note.kind === "digest") renderDigest(container, note, actions);
		else if (note.kind === "source" && !untouched(note)) renderSource(container, note, actions);
		else renderEmpty(container, NOT_TOUCHED);
		return;
	}
	// 404 is "no such note" to the daemon: a note created since its last scan.
	if (result.kind === "rejected" && result.status === 404) {
		renderEmpty(container, NOT_TOUCHED);
		return;
	}
	renderFailure(container, result, () => actions.refresh());
}
