// The status bar item: one line of daemon state, refreshed by the plugin's
// poll, clickable to open the panel.

import type { ClientResult } from "./api/result";
import type { Status } from "./api/types";

export function statusText(result: ClientResult<Status>): string {
	switch (result.kind) {
		case "ok": {
			const { queue, failed, unreadable = [], state, backlog } = result.data;
			const parts: string[] = [];
			if (queue.length) parts.push(`${queue.length} queued`);
			if (failed.length) {
				const parked = failed.filter((f) => f.parked).length;
				parts.push(`${failed.length} failed` + (parked ? ` (${parked} parked)` : ""));
			}
			if (unreadable.length) parts.push(`${unreadable.length} unreadable`);
			if (result.data.proposals) parts.push(`${result.data.proposals} to review`);
			if (backlog?.queued) parts.push(`backlog ${backlog.queued.toLocaleString("en-US")} (${duration(backlog.eta_seconds)})`);
			if (parts.length) return `vaultlink: ${parts.join(", ")}`;
			// Nothing waiting: say what the daemon itself is doing.
			return state === "idle" ? "vaultlink: idle" : `vaultlink: ${state}`;
		}
		case "down":
			return "vaultlink: daemon not running";
		case "remote-blocked":
			return "vaultlink: daemon URL not local, see settings";
		case "unauthorized":
			return "vaultlink: wrong token";
		case "version-mismatch":
			return "vaultlink: version mismatch";
		case "bad-response":
		case "rejected":
			return "vaultlink: error";
	}
}

/** Seconds as a person reads them: 45 s, 12 min, 3 h 20 min, 17 days. */
export function duration(seconds: number): string {
	if (seconds < 90) return `${Math.round(seconds)} s`;
	if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
	if (seconds < 2 * 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
	return `${Math.round(seconds / 86400)} days`;
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
	const b = s.backlog;
	if (b?.queued) lines.push(`backlog: ${b.queued.toLocaleString("en-US")} older notes queued, about ${duration(b.eta_seconds)} to go`);
	if (b?.waiting) {
		const est = b.waiting_estimate;
		lines.push(
			`backlog: ${b.waiting.toLocaleString("en-US")} older notes wait, not integrated ` +
				`(about ${est.units.toLocaleString("en-US")} units, ${duration(est.seconds)}); ${b.how}`,
		);
	}
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
