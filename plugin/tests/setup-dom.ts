// A DOM for node tests: linkedom, plus Obsidian's helpers and the globals
// the plugin code touches (document, window timers). Import first.

import { parseHTML } from "linkedom";
import { installDomHelpers } from "./dom-helpers";

const dom = parseHTML("<!doctype html><html><head></head><body></body></html>");
const doc = dom.document as unknown as Document;

installDomHelpers(dom.Node.prototype, dom.HTMLElement.prototype, () => doc);

const g = globalThis as Record<string, unknown>;
g.document = doc;
// main.ts calls window.setInterval/clearInterval as Obsidian recommends;
// node's own timers stand in.
g.window ??= globalThis;

/** A fresh detached container to render into. */
export function container(): HTMLElement {
	const el = doc.createElement("div");
	doc.body.appendChild(el);
	return el;
}

export { doc };
