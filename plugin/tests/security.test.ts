// Security issue 36, finding 7: the plugin sends its token to no daemon off
// this computer unless the user allowed it in the settings, and gives no href
// to a daemon-supplied link target that is not a vault path.

import { container } from "./setup-dom";
import { test } from "node:test";
import assert from "node:assert/strict";
import { Modal, setRequestHandler, Setting, ToggleComponent, WorkspaceLeaf } from "./obsidian-stub";
import VaultlinkPlugin from "../src/main";
import { DaemonClient, RequestFn } from "../src/api/client";
import { isLoopbackUrl } from "../src/api/daemon-url";
import { TOKEN_PATH } from "../src/api/token";
import type { Decision, DigestNote } from "../src/api/types";
import { readSettings } from "../src/settings";
import { vaultHref } from "../src/views/dom-util";
import { renderDigest } from "../src/views/render-digest";
import { VaultlinkPanelView, VIEW_TYPE_PANEL } from "../src/views/panel-view";
import { FakeDaemon, fixture, fixtureText, json } from "./fake-daemon";
import { fakeApp } from "./fake-app";

const settle = () => new Promise((r) => setTimeout(r, 0));

const REMOTE = "http://192.168.1.20:8765";

/** A client whose token lookups are counted: a refused URL must not even read it. */
function counted(request: RequestFn, url: string, allowRemote?: () => boolean) {
	const lookups = { token: 0 };
	const client = new DaemonClient({
		request,
		baseUrl: () => url,
		token: async () => {
			lookups.token++;
			return "s3cret";
		},
		allowRemote,
	});
	return { client, lookups };
}

// -- the daemon URL -------------------------------------------------------------------------

test("daemon URL: loopback hosts count as this computer, everything else does not", () => {
	for (const url of ["http://127.0.0.1:8765", "http://localhost:9000/", "http://[::1]:8765", "https://LOCALHOST:1"]) {
		assert.equal(isLoopbackUrl(url), true, url);
	}
	for (const url of [
		REMOTE,
		"http://127.0.0.1.evil.example:8765",
		"http://localhost.evil.example",
		"http://127.0.0.1@evil.example:8765", // the host is evil.example
		"http://user:pw@127.0.0.1:8765", // credentials would travel too
		"http://evil.example/127.0.0.1",
		"file:///etc/passwd",
		"ftp://127.0.0.1",
		"127.0.0.1:8765", // no scheme: not a URL the client can call safely
		"",
	]) {
		assert.equal(isLoopbackUrl(url), false, url);
	}
});

test("client: a remote daemon URL gets no request and no token lookup, on any route", async () => {
	const daemon = new FakeDaemon();
	const { client, lookups } = counted(daemon.request, REMOTE);
	const results = [
		await client.status(),
		await client.note("daily/2026-06-20.md"),
		await client.rerun({ failed: true }),
		await client.undo(1),
		await client.redo(1),
	];
	assert.deepEqual(results.map((r) => r.kind), Array(5).fill("remote-blocked"));
	assert.equal(daemon.requests.length, 0, "nothing was sent");
	assert.equal(lookups.token, 0, "the token was not even read");
	const [first] = results;
	assert.ok(first.kind === "remote-blocked");
	assert.match(first.message, /192\.168\.1\.20:8765 is not on this computer/);
	assert.match(first.message, /http:\/\/127\.0\.0\.1:8765/, "says what to set instead");
	assert.match(first.message, /Allow a daemon on another computer/, "names the switch");
});

test("client: with the remote switch on, the remote daemon is asked with the token", async () => {
	const daemon = new FakeDaemon();
	const { client } = counted(daemon.request, REMOTE, () => true);
	assert.equal((await client.status()).kind, "ok");
	assert.equal(daemon.requests[0].url, `${REMOTE}/status`);
	assert.equal(daemon.requests[0].headers.Authorization, "Bearer s3cret");
});

test("client: turning the switch off stops the next request, even after a good /status", async () => {
	const daemon = new FakeDaemon({ "GET /note": () => json(200, fixtureText("note-digest.json")) });
	let allowed = true;
	const { client } = counted(daemon.request, REMOTE, () => allowed);
	assert.equal((await client.status()).kind, "ok");
	allowed = false;
	assert.equal((await client.note("digest/wiki/hybrid-search.md")).kind, "remote-blocked");
	assert.equal(daemon.requests.length, 1, "only the /status sent while it was allowed");
});

test("settings: only a stored true allows a remote daemon", () => {
	assert.equal(readSettings(null).allowRemoteDaemon, false);
	assert.equal(readSettings({ allowRemoteDaemon: true }).allowRemoteDaemon, true);
	for (const v of ["true", 1, "yes", {}]) assert.equal(readSettings({ allowRemoteDaemon: v }).allowRemoteDaemon, false);
});

// -- the plugin as a whole -----------------------------------------------------------------

type Stubbed = VaultlinkPlugin & {
	statusBarItems: HTMLElement[];
	settingTabs: { display(): void }[];
	data: unknown;
};

async function loadedWith(daemon: FakeDaemon, data: unknown) {
	const app = fakeApp({ [TOKEN_PATH]: "file-token\n" });
	setRequestHandler(daemon.request as never);
	const plugin = new (VaultlinkPlugin as unknown as new (app: unknown) => Stubbed)(app);
	plugin.data = data;
	await plugin.onload();
	await settle();
	return { app, plugin };
}

test("plugin: a remote daemon URL sends nothing; status bar and panel say why and what to do", async () => {
	const daemon = new FakeDaemon({ "GET /note": () => json(200, fixtureText("note-digest.json")) });
	const { app, plugin } = await loadedWith(daemon, { daemonUrl: REMOTE });
	try {
		const bar = plugin.statusBarItems[0];
		assert.equal(bar.textContent, "vaultlink: daemon URL not local, see settings");
		assert.match(bar.getAttribute("aria-label") ?? "", /not on this computer.*Set it back to http:\/\/127\.0\.0\.1:8765/s);

		const leaf = new WorkspaceLeaf(app);
		const view = new VaultlinkPanelView(leaf as never, plugin.client);
		await (view as unknown as { onOpen(): Promise<void> }).onOpen();
		app.workspace.open("digest/wiki/hybrid-search.md");
		await settle();
		const panel = view.contentEl;
		assert.equal(panel.querySelector(".vaultlink-failure-title")?.textContent, "Daemon URL is not on this computer");
		assert.match(panel.querySelector(".vaultlink-hint")?.textContent ?? "", /Settings → vaultlink/);
		assert.equal(daemon.requests.length, 0, "neither the poll nor the panel sent anything");
		assert.equal(VIEW_TYPE_PANEL, view.getViewType());
	} finally {
		plugin.unload();
	}
});

/** The settings tab's remote switch, freshly displayed. */
function remoteSwitch(plugin: Stubbed): ToggleComponent {
	Setting.all = [];
	plugin.settingTabs[0].display();
	const setting = Setting.all.find((s) => s.nameEl.textContent === "Allow a daemon on another computer");
	assert.ok(setting, "the settings tab has the remote switch");
	return setting.toggles[0];
}

test("settings: the remote switch warns first; Cancel keeps it off, Allow turns it on", async () => {
	const daemon = new FakeDaemon();
	const { plugin } = await loadedWith(daemon, { daemonUrl: REMOTE });
	Modal.open = [];
	try {
		const toggle = remoteSwitch(plugin);
		assert.equal(toggle.getValue(), false, "off by default");

		let clicking = toggle.click();
		await settle();
		assert.equal(Modal.open.length, 1, "turning it on asks first");
		assert.match(Modal.open[0].contentEl.textContent ?? "", /token.*clear text/s);
		(Modal.open[0].contentEl.querySelector("button.vaultlink-confirm-no") as HTMLElement).click();
		await clicking;
		assert.equal(plugin.settings.allowRemoteDaemon, false);
		assert.equal(toggle.getValue(), false, "the switch goes back off");
		assert.equal(daemon.requests.length, 0);

		clicking = toggle.click();
		await settle();
		(Modal.open[0].contentEl.querySelector("button.vaultlink-confirm-yes") as HTMLElement).click();
		await clicking;
		await settle();
		assert.equal(plugin.settings.allowRemoteDaemon, true);
		assert.equal((plugin.data as { allowRemoteDaemon: boolean }).allowRemoteDaemon, true, "saved");
		assert.equal(daemon.requests.at(-1)?.url, `${REMOTE}/status`, "polled at once, now allowed");
		assert.equal(plugin.statusBarItems[0].textContent?.startsWith("vaultlink: 3 queued"), true);
	} finally {
		plugin.unload();
	}
});

// -- link targets ----------------------------------------------------------------------------

test("links: a vault path keeps its href; any scheme, slash or control character gets none", () => {
	for (const path of ["daily/2026-06-20.md", "digest/wiki/a b.md", "daily/10:30 standup.md", "notes/x.md#Heading"]) {
		assert.equal(vaultHref(path), path, path);
	}
	for (const path of [
		"javascript:alert(1)",
		"JavaScript:alert(1)",
		" javascript:alert(1)",
		"java\nscript:alert(1)",
		"java\tscript:alert(1)",
		"\u0001javascript:alert(1)",
		"data:text/html,<script>alert(1)</script>",
		"https://evil.example/",
		"obsidian://advanced-uri?commandid=app:delete-file",
		"//evil.example/x",
		"\\\\evil.example\\x",
		"/etc/passwd",
		"C:/Users/me/x.md",
		"",
	]) {
		assert.equal(vaultHref(path), null, JSON.stringify(path));
	}
});

test("links: hostile targets in a /note answer render with no href and open nothing", () => {
	const note = fixture<DigestNote>("note-digest.json");
	note.sources[0].path = "javascript:alert(document.cookie)";
	note.related[0].path = "https://evil.example/phish";
	note.decisions[0].target = "data:text/html,<script>alert(1)</script>";
	const opened: string[] = [];
	const el = container();
	renderDigest(el, note, {
		openNote: (p) => opened.push(p),
		undo: (_d: Decision) => {},
		redo: (_d: Decision) => {},
		rerun: () => {},
		refresh: () => {},
	});
	const links = [...el.querySelectorAll("a")] as HTMLElement[];
	const hrefs = links.map((a) => a.getAttribute("href")).filter((h): h is string => h !== null);
	assert.ok(hrefs.length > 0, "the safe links keep theirs");
	for (const h of hrefs) assert.doesNotMatch(h, /^(javascript|https|data):/i);
	const hostile = links.filter((a) => a.classList.contains("vaultlink-not-a-note"));
	assert.equal(hostile.length, 3);
	for (const a of hostile) {
		assert.equal(a.getAttribute("href"), null);
		assert.equal(a.getAttribute("data-href"), null);
		a.click();
	}
	assert.deepEqual(opened, [], "clicking them asks the workspace for nothing");
	(el.querySelector(".vaultlink-source:nth-child(2) a") as HTMLElement).click();
	assert.deepEqual(opened, ["resources/bm25-notes.md"], "a real source still opens");
});
