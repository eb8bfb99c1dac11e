// The status bar item: one line of daemon state, refreshed by the plugin's
// poll, clickable to open the panel.

import type { ClientResult } from "./api/result";
import type { Status } from "./api/types";

export function statusText(result: ClientResult<Status>): string {
	switch (result.kind) {
		case "ok": {
			const { queue, failed, unreadable = [], state } = result.data;
			const parts: string[] = [];
			if (queue.length) parts.push(`${queue.length} queued`);
			if (failed.length) {
				const parked = failed.filter((f) => f.parked).length;
				parts.push(`${failed.length} failed` + (parked ? ` (${parked} parked)` : ""));
			}
			if (unreadable.length) parts.push(`${unreadable.length} unreadable`);
			if (parts.length) return `vaultlink: ${parts.join(", ")}`;
			// Nothing waiting: say what the daemon itself is doing.
			return state === "idle" ? "vaultlink: idle" : `vaultlink: ${state}`;
		}
		case "down":
			return "vaultlink: daemon not running";
		case "unauthorized":
			return "vaultlink: wrong token";
		case "version-mismatch":
			return "vaultlink: version mismatch";
		case "bad-response":
		case "rejected":
			return "vaultlink: error";
	}
}

/** What the daemon works on, with the model's progress when it is answering. */
export function currentText(c: NonNullable<Status["current"]>): string {
	const what = c.unit || `extracting ${c.paths.join(", ")}`;
	return c.seconds === undefined ? what : `${what} (${c.tokens ?? 0} tokens, ${Math.round(c.seconds)} s)`;
}

/** Hover text: the details the one-liner leaves out. */
export function statusTooltip(result: ClientResult<Status>): string {
	if (result.kind !== "ok") return result.message;
	const s = result.data;
	const lines = [`vaultlink ${s.version}: ${s.state}`];
	if (s.current) lines.push(`working on ${currentText(s.current)}`);
	for (const f of s.failed) {
		const what = f.kind === "note" ? `extract of ${f.paths.join(", ")}` : f.unit;
		const when = f.parked ? "parked, waits for Re-run" : `retried next run (tried ${f.attempts})`;
		lines.push(`failed ${what}, ${when}: ${f.error}`);
	}
	for (const u of s.unreadable ?? []) lines.push(`cannot read ${u.path}: ${u.reason}`);
	// offline is a choice, not a fault: the daemon integrates without a model
	if (s.model.provider === "offline") lines.push("offline integrator (no model)");
	else if (!s.model.reachable) lines.push(`model ${s.model.model} at ${s.model.host} unreachable`);
	lines.push("Click to open the vaultlink panel.");
	return lines.join("\n");
}

export class StatusBarItem {
	constructor(
		private readonly el: HTMLElement,
		private readonly fetchStatus: () => Promise<ClientResult<Status>>,
		onClick: () => void,
	) {
		el.addClass("vaultlink-status", "mod-clickable");
		el.setText("vaultlink: …");
		el.addEventListener("click", onClick);
	}

	async poll(): Promise<void> {
		const result = await this.fetchStatus();
		this.el.setText(statusText(result));
		this.el.setAttribute("aria-label", statusTooltip(result));
		this.el.setAttribute("data-tooltip-position", "top");
	}
}
