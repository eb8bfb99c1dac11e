import "./setup-dom";
import { test } from "node:test";
import assert from "node:assert/strict";
import { Modal, Notice, WorkspaceLeaf } from "./obsidian-stub";
import { DaemonClient } from "../src/api/client";
import { VaultlinkPanelView, VIEW_TYPE_PANEL } from "../src/views/panel-view";
import { makePanelActions } from "../src/views/panel-actions";
import { FakeDaemon, fixture, fixtureText, json } from "./fake-daemon";
import { fakeApp } from "./fake-app";

/** Let queued promise callbacks (the client's awaits) run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

function setup(routes: ConstructorParameters<typeof FakeDaemon>[0] = {}) {
	const daemon = new FakeDaemon({
		"GET /note": (req) => {
			const path = new URL(req.url).searchParams.get("path");
			if (path === "digest/wiki/hybrid-search.md") return json(200, fixtureText("note-digest.json"));
			if (path === "daily/2026-06-19.md") return json(200, fixtureText("note-source-failed.json"));
			return json(404, { error: `no such note: ${path}` });
		},
		...routes,
	});
	const client = new DaemonClient({
		request: daemon.request,
		baseUrl: () => "http://127.0.0.1:8765",
		token: async () => "t",
	});
	const app = fakeApp();
	const leaf = new WorkspaceLeaf(app);
	const view = new VaultlinkPanelView(leaf as never, client);
	return { daemon, app, view };
}

test("panel: view type, no note open, then follows file-open to a digest node", async () => {
	const { app, view } = setup();
	assert.equal(view.getViewType(), VIEW_TYPE_PANEL);
	assert.equal(VIEW_TYPE_PANEL, "vaultlink-panel");
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	assert.equal(view.contentEl.textContent, "No note open.");

	app.workspace.open("digest/wiki/hybrid-search.md");
	assert.equal(view.contentEl.textContent, "Loading…", "loading shows while the daemon answers");
	await settle();
	assert.equal(view.contentEl.querySelector(".vaultlink-title")?.textContent, "Hybrid search");

	app.workspace.open("daily/2026-06-19.md");
	await settle();
	assert.equal(view.contentEl.querySelector(".vaultlink-error")?.textContent, "model timed out after 120 s");

	app.workspace.open("notes/new.md");
	await settle();
	assert.equal(view.contentEl.textContent, "vaultlink has not touched this note.");
});

test("panel: non-markdown files count as no note; same note is not re-fetched on leaf change", async () => {
	const { app, view, daemon } = setup();
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	app.workspace.open("digest/wiki/hybrid-search.md");
	await settle();
	app.workspace.trigger("active-leaf-change", null);
	await settle();
	assert.equal(daemon.to("GET /note").length, 1);
	app.workspace.open("assets/diagram.png");
	await settle();
	assert.equal(view.contentEl.textContent, "No note open.");
});

test("panel: a slow answer for the previous note does not overwrite the current one", async () => {
	let release: () => void = () => {};
	const gate = new Promise<void>((r) => (release = r));
	const { app, view } = setup({
		"GET /note": async (req) => {
			const path = new URL(req.url).searchParams.get("path");
			if (path === "digest/wiki/hybrid-search.md") {
				await gate;
				return json(200, fixtureText("note-digest.json"));
			}
			return json(200, fixtureText("note-source-failed.json"));
		},
	});
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	app.workspace.open("digest/wiki/hybrid-search.md");
	await settle();
	app.workspace.open("daily/2026-06-19.md");
	await settle();
	release();
	await settle();
	assert.ok(view.contentEl.querySelector(".vaultlink-source-note"));
	assert.equal(view.contentEl.querySelector(".vaultlink-digest"), null);
});

test("panel: daemon down renders the failure state with the watch hint", async () => {
	const { app, view } = setup({
		"GET /status": () => {
			throw new Error("net::ERR_CONNECTION_REFUSED");
		},
	});
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	app.workspace.open("digest/wiki/hybrid-search.md");
	await settle();
	assert.equal(view.contentEl.querySelector(".vaultlink-failure-title")?.textContent, "vaultlink daemon not running");
	assert.equal(view.contentEl.querySelector(".vaultlink-hint code")?.textContent, "vaultlink watch");
});

test("panel: Undo posts the id, shows a Notice and refreshes; unload stops following", async () => {
	const { app, view, daemon } = setup({ "POST /undo": () => json(200, fixtureText("undo.json")) });
	Notice.shown = [];
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	app.workspace.open("digest/wiki/hybrid-search.md");
	await settle();
	(view.contentEl.querySelector("button.vaultlink-undo") as HTMLElement).click();
	await settle();
	assert.deepEqual(JSON.parse(daemon.to("POST /undo")[0].body ?? ""), { id: 31 });
	assert.deepEqual(Notice.shown, ["vaultlink: undid REFINE of digest/wiki/hybrid-search.md"]);
	assert.equal(daemon.to("GET /note").length, 2, "refreshed after the undo");

	(view.contentEl.querySelector("a.vaultlink-link") as HTMLElement).click();
	assert.deepEqual(app.workspace.opened, [
		{ linktext: "daily/2026-06-20.md", sourcePath: "digest/wiki/hybrid-search.md" },
	]);

	view.unload();
	assert.equal(app.workspace.listenerCount("file-open"), 0);
	assert.equal(app.workspace.listenerCount("active-leaf-change"), 0);
});

test("panel: a refused undo (409) shows the daemon's words and brings the Undo button back", async () => {
	const conflict = fixture("error-undo-409.json").error as string;
	const { app, view } = setup({ "POST /undo": () => json(409, fixtureText("error-undo-409.json")) });
	Notice.shown = [];
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	app.workspace.open("digest/wiki/hybrid-search.md");
	await settle();
	const before = view.contentEl.querySelector("button.vaultlink-undo") as HTMLButtonElement;
	before.click();
	assert.equal(before.disabled, true);
	await settle();
	assert.deepEqual(Notice.shown, [`vaultlink: cannot undo: ${conflict}`]);
	const after = view.contentEl.querySelector("button.vaultlink-undo") as HTMLButtonElement;
	assert.notEqual(after, before, "redrawn although the answer did not change");
	assert.equal(after.disabled, false);
});

test("actions: a 409 on undo shows the daemon's message in a Notice, then refreshes", async () => {
	const shown: string[] = [];
	let refreshed = 0;
	const conflict = fixture("error-undo-409.json").error as string;
	const actions = makePanelActions({
		client: {
			undo: async () => ({ kind: "rejected", status: 409, message: conflict }),
			redo: async () => ({ kind: "down", message: "unused" }),
			rerun: async () => ({ kind: "down", message: "Cannot reach the vaultlink daemon." }),
		},
		notify: (m) => shown.push(m),
		confirm: async () => assert.fail("a plain conflict asks nothing"),
		openNote: () => {},
		refresh: () => refreshed++,
	});
	await actions.undo(fixture("note-digest.json").decisions[0]);
	await actions.rerun("daily/2026-06-19.md");
	assert.deepEqual(shown, [
		`vaultlink: cannot undo: ${conflict}`,
		"vaultlink: vaultlink daemon not running. Cannot reach the vaultlink daemon.",
	]);
	assert.equal(refreshed, 2);
});

test("actions: Re-run posts {path} and names what was queued", async () => {
	const shown: string[] = [];
	const { daemon } = setup({ "POST /rerun": () => json(200, fixtureText("rerun.json")) });
	const client = new DaemonClient({ request: daemon.request, baseUrl: () => "http://127.0.0.1:1", token: async () => "t" });
	const actions = makePanelActions({
		client,
		notify: (m) => shown.push(m),
		confirm: async () => false,
		openNote: () => {},
		refresh: () => {},
	});
	await actions.rerun("daily/2026-06-19.md");
	assert.deepEqual(JSON.parse(daemon.to("POST /rerun")[0].body ?? ""), { path: "daily/2026-06-19.md" });
	assert.deepEqual(shown, ["vaultlink: queued daily/2026-06-19.md"]);
});

function cascadeClient(answers: { undo: unknown[] }) {
	const sent: unknown[] = [];
	const daemon = new FakeDaemon({
		"POST /undo": (req) => {
			sent.push(JSON.parse(req.body ?? ""));
			return answers.undo.shift() as ReturnType<typeof json>;
		},
		"POST /redo": () => json(200, fixtureText("redo.json")),
	});
	const client = new DaemonClient({ request: daemon.request, baseUrl: () => "http://127.0.0.1:1", token: async () => "t" });
	return { client, sent, daemon };
}

test("actions: an undo others depend on asks first, then cascades as one group", async () => {
	const { client, sent } = cascadeClient({
		undo: [
			json(409, fixtureText("error-undo-409-needs.json")),
			json(200, { ...fixture<object>("undo.json"), ids: [40, 41] }),
		],
	});
	const shown: string[] = [];
	const asked: [string, string[], string][] = [];
	const actions = makePanelActions({
		client,
		notify: (m) => shown.push(m),
		confirm: async (title, lines, yes) => {
			asked.push([title, lines, yes]);
			return true;
		},
		openNote: () => {},
		refresh: () => {},
	});
	const decision = fixture("note-digest.json").decisions[0];
	await actions.undo(decision);
	assert.deepEqual(sent, [{ id: decision.id }, { id: decision.id, cascade: true }]);
	assert.equal(asked.length, 1);
	assert.deepEqual(asked[0][1], [
		"#18 REFINE digest/procedure/postgres-vacuum.md (it links to [[digest/wiki/every-document.md]])",
	]);
	assert.equal(asked[0][2], "Undo all 2");
	assert.deepEqual(shown, [`vaultlink: undid ${decision.action} of ${decision.target} and 1 more change(s)`]);
});

test("actions: answering no to the cascade changes nothing", async () => {
	const { client, sent } = cascadeClient({ undo: [json(409, fixtureText("error-undo-409-needs.json"))] });
	const shown: string[] = [];
	let refreshed = 0;
	const actions = makePanelActions({
		client,
		notify: (m) => shown.push(m),
		confirm: async () => false,
		openNote: () => {},
		refresh: () => refreshed++,
	});
	await actions.undo(fixture("note-digest.json").decisions[0]);
	assert.equal(sent.length, 1);
	assert.deepEqual(shown, []);
	assert.equal(refreshed, 1);
});

test("panel: the cascade question is a Modal; its button undoes the group", async () => {
	const { daemon, app, view } = setup({
		"POST /undo": (req) =>
			JSON.parse(req.body ?? "").cascade
				? json(200, { ...fixture<object>("undo.json"), ids: [40, 41] })
				: json(409, fixtureText("error-undo-409-needs.json")),
	});
	Notice.shown = [];
	Modal.open = [];
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	app.workspace.open("digest/wiki/hybrid-search.md");
	await settle();
	(view.contentEl.querySelector("button.vaultlink-undo") as HTMLElement).click();
	await settle();
	assert.equal(Modal.open.length, 1);
	const modal = Modal.open[0];
	assert.match(modal.contentEl.textContent ?? "", /#18 REFINE digest\/procedure\/postgres-vacuum\.md/);
	(modal.contentEl.querySelector("button.vaultlink-confirm-yes") as HTMLElement).click();
	await settle();
	await settle();
	assert.equal(Modal.open.length, 0);
	assert.deepEqual(
		daemon.to("POST /undo").map((r) => JSON.parse(r.body ?? "")),
		[{ id: 31 }, { id: 31, cascade: true }],
	);
	assert.deepEqual(Notice.shown, ["vaultlink: undid REFINE of digest/wiki/hybrid-search.md and 1 more change(s)"]);
});

test("actions: Redo posts the undone decision's id", async () => {
	const { client, daemon } = cascadeClient({ undo: [] });
	const shown: string[] = [];
	const actions = makePanelActions({
		client,
		notify: (m) => shown.push(m),
		confirm: async () => false,
		openNote: () => {},
		refresh: () => {},
	});
	const decision = { ...fixture("note-digest.json").decisions[0], undone: true, redoable: true };
	await actions.redo(decision);
	assert.deepEqual(JSON.parse(daemon.to("POST /redo")[0].body ?? ""), { id: decision.id });
	assert.deepEqual(shown, [`vaultlink: redid ${decision.action} of ${decision.target}`]);
});
