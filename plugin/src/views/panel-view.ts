// The side panel. It follows the active note and shows what vaultlink knows
// about it; all drawing is done by the render-* functions.

import { ItemView, Notice, WorkspaceLeaf } from "obsidian";
import type { DaemonClient } from "../api/client";
import type { PanelActions } from "./actions";
import { modalConfirm } from "./confirm-modal";
import { makePanelActions } from "./panel-actions";
import { renderNoteResult } from "./render-note";
import { NO_NOTE, renderEmpty, renderLoading } from "./render-state";

export const VIEW_TYPE_PANEL = "vaultlink-panel";

export class VaultlinkPanelView extends ItemView {
	private readonly client: DaemonClient;
	private readonly actions: PanelActions;
	/** The note on show; undefined until the first follow(). */
	private path: string | null | undefined = undefined;
	/** Bumped per load so a slow answer for a previous note is dropped. */
	private generation = 0;
	/** What is on screen, to skip redrawing identical answers on each poll. */
	private shown = "";

	constructor(leaf: WorkspaceLeaf, client: DaemonClient) {
		super(leaf);
		this.client = client;
		this.actions = makePanelActions({
			client,
			notify: (m) => new Notice(m),
			confirm: modalConfirm(this.app),
			openNote: (p) => void this.app.workspace.openLinkText(p, this.path ?? "", false),
			// After an undo or re-run, redraw even if the answer is unchanged
			// (a refused undo): that re-enables the button that was clicked.
			refresh: () => void this.refresh(true),
		});
	}

	getViewType(): string {
		return VIEW_TYPE_PANEL;
	}

	getDisplayText(): string {
		return "vaultlink";
	}

	getIcon(): string {
		return "git-pull-request";
	}

	async onOpen(): Promise<void> {
		this.contentEl.addClass("vaultlink-view");
		// Clicking inside this panel makes it the active leaf, but
		// getActiveFile() still answers the last note, so following both
		// events never loses the note being looked at.
		this.registerEvent(this.app.workspace.on("active-leaf-change", () => void this.follow()));
		this.registerEvent(this.app.workspace.on("file-open", () => void this.follow()));
		await this.follow();
	}

	async onClose(): Promise<void> {
		this.generation++;
	}

	/** Show the active note if it differs from the one on show. */
	async follow(): Promise<void> {
		const file = this.app.workspace.getActiveFile();
		const path = file && file.extension === "md" ? file.path : null;
		if (path === this.path) return;
		this.path = path;
		await this.show(true);
	}

	/** Ask again for the note on show (each poll, and after undo or re-run). */
	async refresh(force = false): Promise<void> {
		if (this.path === undefined) return;
		if (force) this.shown = "";
		await this.show(false);
	}

	private async show(showLoading: boolean): Promise<void> {
		const gen = ++this.generation;
		const path = this.path;
		if (!path) {
			this.shown = "";
			renderEmpty(this.contentEl, NO_NOTE);
			return;
		}
		if (showLoading) {
			this.shown = "";
			renderLoading(this.contentEl);
		}
		const result = await this.client.note(path);
		if (gen !== this.generation) return;
		const key = JSON.stringify(result);
		if (key === this.shown) return;
		this.shown = key;
		renderNoteResult(this.contentEl, result, this.actions);
	}
}
