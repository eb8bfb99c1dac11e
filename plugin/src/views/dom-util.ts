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

/** A link styled like Obsidian's own internal links that opens `path`. */
export function noteLink(
	parent: HTMLElement,
	path: string,
	label: string,
	actions: PanelActions,
): HTMLAnchorElement {
	const a = parent.createEl("a", {
		text: label,
		cls: ["internal-link", "vaultlink-link"],
		href: path,
		attr: { "data-href": path },
	});
	a.addEventListener("click", (evt) => {
		evt.preventDefault();
		actions.openNote(path);
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
