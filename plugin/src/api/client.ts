// The only code that talks to the daemon. It never throws: every call ends
// in a ClientResult so the UI can show the right state. The transport is
// injected (Obsidian's requestUrl in the plugin, a fake in tests).

import { isLoopbackUrl, remoteRefusal } from "./daemon-url";
import type { ClientResult } from "./result";
import type {
	NoteInfo,
	ProposalList,
	ProposalVerb,
	RedoResult,
	RerunResult,
	SettleResult,
	Status,
	UndoResult,
} from "./types";
import { API_VERSION } from "./types";
import {
	apiVersionOf,
	errorMessage,
	isNoteInfo,
	isProposalList,
	isRedoResult,
	isRerunResult,
	isSettleResult,
	isStatus,
	isUndoResult,
	needsOf,
} from "./validate";

/** The subset of Obsidian's RequestUrlParam the client uses. */
export interface HttpRequest {
	url: string;
	method: "GET" | "POST";
	headers: Record<string, string>;
	contentType?: string;
	body?: string;
	/** Always false: status codes are ours to read, not exceptions. */
	throw: false;
}

/** The subset of Obsidian's RequestUrlResponse the client uses. */
export interface HttpResponse {
	status: number;
	text: string;
}

export type RequestFn = (req: HttpRequest) => Promise<HttpResponse>;

export interface ClientOptions {
	request: RequestFn;
	/** Read on every call so settings changes apply without a reload. */
	baseUrl: () => string;
	token: () => Promise<string | null>;
	/** Whether the user allowed a daemon URL that is not loopback (off: nothing is sent). */
	allowRemote?: () => boolean;
	timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 5000;

class Timeout extends Error {}

export class DaemonClient {
	private readonly opts: ClientOptions;
	/**
	 * /status is the only answer that carries api_version, so the other
	 * routes are gated on one good /status per daemon URL. Forgotten whenever
	 * the daemon goes away: the one that comes back may be another version.
	 */
	private verifiedFor: string | null = null;

	constructor(opts: ClientOptions) {
		this.opts = opts;
	}

	async status(): Promise<ClientResult<Status>> {
		const base = this.base();
		const res = await this.call("GET", "/status");
		if (res.kind !== "ok") return res;
		const version = apiVersionOf(res.data);
		if (version !== API_VERSION) {
			this.verifiedFor = null;
			return {
				kind: "version-mismatch",
				message:
					version === undefined
						? `The daemon did not say which api_version it speaks; this plugin speaks ${API_VERSION}. Update vaultlink.`
						: `The daemon speaks api_version ${String(version)}; this plugin speaks ${API_VERSION}. Update ${
								typeof version === "number" && version > API_VERSION ? "the plugin" : "vaultlink"
						  }.`,
			};
		}
		if (!isStatus(res.data)) return badShape("/status");
		this.verifiedFor = base;
		return { kind: "ok", data: res.data };
	}

	async note(path: string): Promise<ClientResult<NoteInfo>> {
		const gate = await this.ensureVerified();
		if (gate) return gate;
		const res = await this.call("GET", `/note?path=${encodeURIComponent(path)}`);
		if (res.kind !== "ok") return res;
		return isNoteInfo(res.data) ? { kind: "ok", data: res.data } : badShape("/note");
	}

	/** Queue one note now (no quiet period) or, with {failed: true}, every failed unit. */
	async rerun(target: { path: string } | { failed: true }): Promise<ClientResult<RerunResult>> {
		const gate = await this.ensureVerified();
		if (gate) return gate;
		const res = await this.call("POST", "/rerun", target);
		if (res.kind !== "ok") return res;
		return isRerunResult(res.data) ? { kind: "ok", data: res.data } : badShape("/rerun");
	}

	/** Undo one decision; with `cascade`, also the later ones that depend on it. */
	async undo(id: number, cascade = false): Promise<ClientResult<UndoResult>> {
		const gate = await this.ensureVerified();
		if (gate) return gate;
		const res = await this.call("POST", "/undo", cascade ? { id, cascade } : { id });
		if (res.kind !== "ok") return res;
		return isUndoResult(res.data) ? { kind: "ok", data: res.data } : badShape("/undo");
	}

	/** Bring back what an undo removed (the undone decision's id). */
	async redo(id: number): Promise<ClientResult<RedoResult>> {
		const gate = await this.ensureVerified();
		if (gate) return gate;
		const res = await this.call("POST", "/redo", { id });
		if (res.kind !== "ok") return res;
		return isRedoResult(res.data) ? { kind: "ok", data: res.data } : badShape("/redo");
	}

	/** The decisions held for review, newest first (the open ones). */
	async proposals(): Promise<ClientResult<ProposalList>> {
		const gate = await this.ensureVerified();
		if (gate) return gate;
		const res = await this.call("GET", "/proposals");
		if (res.kind !== "ok") return res;
		return isProposalList(res.data) ? { kind: "ok", data: res.data } : badShape("/proposals");
	}

	/** Approve, reject, or write as a new node one proposal (its id from proposals()). */
	async settle(id: number, verb: ProposalVerb): Promise<ClientResult<SettleResult>> {
		const gate = await this.ensureVerified();
		if (gate) return gate;
		if (!Number.isSafeInteger(id) || id < 0) {
			return { kind: "bad-response", message: `${String(id)} is not a proposal id.` };
		}
		const res = await this.call("POST", `/proposals/${id}/${verb}`, {});
		if (res.kind !== "ok") return res;
		return isSettleResult(res.data) ? { kind: "ok", data: res.data } : badShape("/proposals");
	}

	private base(): string {
		return this.opts.baseUrl().trim().replace(/\/+$/, "");
	}

	/** Null when the daemon is known to speak our version, else the failure to show. */
	private async ensureVerified(): Promise<ClientResult<never> | null> {
		if (this.verifiedFor === this.base()) return null;
		const res = await this.status();
		return res.kind === "ok" ? null : res;
	}

	/** One HTTP exchange, mapped to a result whose data is the parsed JSON body. */
	private async call(
		method: "GET" | "POST",
		route: string,
		body?: unknown,
	): Promise<ClientResult<unknown>> {
		const base = this.base();
		// Checked before the token is even read: it must not leave this computer
		// unless the user said so in the settings.
		if (!isLoopbackUrl(base) && !(this.opts.allowRemote?.() ?? false)) {
			this.verifiedFor = null;
			return { kind: "remote-blocked", message: remoteRefusal(base) };
		}
		const token = await this.opts.token();
		const headers: Record<string, string> = {};
		if (token) headers.Authorization = `Bearer ${token}`;
		const req: HttpRequest = { url: base + route, method, headers, throw: false };
		if (body !== undefined) {
			req.contentType = "application/json";
			req.body = JSON.stringify(body);
		}

		const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
		let response: HttpResponse;
		let timer: ReturnType<typeof setTimeout> | undefined;
		try {
			// requestUrl has no timeout of its own; a daemon that accepts the
			// connection but hangs must not freeze the panel in "loading".
			const timeout = new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Timeout()), timeoutMs);
			});
			response = await Promise.race([this.opts.request(req), timeout]);
		} catch (err) {
			this.verifiedFor = null;
			const why =
				err instanceof Timeout
					? `no answer within ${timeoutMs / 1000} s`
					: err instanceof Error
					  ? err.message
					  : String(err);
			return { kind: "down", message: `Cannot reach the vaultlink daemon at ${base} (${why}).` };
		} finally {
			if (timer !== undefined) clearTimeout(timer);
		}

		let parsed: unknown;
		let parsedOk = true;
		try {
			parsed = JSON.parse(response.text);
		} catch {
			parsedOk = false;
		}

		if (response.status === 401) {
			return {
				kind: "unauthorized",
				message: token
					? "The daemon refused the token. It changes when the daemon makes a new one: clear the token in settings or check .vaultlink/token."
					: "No token: .vaultlink/token was not found in this vault and none is set in settings.",
			};
		}
		if (!parsedOk) {
			return {
				kind: "bad-response",
				message: `The daemon's answer to ${route.split("?")[0]} was not JSON (HTTP ${response.status}).`,
			};
		}
		if (response.status >= 200 && response.status < 300) return { kind: "ok", data: parsed };
		const needs = needsOf(parsed);
		return {
			kind: "rejected",
			status: response.status,
			message: errorMessage(parsed) ?? `HTTP ${response.status}`,
			...(needs ? { needs } : {}),
		};
	}
}

function badShape(route: string): ClientResult<never> {
	return {
		kind: "bad-response",
		message: `The daemon's answer to ${route} does not match the status API this plugin knows.`,
	};
}
