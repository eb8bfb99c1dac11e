// Small building blocks shared by the renderers.

import type { PanelActions } from "./actions";
import type { NodeRef } from "../api/types";

/** "digest/wiki/hybrid-search.md" -> "hybrid-search" */
export function noteTitle(path: string): string {
	const last = path.split("/").pop() ?? path;
	return last.replace(/\.md$/, "");
}

/** "2026-06-21T08:03:11Z" -> "2026-06-21 08:03". Kept in UTC on purpose: it
 * is what the daemon logged, and it renders the same on every machine. */
export function shortTime(iso: string): string {
	const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
	return m ? `${m[1]} ${m[2]}` : iso;
}

/**
 * `path` when it can be a vault-relative note path, else null. The daemon
 * sends vault paths only; anything with a scheme (javascript:, data:,
 * https:, even obsidian://, whose actions other plugins extend) or a leading
 * slash would leave the vault or run code when clicked, so it gets no href.
 */
export function vaultHref(path: string): string | null {
	// Browsers skip control characters and leading spaces before reading a
	// scheme ("java\nscript:" is javascript:), so any of them disqualifies.
	if (/[\u0000-\u001f\u007f]/.test(path) || /^\s/.test(path)) return null;
	if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return null;
	return path === "" || /^[\\/]/.test(path) ? null : path;
}

/** A link styled like Obsidian's own internal links that opens `path`; a
 * target that is no vault path is shown as text with no href or click. */
export function noteLink(
	parent: HTMLElement,
	path: string,
	label: string,
	actions: Pick<PanelActions, "openNote">,
): HTMLAnchorElement {
	const href = vaultHref(path);
	if (href === null) {
		return parent.createEl("a", {
			text: label,
			cls: ["vaultlink-link", "vaultlink-not-a-note"],
			attr: { title: "not a note of this vault" },
		});
	}
	const a = parent.createEl("a", {
		text: label,
		cls: ["internal-link", "vaultlink-link"],
		href,
		attr: { "data-href": href },
	});
	a.addEventListener("click", (evt) => {
		evt.preventDefault();
		actions.openNote(href);
	});
	return a;
}

/** A titled section; returns the element to fill. */
export function section(parent: HTMLElement, title: string, count?: number): HTMLElement {
	const sec = parent.createDiv({ cls: "vaultlink-section" });
	const h = sec.createEl("h5", { cls: "vaultlink-section-title", text: title });
	if (count !== undefined) h.createSpan({ cls: "vaultlink-count", text: String(count) });
	return sec;
}

export function muted(parent: HTMLElement, text: string): HTMLElement {
	return parent.createDiv({ cls: "vaultlink-muted", text });
}

/** List of digest nodes: name as a link, description under it. */
export function nodeList(parent: HTMLElement, nodes: NodeRef[], actions: PanelActions): void {
	const ul = parent.createEl("ul", { cls: "vaultlink-list" });
	for (const n of nodes) {
		const li = ul.createEl("li", { cls: "vaultlink-node" });
		noteLink(li, n.path, n.name || noteTitle(n.path), actions);
		if (n.description) li.createDiv({ cls: "vaultlink-desc", text: n.description });
	}
}

/**
 * A button. With `once`, it disables itself when clicked so a slow daemon
 * cannot be sent the same undo or re-run twice; the panel redraws after
 * the action, which brings a fresh button back.
 */
export function button(
	parent: HTMLElement,
	text: string,
	cls: string,
	onClick: () => void,
	once = false,
): HTMLButtonElement {
	const b = parent.createEl("button", { text, cls });
	b.addEventListener("click", (evt) => {
		evt.preventDefault();
		if (b.disabled) return;
		if (once) b.disabled = true;
		onClick();
	});
	return b;
}
