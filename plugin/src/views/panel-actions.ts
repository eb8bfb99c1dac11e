// The panel's buttons, wired to the daemon. Kept apart from the view class
// so the Notice texts and the refresh-after-write rule are testable.

import type { PanelActions } from "./actions";
import type { DaemonClient } from "../api/client";
import { failureCopy } from "./render-state";

export interface PanelDeps {
	client: Pick<DaemonClient, "undo" | "rerun">;
	/** Shows a transient message (Obsidian's Notice in the plugin). */
	notify: (message: string) => void;
	openNote: (path: string) => void;
	refresh: () => void;
}

export function makePanelActions(deps: PanelDeps): PanelActions {
	return {
		openNote: deps.openNote,
		refresh: deps.refresh,
		undo: async (decision) => {
			const res = await deps.client.undo(decision.id);
			if (res.kind === "ok") {
				deps.notify(`vaultlink: undid ${decision.action} of ${decision.target}`);
			} else if (res.kind === "rejected") {
				// 409 means the file changed since the decision; the daemon's
				// own words say which, so show them as they are.
				deps.notify(`vaultlink: cannot undo: ${res.message}`);
			} else {
				deps.notify(`vaultlink: ${failureCopy(res).title}. ${res.message}`);
			}
			deps.refresh();
		},
		rerun: async (path) => {
			const res = await deps.client.rerun({ path });
			if (res.kind === "ok") {
				deps.notify(`vaultlink: queued ${res.data.queued.join(", ") || "nothing"}`);
			} else {
				deps.notify(`vaultlink: ${failureCopy(res).title}. ${res.message}`);
			}
			deps.refresh();
		},
	};
}
