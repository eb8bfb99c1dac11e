// A digest node: where its content came from, what it is linked to, and the
// decisions that shaped it.

import type { PanelActions } from "./actions";
import type { DigestNote } from "../api/types";
import { muted, nodeList, noteLink, section } from "./dom-util";
import { renderDecisions } from "./render-decisions";

export function renderDigest(container: HTMLElement, note: DigestNote, actions: PanelActions): void {
	container.empty();
	const root = container.createDiv({ cls: ["vaultlink-panel", "vaultlink-digest"] });

	const head = root.createDiv({ cls: "vaultlink-header" });
	head.createDiv({ cls: "vaultlink-kind", text: "digest node" });
	head.createEl("h4", { cls: "vaultlink-title", text: note.name });
	head.createDiv({ cls: "vaultlink-path", text: note.path });
	if (note.description) head.createDiv({ cls: "vaultlink-desc", text: note.description });

	const sources = section(root, "Sources", note.sources.length);
	sources.addClass("vaultlink-sources");
	if (note.sources.length === 0) muted(sources, "No sources recorded.");
	else {
		const ul = sources.createEl("ul", { cls: "vaultlink-list" });
		for (const s of note.sources) {
			const li = ul.createEl("li", { cls: "vaultlink-source" });
			noteLink(li, s.path, s.path, actions);
			// The sentence in the node that cites this source: the reason
			// the source is listed at all.
			li.createEl("blockquote", { cls: "vaultlink-sentence", text: s.sentence });
		}
	}

	const related = section(root, "Related", note.related.length);
	related.addClass("vaultlink-related");
	if (note.related.length === 0) muted(related, "No related nodes.");
	else nodeList(related, note.related, actions);

	if (note.backlinks.length > 0) {
		const back = section(root, "Linked from", note.backlinks.length);
		back.addClass("vaultlink-backlinks");
		nodeList(back, note.backlinks, actions);
	}

	renderDecisions(root, note.decisions, actions);
}
