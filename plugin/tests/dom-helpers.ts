// Obsidian adds helpers (createEl, createDiv, empty, setText, addClass...) to
// every DOM node at startup. Tests and the screenshot harness run without
// Obsidian, so this installs the subset the plugin uses, with Obsidian's
// semantics, onto whatever DOM they have: linkedom under node, the real one
// in Chromium.

interface ElementInfo {
	cls?: string | string[];
	text?: string | DocumentFragment;
	attr?: Record<string, string | number | boolean | null>;
	title?: string;
	href?: string;
	type?: string;
	value?: string;
	placeholder?: string;
	prepend?: boolean;
	parent?: Node;
}

function classesOf(cls: string | string[]): string[] {
	return (Array.isArray(cls) ? cls : cls.split(" ")).filter(Boolean);
}

function applyInfo(el: HTMLElement, info: ElementInfo): void {
	if (info.cls) el.classList.add(...classesOf(info.cls));
	if (info.text !== undefined) {
		if (typeof info.text === "string") el.textContent = info.text;
		else el.appendChild(info.text);
	}
	for (const [k, v] of Object.entries(info.attr ?? {})) {
		// Obsidian drops null/false attributes rather than writing "null".
		if (v === null || v === false) el.removeAttribute(k);
		else el.setAttribute(k, String(v));
	}
	if (info.title !== undefined) el.setAttribute("title", info.title);
	if (info.href !== undefined) el.setAttribute("href", info.href);
	if (info.type !== undefined) el.setAttribute("type", info.type);
	if (info.value !== undefined) el.setAttribute("value", info.value);
	if (info.placeholder !== undefined) el.setAttribute("placeholder", info.placeholder);
}

/** Obsidian's global createEl: make an element, style it, attach it if asked. */
export function makeEl<K extends keyof HTMLElementTagNameMap>(
	doc: Document,
	tag: K,
	o?: ElementInfo | string,
	callback?: (el: HTMLElementTagNameMap[K]) => void,
): HTMLElementTagNameMap[K] {
	const el = doc.createElement(tag);
	const info: ElementInfo = typeof o === "string" ? { cls: o } : (o ?? {});
	applyInfo(el, info);
	if (info.parent) {
		if (info.prepend) info.parent.insertBefore(el, info.parent.firstChild);
		else info.parent.appendChild(el);
	}
	callback?.(el);
	return el;
}

/**
 * Install the helpers on a DOM implementation's prototypes.
 * `nodeProto` is Node.prototype, `elementProto` HTMLElement.prototype (or
 * Element.prototype where the implementation keeps classList there).
 */
export function installDomHelpers(nodeProto: object, elementProto: object, doc: () => Document): void {
	const helpers: Record<string, unknown> = {
		createEl(this: Node, tag: keyof HTMLElementTagNameMap, o?: ElementInfo | string, cb?: (el: HTMLElement) => void) {
			const info: ElementInfo = typeof o === "string" ? { cls: o } : { ...(o ?? {}) };
			return makeEl(this.ownerDocument ?? doc(), tag, { ...info, parent: this }, cb);
		},
		createDiv(this: Node, o?: ElementInfo | string, cb?: (el: HTMLElement) => void) {
			return (this as unknown as { createEl: Function }).createEl("div", o, cb);
		},
		createSpan(this: Node, o?: ElementInfo | string, cb?: (el: HTMLElement) => void) {
			return (this as unknown as { createEl: Function }).createEl("span", o, cb);
		},
		empty(this: Node) {
			while (this.firstChild) this.removeChild(this.firstChild);
		},
		detach(this: Node) {
			this.parentNode?.removeChild(this);
		},
	};
	const elementHelpers: Record<string, unknown> = {
		setText(this: HTMLElement, val: string | DocumentFragment) {
			if (typeof val === "string") this.textContent = val;
			else {
				(this as unknown as { empty: () => void }).empty();
				this.appendChild(val);
			}
		},
		addClass(this: HTMLElement, ...classes: string[]) {
			this.classList.add(...classes.flatMap(classesOf));
		},
		removeClass(this: HTMLElement, ...classes: string[]) {
			this.classList.remove(...classes.flatMap(classesOf));
		},
		toggleClass(this: HTMLElement, classes: string | string[], value: boolean) {
			for (const c of classesOf(classes)) this.classList.toggle(c, value);
		},
		hasClass(this: HTMLElement, cls: string) {
			return this.classList.contains(cls);
		},
	};
	// defineProperty keeps them non-enumerable, as Obsidian's are.
	for (const [proto, fns] of [[nodeProto, helpers], [elementProto, elementHelpers]] as const) {
		for (const [name, fn] of Object.entries(fns)) {
			Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true });
		}
	}
}
