// What the rendered panel can ask for. Renderers only call these; the view
// wires them to the daemon client, Notices and the workspace, so rendering
// stays free of Obsidian and testable on a bare DOM.

import type { Decision } from "../api/types";

export interface PanelActions {
	/** Open a vault-relative note in the editor. */
	openNote(path: string): void;
	/** POST /undo for this decision (asking before a cascade), then refresh. */
	undo(decision: Decision): void;
	/** POST /redo for this undone decision, then refresh. */
	redo(decision: Decision): void;
	/** POST /rerun {path}, then refresh. */
	rerun(path: string): void;
	/** Ask the daemon again (used by the error states' Retry button). */
	refresh(): void;
}
