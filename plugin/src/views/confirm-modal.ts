// A yes/no question in an Obsidian Modal: closing it any other way is "no".

import { Modal } from "obsidian";
import type { App } from "obsidian";
import type { Confirm } from "./panel-actions";

class ConfirmModal extends Modal {
	private answered = false;

	constructor(
		app: App,
		private readonly title: string,
		private readonly lines: string[],
		private readonly yes: string,
		private readonly no: string,
		private readonly resolve: (ok: boolean) => void,
	) {
		super(app);
	}

	onOpen(): void {
		this.titleEl.setText("vaultlink");
		this.contentEl.createEl("p", { text: this.title });
		const list = this.contentEl.createEl("ul", { cls: "vaultlink-cascade" });
		for (const line of this.lines) list.createEl("li", { text: line });
		const row = this.contentEl.createDiv({ cls: "vaultlink-confirm-buttons" });
		const yes = row.createEl("button", { text: this.yes, cls: "mod-warning vaultlink-confirm-yes" });
		yes.addEventListener("click", () => this.answer(true));
		const no = row.createEl("button", { text: this.no, cls: "vaultlink-confirm-no" });
		no.addEventListener("click", () => this.answer(false));
	}

	onClose(): void {
		this.contentEl.empty();
		if (!this.answered) this.resolve(false);
	}

	private answer(ok: boolean): void {
		this.answered = true;
		this.resolve(ok);
		this.close();
	}
}

/** A Confirm as an Obsidian Modal (the panel's cascade question, the settings' warning). */
export function modalConfirm(app: App): Confirm {
	return (title, lines, yes, no = "Keep them") =>
		new Promise<boolean>((resolve) => new ConfirmModal(app, title, lines, yes, no, resolve).open());
}
