// The panel's non-data states: loading, nothing to show, and each way the
// daemon can fail to answer. Every failure says what to do next.

import type { ClientFailure } from "../api/result";
import { button } from "./dom-util";

export const NO_NOTE = "No note open.";
export const NOT_TOUCHED = "vaultlink has not touched this note.";

export function renderLoading(container: HTMLElement): void {
	container.empty();
	container.createDiv({ cls: ["vaultlink-panel", "vaultlink-loading"], text: "Loading…" });
}

export function renderEmpty(container: HTMLElement, message: string): void {
	container.empty();
	container.createDiv({ cls: ["vaultlink-panel", "vaultlink-empty"], text: message });
}

interface FailureCopy {
	title: string;
	/** Rendered after the message; backticks mark a command to show as code. */
	hint?: string;
}

export function failureCopy(f: ClientFailure): FailureCopy {
	switch (f.kind) {
		case "down":
			return { title: "vaultlink daemon not running", hint: "Start it with `vaultlink watch` in this vault." };
		case "remote-blocked":
			return {
				title: "Daemon URL is not on this computer",
				hint: "Nothing was sent. Settings → vaultlink holds the daemon URL and the switch that allows a remote daemon.",
			};
		case "unauthorized":
			return {
				title: "Wrong token",
				hint: "The plugin reads .vaultlink/token from the vault; a token set in the plugin settings overrides it.",
			};
		case "version-mismatch":
			return { title: "Daemon and plugin versions do not match" };
		case "bad-response":
			return { title: "Unreadable answer from the daemon" };
		case "rejected":
			return { title: `The daemon refused (HTTP ${f.status})` };
	}
}

/** Text with `code` spans: hints name commands the user should type. */
function textWithCode(parent: HTMLElement, text: string): void {
	text.split("`").forEach((part, i) => {
		if (!part) return;
		if (i % 2 === 1) parent.createEl("code", { text: part });
		else parent.createSpan({ text: part });
	});
}

export function renderFailure(container: HTMLElement, f: ClientFailure, onRetry?: () => void): void {
	container.empty();
	const copy = failureCopy(f);
	const root = container.createDiv({
		cls: ["vaultlink-panel", "vaultlink-failure", `vaultlink-failure-${f.kind}`],
	});
	root.createEl("h4", { cls: "vaultlink-failure-title", text: copy.title });
	root.createDiv({ cls: "vaultlink-failure-message", text: f.message });
	if (copy.hint) textWithCode(root.createDiv({ cls: "vaultlink-hint" }), copy.hint);
	if (onRetry) button(root, "Retry", "vaultlink-retry", onRetry);
}
