// The panel's buttons, wired to the daemon. Kept apart from the view class
// so the Notice texts, the cascade question and the refresh-after-write rule
// are testable.

import type { PanelActions } from "./actions";
import type { DaemonClient } from "../api/client";
import type { ClientResult } from "../api/result";
import type { Decision, UndoNeed } from "../api/types";
import { failureCopy } from "./render-state";

/** Asks the user a yes/no question (an Obsidian Modal in the plugin); `no` labels
 * the button that declines. */
export type Confirm = (title: string, lines: string[], yes: string, no?: string) => Promise<boolean>;

export interface PanelDeps {
	client: Pick<DaemonClient, "undo" | "redo" | "rerun">;
	/** Shows a transient message (Obsidian's Notice in the plugin). */
	notify: (message: string) => void;
	/** Asks before an undo that must take later decisions with it. */
	confirm: Confirm;
	openNote: (path: string) => void;
	refresh: () => void;
}

/** The question an undo refused for its dependants asks: the same choice as
 * `vaultlink undo ID --cascade` on the command line. */
export function cascadeQuestion(d: Decision, needs: UndoNeed[]): [string, string[], string] {
	return [
		`Undoing ${d.action} of ${d.target} also undoes ${needs.length} later decision(s), ` +
			"so that no link is left pointing at nothing:",
		needs.map((n) => `#${n.id} ${n.action} ${n.path} (${n.why})`),
		`Undo all ${needs.length + 1}`,
	];
}

export function makePanelActions(deps: PanelDeps): PanelActions {
	const report = (res: ClientResult<unknown>, done: string, verb: string): void => {
		if (res.kind === "ok") {
			deps.notify(`vaultlink: ${done}`);
		} else if (res.kind === "rejected") {
			// 409: the file changed since, or later decisions depend on it; the
			// daemon's own words say which, so show them as they are.
			deps.notify(`vaultlink: cannot ${verb}: ${res.message}`);
		} else {
			deps.notify(`vaultlink: ${failureCopy(res).title}. ${res.message}`);
		}
	};
	return {
		openNote: deps.openNote,
		refresh: deps.refresh,
		undo: async (decision) => {
			let res = await deps.client.undo(decision.id);
			if (res.kind === "rejected" && res.needs && res.needs.length > 0) {
				if (!(await deps.confirm(...cascadeQuestion(decision, res.needs)))) {
					deps.refresh();
					return;
				}
				res = await deps.client.undo(decision.id, true);
			}
			const more = res.kind === "ok" && (res.data.ids?.length ?? 1) > 1;
			report(res, `undid ${decision.action} of ${decision.target}` +
				(more && res.kind === "ok" ? ` and ${(res.data.ids?.length ?? 1) - 1} more change(s)` : ""), "undo");
			deps.refresh();
		},
		redo: async (decision) => {
			const res = await deps.client.redo(decision.id);
			report(res, `redid ${decision.action} of ${decision.target}`, "redo");
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
