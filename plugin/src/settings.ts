// Plugin settings and their tab.

import { App, Plugin, PluginSettingTab, Setting } from "obsidian";

export interface VaultlinkSettings {
	daemonUrl: string;
	/** Empty means: read .vaultlink/token from the vault. */
	token: string;
	pollSeconds: number;
}

export const DEFAULT_SETTINGS: VaultlinkSettings = {
	daemonUrl: "http://127.0.0.1:8765",
	token: "",
	pollSeconds: 10,
};

/** Below this, polling a local daemon is busywork with no visible gain. */
export const MIN_POLL_SECONDS = 2;

/** Merge stored data over the defaults, dropping values of the wrong type. */
export function readSettings(stored: unknown): VaultlinkSettings {
	const s = { ...DEFAULT_SETTINGS };
	if (typeof stored !== "object" || stored === null) return s;
	const d = stored as Record<string, unknown>;
	if (typeof d.daemonUrl === "string" && d.daemonUrl.trim()) s.daemonUrl = d.daemonUrl.trim();
	if (typeof d.token === "string") s.token = d.token;
	const poll = parsePollSeconds(d.pollSeconds);
	if (poll !== null) s.pollSeconds = poll;
	return s;
}

export function parsePollSeconds(v: unknown): number | null {
	const n = typeof v === "number" ? v : typeof v === "string" ? Number(v.trim()) : NaN;
	return Number.isFinite(n) && n >= MIN_POLL_SECONDS ? Math.round(n) : null;
}

/** What the tab needs from the plugin; an interface keeps the import one-way. */
export interface SettingsHost extends Plugin {
	settings: VaultlinkSettings;
	saveSettings(): Promise<void>;
	/** Called after the poll interval changes. */
	restartPolling(): void;
}

export class VaultlinkSettingTab extends PluginSettingTab {
	constructor(app: App, private readonly host: SettingsHost) {
		super(app, host);
	}

	display(): void {
		const { containerEl } = this;
		containerEl.empty();

		new Setting(containerEl)
			.setName("Daemon URL")
			.setDesc("Where `vaultlink watch` serves its status API.")
			.addText((text) =>
				text
					.setPlaceholder(DEFAULT_SETTINGS.daemonUrl)
					.setValue(this.host.settings.daemonUrl)
					.onChange(async (value) => {
						this.host.settings.daemonUrl = value.trim() || DEFAULT_SETTINGS.daemonUrl;
						await this.host.saveSettings();
					}),
			);

		new Setting(containerEl)
			.setName("Token")
			.setDesc("Leave empty to use .vaultlink/token from this vault. A token here wins.")
			.addText((text) => {
				text.inputEl.type = "password";
				text
					.setPlaceholder("from .vaultlink/token")
					.setValue(this.host.settings.token)
					.onChange(async (value) => {
						this.host.settings.token = value.trim();
						await this.host.saveSettings();
					});
			});

		new Setting(containerEl)
			.setName("Poll interval (seconds)")
			.setDesc(`How often the status bar asks the daemon. At least ${MIN_POLL_SECONDS}.`)
			.addText((text) =>
				text
					.setPlaceholder(String(DEFAULT_SETTINGS.pollSeconds))
					.setValue(String(this.host.settings.pollSeconds))
					.onChange(async (value) => {
						const n = parsePollSeconds(value);
						if (n === null) return; // keep the old value while the user is typing
						this.host.settings.pollSeconds = n;
						await this.host.saveSettings();
						this.host.restartPolling();
					}),
			);
	}
}
