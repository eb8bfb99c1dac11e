// Plugin entry: wires the daemon client to the panel, status bar, commands
// and settings. Behaviour lives in the modules it imports.

import { Notice, Plugin, requestUrl } from "obsidian";
import { DaemonClient } from "./api/client";
import { resolveToken } from "./api/token";
import { registerCommands } from "./commands";
import { DEFAULT_SETTINGS, readSettings, VaultlinkSettings, VaultlinkSettingTab } from "./settings";
import { StatusBarItem } from "./status-bar";
import { VaultlinkPanelView, VIEW_TYPE_PANEL } from "./views/panel-view";
import { VaultlinkProposalsView, VIEW_TYPE_PROPOSALS } from "./views/proposals-view";

export default class VaultlinkPlugin extends Plugin {
	settings: VaultlinkSettings = { ...DEFAULT_SETTINGS };
	client!: DaemonClient;
	private statusBar!: StatusBarItem;
	private pollId: number | null = null;

	async onload(): Promise<void> {
		this.settings = readSettings(await this.loadData());
		this.client = new DaemonClient({
			request: (req) => requestUrl(req),
			baseUrl: () => this.settings.daemonUrl,
			allowRemote: () => this.settings.allowRemoteDaemon,
			token: () => resolveToken(this.settings.token, (p) => this.app.vault.adapter.read(p)),
		});

		this.registerView(VIEW_TYPE_PANEL, (leaf) => new VaultlinkPanelView(leaf, this.client));
		this.registerView(VIEW_TYPE_PROPOSALS, (leaf) => new VaultlinkProposalsView(leaf, this.client));
		this.statusBar = new StatusBarItem(
			this.addStatusBarItem(),
			() => this.client.status(),
			() => void this.activatePanel(),
		);
		registerCommands(this);
		this.addSettingTab(new VaultlinkSettingTab(this.app, this));
		// Polling before the layout is ready would race vault loading.
		this.app.workspace.onLayoutReady(() => this.restartPolling());
	}

	async saveSettings(): Promise<void> {
		await this.saveData(this.settings);
	}

	notify(message: string): void {
		new Notice(message);
	}

	restartPolling(): void {
		if (this.pollId !== null) window.clearInterval(this.pollId);
		this.pollId = this.registerInterval(
			window.setInterval(() => void this.tick(), this.settings.pollSeconds * 1000),
		);
		void this.tick();
	}

	/** One poll: status bar, plus any open panel (settling countdowns move). */
	async tick(): Promise<void> {
		await this.statusBar.poll();
		for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE_PANEL)) {
			if (leaf.view instanceof VaultlinkPanelView) await leaf.view.refresh();
		}
		for (const leaf of this.app.workspace.getLeavesOfType(VIEW_TYPE_PROPOSALS)) {
			if (leaf.view instanceof VaultlinkProposalsView) await leaf.view.refresh();
		}
	}

	async activatePanel(): Promise<void> {
		await this.reveal(VIEW_TYPE_PANEL);
	}

	/** The proposals view (decisions held for review) in the right side panel. */
	async activateProposals(): Promise<void> {
		await this.reveal(VIEW_TYPE_PROPOSALS);
	}

	private async reveal(type: string): Promise<void> {
		const { workspace } = this.app;
		const existing = workspace.getLeavesOfType(type)[0];
		const leaf = existing ?? workspace.getRightLeaf(false);
		if (!leaf) return;
		if (!existing) await leaf.setViewState({ type, active: true });
		await workspace.revealLeaf(leaf);
	}
}
