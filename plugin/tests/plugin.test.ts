import "./setup-dom";
import { test } from "node:test";
import assert from "node:assert/strict";
import { Notice, setRequestHandler, Setting, TextComponent, WorkspaceLeaf } from "./obsidian-stub";
import VaultlinkPlugin from "../src/main";
import { TOKEN_PATH } from "../src/api/token";
import { VaultlinkPanelView, VIEW_TYPE_PANEL } from "../src/views/panel-view";
import { VaultlinkProposalsView, VIEW_TYPE_PROPOSALS } from "../src/views/proposals-view";
import { DEFAULT_SETTINGS, parsePollSeconds, readSettings } from "../src/settings";
import { FakeDaemon, fixtureText, json } from "./fake-daemon";
import { fakeApp } from "./fake-app";

const settle = () => new Promise((r) => setTimeout(r, 0));

type Stubbed = VaultlinkPlugin & {
	statusBarItems: HTMLElement[];
	commands: { id: string; name: string; callback?: () => unknown; checkCallback?: (c: boolean) => unknown }[];
	views: Map<string, (leaf: WorkspaceLeaf) => unknown>;
	settingTabs: { display(): void; containerEl: HTMLElement }[];
	data: unknown;
};

/** Load the plugin against a fake app, with the daemon behind the client. */
async function loaded(daemon: FakeDaemon, files: Record<string, string> = { [TOKEN_PATH]: "file-token\n" }) {
	const app = fakeApp(files);
	// The plugin calls Obsidian's requestUrl; the stub's answers come from the fake daemon.
	setRequestHandler(daemon.request as never);
	const plugin = new (VaultlinkPlugin as unknown as new (app: unknown) => Stubbed)(app);
	await plugin.onload();
	await settle(); // the first poll, started when the layout is ready
	return { app, plugin };
}

test("onload: registers the panel and proposals views, four commands, a status bar item and a settings tab", async () => {
	const { plugin } = await loaded(new FakeDaemon());
	try {
		assert.deepEqual([...plugin.views.keys()], [VIEW_TYPE_PANEL, VIEW_TYPE_PROPOSALS]);
		assert.deepEqual(plugin.commands.map((c) => c.id), ["open-panel", "review-proposals", "integrate-note-now", "rerun-failed"]);
		assert.equal(plugin.statusBarItems.length, 1);
		assert.equal(plugin.settingTabs.length, 1);
		assert.deepEqual(plugin.settings, DEFAULT_SETTINGS);
	} finally {
		plugin.unload();
	}
});

test("poll: status bar shows counts, read with the token from .vaultlink/token", async () => {
	const daemon = new FakeDaemon();
	const { plugin } = await loaded(daemon);
	try {
		assert.equal(daemon.to("GET /status").length, 1, "polled once as soon as the layout was ready");
		assert.equal(plugin.statusBarItems[0].textContent, "vaultlink: 3 queued, 2 failed (1 parked), 1 unreadable, 2 to review, backlog 120 (5 h 12 min)");
		assert.equal(daemon.requests.at(-1)?.headers.Authorization, "Bearer file-token");
		plugin.settings.token = "typed-token";
		await plugin.tick();
		assert.equal(daemon.requests.at(-1)?.headers.Authorization, "Bearer typed-token");
	} finally {
		plugin.unload();
	}
});

test("commands: integrate this note posts its path; re-run failed posts {failed: true}", async () => {
	const daemon = new FakeDaemon({ "POST /rerun": () => json(200, fixtureText("rerun.json")) });
	const { app, plugin } = await loaded(daemon);
	Notice.shown = [];
	try {
		const integrate = plugin.commands.find((c) => c.id === "integrate-note-now")!;
		assert.equal(integrate.checkCallback!(true), false, "hidden with no note open");
		app.workspace.open("daily/2026-06-19.md");
		assert.equal(integrate.checkCallback!(true), true);
		integrate.checkCallback!(false);
		await settle();
		await settle();
		plugin.commands.find((c) => c.id === "rerun-failed")!.callback!();
		await settle();
		await settle();
		const bodies = daemon.to("POST /rerun").map((r) => JSON.parse(r.body ?? ""));
		assert.deepEqual(bodies, [{ path: "daily/2026-06-19.md" }, { failed: true }]);
		assert.deepEqual(Notice.shown, ["vaultlink: queued daily/2026-06-19.md", "vaultlink: queued daily/2026-06-19.md"]);
	} finally {
		plugin.unload();
	}
});

test("open panel: creates the view in the right sidebar once, then reveals the same leaf", async () => {
	const { app, plugin } = await loaded(new FakeDaemon());
	try {
		plugin.commands.find((c) => c.id === "open-panel")!.callback!();
		await settle();
		await plugin.activatePanel();
		assert.equal(app.workspace.leaves.length, 1);
		assert.deepEqual(app.workspace.leaves[0].viewState, { type: VIEW_TYPE_PANEL, active: true });
		assert.equal(app.workspace.revealed.length, 2);
		const view = plugin.views.get(VIEW_TYPE_PANEL)!(app.workspace.leaves[0]);
		assert.ok(view instanceof VaultlinkPanelView);
	} finally {
		plugin.unload();
	}
});

test("review proposals: the command opens the proposals view in the right sidebar", async () => {
	const { app, plugin } = await loaded(new FakeDaemon());
	try {
		plugin.commands.find((c) => c.id === "review-proposals")!.callback!();
		await settle();
		assert.deepEqual(app.workspace.leaves[0].viewState, { type: VIEW_TYPE_PROPOSALS, active: true });
		const view = plugin.views.get(VIEW_TYPE_PROPOSALS)!(app.workspace.leaves[0]);
		assert.ok(view instanceof VaultlinkProposalsView);
	} finally {
		plugin.unload();
	}
});

test("settings tab: four settings; a valid poll interval is saved and polling restarts", async () => {
	const { plugin } = await loaded(new FakeDaemon());
	try {
		Setting.all = [];
		plugin.settingTabs[0].display();
		assert.deepEqual(
			Setting.all.map((s) => s.nameEl.textContent),
			["Daemon URL", "Token", "Poll interval (seconds)", "Allow a daemon on another computer"],
		);
		const [url, token, poll] = Setting.all.map((s) => s.texts[0] as TextComponent);
		assert.equal(url.getValue(), "http://127.0.0.1:8765");
		assert.equal(token.inputEl.getAttribute("type") ?? token.inputEl.type, "password");
		await poll.type("abc");
		assert.equal(plugin.settings.pollSeconds, 10, "garbage is ignored while typing");
		await poll.type("30");
		assert.equal(plugin.settings.pollSeconds, 30);
		await url.type("http://127.0.0.1:9000");
		assert.deepEqual(plugin.data, {
			daemonUrl: "http://127.0.0.1:9000",
			token: "",
			pollSeconds: 30,
			allowRemoteDaemon: false,
		});
	} finally {
		plugin.unload();
	}
});

test("settings: stored data is merged over defaults and bad values dropped", () => {
	assert.deepEqual(readSettings(null), DEFAULT_SETTINGS);
	assert.deepEqual(readSettings({ daemonUrl: " http://h:1 ", token: "t", pollSeconds: "5" }), {
		daemonUrl: "http://h:1",
		token: "t",
		pollSeconds: 5,
		allowRemoteDaemon: false,
	});
	assert.deepEqual(readSettings({ daemonUrl: "", pollSeconds: 0 }), DEFAULT_SETTINGS);
	assert.equal(parsePollSeconds(1), null);
	assert.equal(parsePollSeconds("2.6"), 3);
});
