// Browser entry for the screenshot harness: the real panel view class, run
// against the obsidian stub with a fake app and a daemon answering from the
// test fixtures. The page picks the note (and whether the daemon is up)
// with data-note / data-daemon on <body>.

import { installDomHelpers } from "../tests/dom-helpers";
import { fakeApp } from "../tests/fake-app";
import { WorkspaceLeaf } from "../tests/obsidian-stub";
import { DaemonClient, HttpRequest, HttpResponse } from "../src/api/client";
import { VaultlinkPanelView } from "../src/views/panel-view";
import status from "../tests/fixtures/status.json";
import digest from "../tests/fixtures/note-digest.json";
import failed from "../tests/fixtures/note-source-failed.json";
import settling from "../tests/fixtures/note-source-settling.json";
import other from "../tests/fixtures/note-other.json";

installDomHelpers(Node.prototype, HTMLElement.prototype, () => document);

const NOTES: Record<string, unknown> = {
	[digest.path]: digest,
	[failed.path]: failed,
	[settling.path]: settling,
	[other.path]: other,
};

const daemonUp = document.body.dataset.daemon !== "down";

async function request(req: HttpRequest): Promise<HttpResponse> {
	if (!daemonUp) throw new Error("net::ERR_CONNECTION_REFUSED");
	const url = new URL(req.url);
	if (url.pathname === "/status") return { status: 200, text: JSON.stringify(status) };
	if (url.pathname === "/note") {
		const note = NOTES[url.searchParams.get("path") ?? ""];
		return note
			? { status: 200, text: JSON.stringify(note) }
			: { status: 404, text: JSON.stringify({ error: "no such note" }) };
	}
	return { status: 404, text: JSON.stringify({ error: "unknown route" }) };
}

const client = new DaemonClient({ request, baseUrl: () => "http://127.0.0.1:8765", token: async () => "harness" });
const app = fakeApp();
app.workspace.open(document.body.dataset.note ?? null);

const view = new VaultlinkPanelView(new WorkspaceLeaf(app) as never, client);
const header = view.containerEl.querySelector(".view-header") as HTMLElement;
header.createDiv({ cls: "view-header-title", text: view.getDisplayText() });
document.getElementById("sidebar")?.appendChild(view.containerEl);
void (view as unknown as { onOpen(): Promise<void> }).onOpen();
