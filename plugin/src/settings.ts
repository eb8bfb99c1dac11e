// Plugin settings and their tab.

import { App, Plugin, PluginSettingTab, Setting } from "obsidian";
import { DEFAULT_DAEMON_URL } from "./api/daemon-url";
import { modalConfirm } from "./views/confirm-modal";

export interface VaultlinkSettings {
	daemonUrl: string;
	/** Empty means: read .vaultlink/token from the vault. */
	token: string;
	pollSeconds: number;
	/** Off: a daemon URL that is not loopback gets no request (and no token). */
	allowRemoteDaemon: boolean;
}

export const DEFAULT_SETTINGS: VaultlinkSettings = {
	daemonUrl: DEFAULT_DAEMON_URL,
	token: "",
	pollSeconds: 10,
	allowRemoteDaemon: false,
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
	// only a stored true, never a truthy string: this one sends the token away
	s.allowRemoteDaemon = d.allowRemoteDaemon === true;
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
	/** Called after the poll interval or the remote-daemon switch changes. */
	restartPolling(): void;
}

/** The warning the remote-daemon switch asks the user to accept. */
export const REMOTE_WARNING: [string, string[], string, string] = [
	"Send your vault's token to a daemon on another computer?",
	[
		"Every request carries the token that lets anyone read your notes through the daemon.",
		"Over http:// it crosses the network in clear text; anyone on the way can copy it.",
		"Turn this on only for a daemon you run yourself, on a network you trust.",
	],
	"Allow",
	"Cancel",
];

export class VaultlinkSettingTab extends PluginSettingTab {
	constructor(app: App, private readonly host: SettingsHost) {
		super(app, host);
	}

	display(): void {
		const { containerEl } = this;
		containerEl.empty();

		new Setting(containerEl)
			.setName("Daemon URL")
			.setDesc("Where `vaultlink watch` serves its status API. An address on another computer also needs the switch below.")
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

		new Setting(containerEl)
			.setName("Allow a daemon on another computer")
			.setDesc(
				"Off: the plugin talks only to 127.0.0.1, localhost or [::1] and sends nothing to any other daemon URL. " +
					"On: it sends the vault's token to the daemon URL above, wherever it is.",
			)
			.addToggle((toggle) =>
				toggle.setValue(this.host.settings.allowRemoteDaemon).onChange(async (on) => {
					if (on && !(await modalConfirm(this.app)(...REMOTE_WARNING))) {
						toggle.setValue(false);
						return;
					}
					this.host.settings.allowRemoteDaemon = on;
					await this.host.saveSettings();
					this.host.restartPolling(); // the status bar says at once what changed
				}),
			);
	}
}
