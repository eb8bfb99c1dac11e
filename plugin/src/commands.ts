// Command palette entries.

import type { Plugin, TFile } from "obsidian";
import type { ClientResult } from "./api/result";
import type { DaemonClient } from "./api/client";
import type { RerunResult } from "./api/types";
import { failureCopy } from "./views/render-state";

export interface CommandHost extends Plugin {
	client: DaemonClient;
	activatePanel(): Promise<void>;
	activateProposals(): Promise<void>;
	notify(message: string): void;
	/** Poll now so the status bar and panel show the new queue at once. */
	tick(): Promise<void>;
}

export function rerunNotice(res: ClientResult<RerunResult>, what: string): string {
	if (res.kind !== "ok") return `vaultlink: ${failureCopy(res).title}. ${res.message}`;
	const q = res.data.queued;
	if (q.length === 0) return `vaultlink: nothing to ${what}`;
	return `vaultlink: queued ${q.length === 1 ? q[0] : `${q.length} notes`}`;
}

function activeMarkdown(host: CommandHost): TFile | null {
	const f = host.app.workspace.getActiveFile();
	return f && f.extension === "md" ? f : null;
}

export function registerCommands(host: CommandHost): void {
	host.addCommand({
		id: "open-panel",
		name: "Open panel",
		callback: () => void host.activatePanel(),
	});

	host.addCommand({
		id: "review-proposals",
		name: "Review proposals",
		callback: () => void host.activateProposals(),
	});

	host.addCommand({
		id: "integrate-note-now",
		name: "Integrate this note now",
		// Only offered while a note is open: there is nothing to send otherwise.
		checkCallback: (checking) => {
			const file = activeMarkdown(host);
			if (!file) return false;
			if (!checking) {
				void host.client.rerun({ path: file.path }).then(async (res) => {
					host.notify(rerunNotice(res, "integrate"));
					await host.tick();
				});
			}
			return true;
		},
	});

	host.addCommand({
		id: "rerun-failed",
		name: "Re-run failed units",
		callback: () => {
			void host.client.rerun({ failed: true }).then(async (res) => {
				host.notify(rerunNotice(res, "re-run: no unit has failed"));
				await host.tick();
			});
		},
	});
}
