// A scripted daemon behind the injected request function: routes answer
// with fixture bodies, and every request is recorded for assertions.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { HttpRequest, HttpResponse, RequestFn } from "../src/api/client";

// Bundled tests run from build/tests/, sources live in tests/.
const FIXTURES = join(__dirname, "..", "..", "tests", "fixtures");

export function fixtureText(name: string): string {
	return readFileSync(join(FIXTURES, name), "utf8");
}

export function fixture<T = any>(name: string): T {
	return JSON.parse(fixtureText(name)) as T;
}

export type Route = (req: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export function json(status: number, body: unknown): HttpResponse {
	return { status, text: typeof body === "string" ? body : JSON.stringify(body) };
}

export class FakeDaemon {
	requests: HttpRequest[] = [];
	routes = new Map<string, Route>();

	constructor(routes: Record<string, Route> = {}) {
		this.routes.set("GET /status", () => json(200, fixtureText("status.json")));
		for (const [k, v] of Object.entries(routes)) this.routes.set(k, v);
	}

	/** Requests to one route, e.g. "POST /undo". */
	to(key: string): HttpRequest[] {
		return this.requests.filter((r) => routeKey(r) === key);
	}

	request: RequestFn = async (req) => {
		this.requests.push(req);
		const route = this.routes.get(routeKey(req));
		if (!route) return json(404, { error: "unknown route" });
		return route(req);
	};
}

function routeKey(req: HttpRequest): string {
	const path = new URL(req.url).pathname;
	return `${req.method} ${path}`;
}
