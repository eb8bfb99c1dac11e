import "./setup-dom";
import { test } from "node:test";
import assert from "node:assert/strict";
import { Notice, WorkspaceLeaf } from "./obsidian-stub";
import { DaemonClient } from "../src/api/client";
import type { Proposal, ProposalList } from "../src/api/types";
import { VaultlinkProposalsView, VIEW_TYPE_PROPOSALS } from "../src/views/proposals-view";
import { NO_PROPOSALS, renderProposals, STALE_TEXT } from "../src/views/render-proposals";
import { FakeDaemon, fixture, fixtureText, json } from "./fake-daemon";
import { fakeApp } from "./fake-app";

const settle = () => new Promise((r) => setTimeout(r, 0));

function setup(routes: ConstructorParameters<typeof FakeDaemon>[0] = {}) {
	const daemon = new FakeDaemon({
		"GET /proposals": () => json(200, fixtureText("proposals.json")),
		...routes,
	});
	const client = new DaemonClient({
		request: daemon.request,
		baseUrl: () => "http://127.0.0.1:8765",
		token: async () => "t",
	});
	const app = fakeApp();
	const view = new VaultlinkProposalsView(new WorkspaceLeaf(app) as never, client);
	return { daemon, app, view };
}

async function open(view: VaultlinkProposalsView): Promise<void> {
	await (view as unknown as { onOpen(): Promise<void> }).onOpen();
	await settle();
}

const card = (view: VaultlinkProposalsView, id: number) =>
	view.contentEl.querySelector(`[data-proposal-id="${id}"]`) as HTMLElement;

test("proposals: lists each proposal with why it waits, its unit's notes and three answers", async () => {
	const { view, app } = setup();
	assert.equal(view.getViewType(), VIEW_TYPE_PROPOSALS);
	await open(view);
	assert.equal(view.contentEl.querySelector(".vaultlink-count")?.textContent, "2");
	const first = card(view, 3);
	assert.equal(first.querySelector(".vaultlink-action")?.textContent, "CORRECT");
	assert.equal(first.querySelector(".vaultlink-proposal-reason")?.textContent,
		"Held: a correction: it changes what the node says");
	assert.deepEqual([...first.querySelectorAll("button")].map((b) => b.textContent),
		["Approve", "Reject", "Create as new"]);
	const links = [...first.querySelectorAll("a.vaultlink-link")].map((a) => a.getAttribute("href"));
	assert.deepEqual(links, ["digest/wiki/hybrid-search.md", "daily/2026-06-20.md"]);
	(first.querySelector(".vaultlink-unit a") as HTMLElement).click();
	assert.deepEqual(app.workspace.opened, [{ linktext: "daily/2026-06-20.md", sourcePath: "" }]);
});

test("proposals: the diff is shown line by line, added and removed lines marked", async () => {
	const { view } = setup();
	await open(view);
	const lines = [...card(view, 3).querySelectorAll(".vaultlink-diff-line")];
	const kinds = lines.map((l) => l.className.replace("vaultlink-diff-line vaultlink-diff-", ""));
	assert.deepEqual(kinds, ["meta", "meta", "hunk", "context", "del", "add", "context"]);
	assert.match(lines[5].textContent ?? "", /^\+- Candidate depth: the top 200/);
});

test("proposals: Approve posts to the proposal, says what was written and lists again", async () => {
	const { view, daemon } = setup({ "POST /proposals/3/approve": () => json(200, fixtureText("settle-approved.json")) });
	Notice.shown = [];
	await open(view);
	(card(view, 3).querySelector("button.vaultlink-approve") as HTMLButtonElement).click();
	await settle();
	assert.equal(daemon.to("POST /proposals/3/approve").length, 1);
	assert.equal(daemon.to("POST /proposals/3/approve")[0].body, "{}");
	assert.match(Notice.shown[0], /^vaultlink: proposal #3 approved: CORRECT digest\/wiki\/hybrid-search\.md written/);
	assert.equal(daemon.to("GET /proposals").length, 2, "listed again after the answer");
});

test("proposals: Reject and Create as new post their own verbs", async () => {
	const rejected = { ...fixture("settle-approved.json"), message: "rejected: nothing written" };
	const { view, daemon } = setup({
		"POST /proposals/3/reject": () => json(200, rejected),
		"POST /proposals/3/new": () => json(200, { ...rejected, message: "CREATE digest/wiki/candidate-depth.md written" }),
	});
	Notice.shown = [];
	await open(view);
	(card(view, 3).querySelector("button.vaultlink-reject") as HTMLButtonElement).click();
	await settle();
	assert.equal(daemon.to("POST /proposals/3/reject").length, 1);
	assert.equal(Notice.shown[0], "vaultlink: proposal #3 rejected: rejected: nothing written");
	(card(view, 3).querySelector("button.vaultlink-new") as HTMLButtonElement).click();
	await settle();
	assert.equal(daemon.to("POST /proposals/3/new").length, 1);
	assert.match(Notice.shown[1], /created as a new node: CREATE digest\/wiki\/candidate-depth\.md/);
});

test("proposals: a stale proposal is shown as re-decided, and its button has it decided again", async () => {
	const { view, daemon } = setup({ "POST /proposals/2/approve": () => json(200, fixtureText("settle-stale.json")) });
	Notice.shown = [];
	await open(view);
	const stale = card(view, 2);
	assert.ok(stale.classList.contains("is-stale"));
	assert.equal(stale.querySelector(".vaultlink-stale")?.textContent, STALE_TEXT);
	assert.deepEqual([...stale.querySelectorAll("button")].map((b) => b.textContent), ["Re-decide", "Reject"]);
	(stale.querySelector("button.vaultlink-redecide") as HTMLButtonElement).click();
	await settle();
	assert.equal(daemon.to("POST /proposals/2/approve").length, 1);
	assert.equal(Notice.shown[0],
		"vaultlink: digest/procedure/rebuild-index.md changed since proposal #2; nothing written, the next run decides the unit again");
});

test("proposals: a refusal is said in the daemon's words; none waiting says so", async () => {
	const { view } = setup({
		"POST /proposals/3/approve": () => json(409, { error: "proposal #3 is rejected already" }),
	});
	Notice.shown = [];
	await open(view);
	(card(view, 3).querySelector("button.vaultlink-approve") as HTMLButtonElement).click();
	await settle();
	assert.equal(Notice.shown[0], "vaultlink: cannot settle proposal #3: proposal #3 is rejected already");
	const el = document.createElement("div");
	renderProposals(el, { kind: "ok", data: { proposals: [], open: 0 } }, {
		openNote: () => {}, settle: () => {}, refresh: () => {},
	});
	assert.equal(el.querySelector(".vaultlink-muted")?.textContent, NO_PROPOSALS);
});

test("proposals: a daemon path with a scheme gets no href", () => {
	const list = fixture<ProposalList>("proposals.json");
	const evil: Proposal = { ...list.proposals[0], target: "javascript:alert(1)", unit: { ...list.proposals[0].unit, paths: ["obsidian://open?x"] } };
	const el = document.createElement("div");
	renderProposals(el, { kind: "ok", data: { proposals: [evil], open: 1 } }, {
		openNote: () => assert.fail("opened"), settle: () => {}, refresh: () => {},
	});
	const anchors = [...el.querySelectorAll("a")];
	assert.equal(anchors.length, 2);
	for (const a of anchors) assert.equal(a.getAttribute("href"), null);
});

test("proposals: daemon down renders the failure state with Retry", async () => {
	const { view } = setup({ "GET /status": () => { throw new Error("net::ERR_CONNECTION_REFUSED"); } });
	await open(view);
	assert.equal(view.contentEl.querySelector(".vaultlink-failure-title")?.textContent, "vaultlink daemon not running");
	assert.ok(view.contentEl.querySelector("button.vaultlink-retry"));
});
