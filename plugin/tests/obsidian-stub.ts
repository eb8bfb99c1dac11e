// Stand-in for the `obsidian` module in tests and the screenshot harness
// (esbuild aliases 'obsidian' here). It covers only what src/ imports, and
// behaves like Obsidian where the plugin relies on it: a View's containerEl
// holds a header and contentEl, components run their cleanups on unload,
// Notices are recorded so tests can read them.
// DOM helpers (createEl, empty...) must already be installed: see
// dom-helpers.ts.

export type EventRef = { off: () => void };

type Callback = (...args: unknown[]) => unknown;

export class Events {
	private handlers = new Map<string, Set<Callback>>();

	on(name: string, cb: Callback): EventRef {
		const set = this.handlers.get(name) ?? new Set<Callback>();
		set.add(cb);
		this.handlers.set(name, set);
		return { off: () => set.delete(cb) };
	}

	trigger(name: string, ...args: unknown[]): void {
		for (const cb of [...(this.handlers.get(name) ?? [])]) cb(...args);
	}

	listenerCount(name: string): number {
		return this.handlers.get(name)?.size ?? 0;
	}
}

export class Component {
	private cleanups: (() => void)[] = [];

	onload(): void | Promise<void> {}
	onunload(): void {}

	load(): void {
		void this.onload();
	}

	unload(): void {
		for (const fn of this.cleanups.splice(0).reverse()) fn();
		this.onunload();
	}

	register(cb: () => void): void {
		this.cleanups.push(cb);
	}

	registerEvent(ref: EventRef): void {
		this.cleanups.push(() => ref.off());
	}

	registerInterval(id: number): number {
		this.cleanups.push(() => clearInterval(id));
		return id;
	}
}

export class TFile {
	constructor(public path: string) {}
	get extension(): string {
		const m = /\.([^./]+)$/.exec(this.path);
		return m ? m[1] : "";
	}
	get basename(): string {
		return (this.path.split("/").pop() ?? "").replace(/\.[^.]+$/, "");
	}
}

export class WorkspaceLeaf {
	view: View | null = null;
	viewState: { type: string; active?: boolean } | null = null;
	constructor(public app: unknown) {}

	async setViewState(state: { type: string; active?: boolean }): Promise<void> {
		this.viewState = state;
	}
}

export abstract class View extends Component {
	app: any;
	leaf: WorkspaceLeaf;
	containerEl: HTMLElement;

	constructor(leaf: WorkspaceLeaf) {
		super();
		this.leaf = leaf;
		this.app = leaf.app;
		// Obsidian's leaf layout: a header, then the view's own content.
		this.containerEl = document.createElement("div");
		this.containerEl.addClass("workspace-leaf-content");
		this.containerEl.createDiv({ cls: "view-header" });
		this.containerEl.createDiv({ cls: "view-content" });
	}

	abstract getViewType(): string;
	abstract getDisplayText(): string;
	getIcon(): string {
		return "";
	}
	protected async onOpen(): Promise<void> {}
	protected async onClose(): Promise<void> {}
}

export abstract class ItemView extends View {
	contentEl: HTMLElement;
	constructor(leaf: WorkspaceLeaf) {
		super(leaf);
		this.contentEl = this.containerEl.children[1] as HTMLElement;
	}
}

/** Obsidian's Modal: a title and content element; open() shows it (recorded in
 * `Modal.open` so a test can answer it), close() hides it. */
export class Modal extends Component {
	static open: Modal[] = [];
	app: any;
	titleEl: HTMLElement;
	contentEl: HTMLElement;

	constructor(app: any) {
		super();
		this.app = app;
		this.titleEl = document.createElement("div");
		this.contentEl = document.createElement("div");
	}

	open(): void {
		Modal.open.push(this);
		this.onOpen();
	}

	close(): void {
		Modal.open = Modal.open.filter((m) => m !== this);
		this.onClose();
	}

	onOpen(): void {}
	onClose(): void {}
}

export class Notice {
	/** Every message shown, oldest first; tests clear it as they need. */
	static shown: string[] = [];
	constructor(public message: string) {
		Notice.shown.push(message);
	}
}

export interface Command {
	id: string;
	name: string;
	callback?: () => unknown;
	checkCallback?: (checking: boolean) => boolean | void;
}

export class Plugin extends Component {
	statusBarItems: HTMLElement[] = [];
	commands: Command[] = [];
	views = new Map<string, (leaf: WorkspaceLeaf) => View>();
	settingTabs: PluginSettingTab[] = [];
	/** What loadData() answers and saveData() stores. */
	data: unknown = null;

	constructor(public app: any, public manifest: unknown = { id: "vaultlink" }) {
		super();
	}

	addStatusBarItem(): HTMLElement {
		const el = document.createElement("div");
		el.addClass("status-bar-item");
		this.statusBarItems.push(el);
		return el;
	}

	addCommand(command: Command): Command {
		this.commands.push(command);
		return command;
	}

	registerView(type: string, creator: (leaf: WorkspaceLeaf) => View): void {
		this.views.set(type, creator);
	}

	addSettingTab(tab: PluginSettingTab): void {
		this.settingTabs.push(tab);
	}

	async loadData(): Promise<unknown> {
		return this.data;
	}

	async saveData(data: unknown): Promise<void> {
		this.data = JSON.parse(JSON.stringify(data));
	}
}

export abstract class PluginSettingTab {
	containerEl: HTMLElement;
	constructor(public app: unknown, public plugin: Plugin) {
		this.containerEl = document.createElement("div");
	}
	abstract display(): void;
}

export class TextComponent {
	inputEl: HTMLInputElement;
	private changeCb: ((value: string) => unknown) | null = null;

	constructor(parent: HTMLElement) {
		this.inputEl = parent.createEl("input", { type: "text" });
	}
	setPlaceholder(p: string): this {
		this.inputEl.setAttribute("placeholder", p);
		return this;
	}
	setValue(v: string): this {
		this.inputEl.value = v;
		return this;
	}
	getValue(): string {
		return this.inputEl.value;
	}
	onChange(cb: (value: string) => unknown): this {
		this.changeCb = cb;
		return this;
	}
	/** Test hook: what typing into the field does in Obsidian. */
	async type(value: string): Promise<void> {
		this.inputEl.value = value;
		await this.changeCb?.(value);
	}
}

export class ToggleComponent {
	toggleEl: HTMLElement;
	private on = false;
	private changeCb: ((value: boolean) => unknown) | null = null;

	constructor(parent: HTMLElement) {
		this.toggleEl = parent.createDiv({ cls: "checkbox-container" });
	}
	setValue(on: boolean): this {
		this.on = on;
		this.toggleEl.toggleClass("is-enabled", on);
		return this;
	}
	getValue(): boolean {
		return this.on;
	}
	onChange(cb: (value: boolean) => unknown): this {
		this.changeCb = cb;
		return this;
	}
	/** Test hook: what clicking the switch does in Obsidian. */
	async click(): Promise<void> {
		this.setValue(!this.on);
		await this.changeCb?.(this.on);
	}
}

export class Setting {
	settingEl: HTMLElement;
	nameEl: HTMLElement;
	descEl: HTMLElement;
	controlEl: HTMLElement;
	/** Test hook: the text components added, in order. */
	texts: TextComponent[] = [];
	/** Test hook: the toggles added, in order. */
	toggles: ToggleComponent[] = [];
	static all: Setting[] = [];

	constructor(containerEl: HTMLElement) {
		this.settingEl = containerEl.createDiv({ cls: "setting-item" });
		const info = this.settingEl.createDiv({ cls: "setting-item-info" });
		this.nameEl = info.createDiv({ cls: "setting-item-name" });
		this.descEl = info.createDiv({ cls: "setting-item-description" });
		this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
		Setting.all.push(this);
	}
	setName(name: string): this {
		this.nameEl.setText(name);
		return this;
	}
	setDesc(desc: string): this {
		this.descEl.setText(desc);
		return this;
	}
	addText(cb: (t: TextComponent) => unknown): this {
		const t = new TextComponent(this.controlEl);
		this.texts.push(t);
		cb(t);
		return this;
	}
	addToggle(cb: (t: ToggleComponent) => unknown): this {
		const t = new ToggleComponent(this.controlEl);
		this.toggles.push(t);
		cb(t);
		return this;
	}
}

type RequestHandler = (req: { url: string; method?: string; headers?: Record<string, string>; body?: string }) =>
	Promise<{ status: number; text: string }>;

let requestHandler: RequestHandler | null = null;

/** Test hook: what requestUrl answers (a FakeDaemon's request, usually). */
export function setRequestHandler(handler: RequestHandler | null): void {
	requestHandler = handler;
}

export async function requestUrl(req: Parameters<RequestHandler>[0]): Promise<{ status: number; text: string }> {
	// Without a handler a test would otherwise reach for the network.
	if (!requestHandler) throw new Error("requestUrl is not available in tests: set a handler");
	return requestHandler(req);
}
