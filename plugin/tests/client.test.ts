import { test } from "node:test";
import assert from "node:assert/strict";
import { DaemonClient, HttpRequest, RequestFn } from "../src/api/client";
import { resolveToken, TOKEN_PATH } from "../src/api/token";
import { FakeDaemon, fixture, fixtureText, json } from "./fake-daemon";

function client(request: RequestFn, opts: { token?: string | null; timeoutMs?: number; url?: string } = {}) {
	return new DaemonClient({
		request,
		baseUrl: () => opts.url ?? "http://127.0.0.1:8765",
		token: async () => (opts.token === undefined ? "s3cret" : opts.token),
		timeoutMs: opts.timeoutMs,
	});
}

test("status ok: parsed body, bearer token, GET to the configured URL", async () => {
	const daemon = new FakeDaemon();
	const res = await client(daemon.request, { url: "http://127.0.0.1:9999/" }).status();
	assert.equal(res.kind, "ok");
	assert.ok(res.kind === "ok");
	assert.equal(res.data.queue.length, 3);
	assert.equal(res.data.failed[0].error, "model timed out after 120 s");
	const [req] = daemon.requests;
	assert.equal(req.url, "http://127.0.0.1:9999/status", "trailing slash in the setting is dropped");
	assert.equal(req.method, "GET");
	assert.equal(req.headers.Authorization, "Bearer s3cret");
	assert.equal(req.throw, false, "status codes must reach the client, not throw");
});

test("daemon down: a thrown connection error becomes kind 'down' with the URL", async () => {
	const refused: RequestFn = async () => {
		throw new Error("net::ERR_CONNECTION_REFUSED");
	};
	const res = await client(refused).status();
	assert.equal(res.kind, "down");
	assert.ok(res.kind === "down");
	assert.match(res.message, /127\.0\.0\.1:8765/);
	assert.match(res.message, /ERR_CONNECTION_REFUSED/);
});

test("timeout: a daemon that never answers is 'down' after the client's own timeout", async () => {
	const hang: RequestFn = () => new Promise(() => {});
	const started = Date.now();
	const res = await client(hang, { timeoutMs: 60 }).status();
	assert.equal(res.kind, "down");
	assert.ok(res.kind === "down");
	assert.match(res.message, /no answer within 0\.06 s/);
	assert.ok(Date.now() - started < 2000, "gave up promptly");
});

test("wrong token: 401 is 'unauthorized', and says whether a token was sent", async () => {
	const daemon = new FakeDaemon({ "GET /status": () => json(401, fixtureText("error-401.json")) });
	const withToken = await client(daemon.request).status();
	assert.equal(withToken.kind, "unauthorized");
	assert.ok(withToken.kind === "unauthorized");
	assert.match(withToken.message, /refused the token/);

	const noToken = await client(daemon.request, { token: null }).status();
	assert.ok(noToken.kind === "unauthorized");
	assert.match(noToken.message, /\.vaultlink\/token was not found/);
	assert.equal(daemon.requests[1].headers.Authorization, undefined, "no empty Bearer header");
});

test("401 with a non-JSON body is still 'unauthorized', not 'bad-response'", async () => {
	const daemon = new FakeDaemon({ "GET /status": () => json(401, "Unauthorized") });
	assert.equal((await client(daemon.request).status()).kind, "unauthorized");
});

test("version mismatch: api_version 2 asks to update the plugin", async () => {
	const body = { ...fixture<object>("status.json"), api_version: 2 };
	const daemon = new FakeDaemon({ "GET /status": () => json(200, body) });
	const res = await client(daemon.request).status();
	assert.ok(res.kind === "version-mismatch");
	assert.match(res.message, /api_version 2; this plugin speaks 1\. Update the plugin/);
});

test("version mismatch: no api_version (an older daemon) asks to update vaultlink", async () => {
	const { api_version: _drop, ...body } = fixture("status.json");
	const daemon = new FakeDaemon({ "GET /status": () => json(200, body) });
	const res = await client(daemon.request).status();
	assert.ok(res.kind === "version-mismatch");
	assert.match(res.message, /did not say which api_version/);
});

test("garbage body: non-JSON 200 is 'bad-response'", async () => {
	const daemon = new FakeDaemon({ "GET /status": () => json(200, "<html>proxy error</html>") });
	const res = await client(daemon.request).status();
	assert.ok(res.kind === "bad-response");
	assert.match(res.message, /\/status was not JSON \(HTTP 200\)/);
});

test("wrong shape: JSON without the documented fields is 'bad-response'", async () => {
	const daemon = new FakeDaemon({
		"GET /status": () => json(200, fixtureText("status.json")),
		"GET /note": () => json(200, { path: "daily/x.md", kind: "source", state: "queued" }),
	});
	const res = await client(daemon.request).note("daily/x.md");
	assert.ok(res.kind === "bad-response");
	assert.match(res.message, /\/note does not match/);
});

test("note: verifies api_version once via /status, then asks /note with the path encoded", async () => {
	const daemon = new FakeDaemon({ "GET /note": () => json(200, fixtureText("note-digest.json")) });
	const c = client(daemon.request);
	const first = await c.note("digest/wiki/hybrid search & more.md");
	const second = await c.note("digest/wiki/hybrid-search.md");
	assert.ok(first.kind === "ok" && second.kind === "ok");
	assert.equal(first.data.kind, "digest");
	assert.equal(daemon.to("GET /status").length, 1, "handshake is cached");
	const url = new URL(daemon.to("GET /note")[0].url);
	assert.equal(url.searchParams.get("path"), "digest/wiki/hybrid search & more.md");
	assert.match(daemon.to("GET /note")[0].url, /path=digest%2Fwiki%2Fhybrid%20search%20%26%20more\.md$/);
});

test("note: a mismatched daemon never gets the /note call", async () => {
	const daemon = new FakeDaemon({
		"GET /status": () => json(200, { ...fixture<object>("status.json"), api_version: 3 }),
		"GET /note": () => json(200, fixtureText("note-digest.json")),
	});
	const res = await client(daemon.request).note("digest/wiki/hybrid-search.md");
	assert.equal(res.kind, "version-mismatch");
	assert.equal(daemon.to("GET /note").length, 0);
});

test("note: after the daemon goes down the version is checked again", async () => {
	let up = true;
	const daemon = new FakeDaemon({ "GET /note": () => json(200, fixtureText("note-other.json")) });
	const flaky: RequestFn = async (req: HttpRequest) => {
		if (!up) throw new Error("net::ERR_CONNECTION_REFUSED");
		return daemon.request(req);
	};
	const c = client(flaky);
	assert.equal((await c.note("templates/daily.md")).kind, "ok");
	up = false;
	assert.equal((await c.note("templates/daily.md")).kind, "down");
	up = true;
	assert.equal((await c.note("templates/daily.md")).kind, "ok");
	assert.equal(daemon.to("GET /status").length, 2);
});

test("note: 404 is 'rejected' with the daemon's own error text", async () => {
	const daemon = new FakeDaemon({ "GET /note": () => json(404, { error: "no such note: a.md" }) });
	const res = await client(daemon.request).note("a.md");
	assert.deepEqual(res, { kind: "rejected", status: 404, message: "no such note: a.md" });
});

test("undo: POSTs {id} as JSON and returns the UNDO decision", async () => {
	const daemon = new FakeDaemon({ "POST /undo": () => json(200, fixtureText("undo.json")) });
	const res = await client(daemon.request).undo(31);
	assert.ok(res.kind === "ok");
	assert.equal(res.data.undone, 31);
	assert.equal(res.data.decision.action, "UNDO");
	const [req] = daemon.to("POST /undo");
	assert.equal(req.contentType, "application/json");
	assert.deepEqual(JSON.parse(req.body ?? ""), { id: 31 });
});

test("undo: 409 keeps the daemon's message for the Notice", async () => {
	const daemon = new FakeDaemon({ "POST /undo": () => json(409, fixtureText("error-undo-409.json")) });
	const res = await client(daemon.request).undo(31);
	assert.ok(res.kind === "rejected");
	assert.equal(res.status, 409);
	assert.equal(res.message, fixture("error-undo-409.json").error);
});

test("undo: a 409 that needs a cascade lists the decisions; cascade sends cascade: true", async () => {
	const daemon = new FakeDaemon({
		"POST /undo": (req) =>
			JSON.parse(req.body ?? "").cascade
				? json(200, { ...fixture<object>("undo.json"), ids: [40, 41] })
				: json(409, fixtureText("error-undo-409-needs.json")),
	});
	const c = client(daemon.request);
	const refused = await c.undo(8);
	assert.ok(refused.kind === "rejected");
	assert.deepEqual(refused.needs, fixture("error-undo-409-needs.json").needs);
	const done = await c.undo(8, true);
	assert.ok(done.kind === "ok");
	assert.deepEqual(done.data.ids, [40, 41]);
	assert.deepEqual(
		daemon.to("POST /undo").map((r) => JSON.parse(r.body ?? "")),
		[{ id: 8 }, { id: 8, cascade: true }],
	);
});

test("redo: POSTs {id} and returns the REDO decision", async () => {
	const daemon = new FakeDaemon({ "POST /redo": () => json(200, fixtureText("redo.json")) });
	const res = await client(daemon.request).redo(31);
	assert.ok(res.kind === "ok");
	assert.equal(res.data.redone, 31);
	assert.equal(res.data.decision.action, "REDO");
	assert.deepEqual(JSON.parse(daemon.to("POST /redo")[0].body ?? ""), { id: 31 });
});

test("rerun: sends {path} or {failed: true} exactly as the contract says", async () => {
	const daemon = new FakeDaemon({ "POST /rerun": () => json(200, fixtureText("rerun.json")) });
	const c = client(daemon.request);
	const one = await c.rerun({ path: "daily/2026-06-19.md" });
	await c.rerun({ failed: true });
	assert.ok(one.kind === "ok");
	assert.deepEqual(one.data.queued, ["daily/2026-06-19.md"]);
	const bodies = daemon.to("POST /rerun").map((r) => JSON.parse(r.body ?? ""));
	assert.deepEqual(bodies, [{ path: "daily/2026-06-19.md" }, { failed: true }]);
});

test("token: a token in settings wins over .vaultlink/token", async () => {
	const files: Record<string, string> = { [TOKEN_PATH]: "from-file\n" };
	const read = async (p: string) => {
		if (!(p in files)) throw new Error("ENOENT");
		return files[p];
	};
	assert.equal(await resolveToken("  typed  ", read), "typed");
	assert.equal(await resolveToken("", read), "from-file", "file content is trimmed");
	assert.equal(await resolveToken("", async () => Promise.reject(new Error("ENOENT"))), null);
	assert.equal(await resolveToken("", async () => "  \n"), null, "an empty file is no token");
});
