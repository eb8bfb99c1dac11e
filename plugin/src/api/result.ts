import type { UndoNeed } from "./types";

// Every daemon call ends in exactly one of these. The panel and status bar
// switch on `kind`, so a new failure mode must be added here, not thrown.

export type ClientResult<T> =
	| { kind: "ok"; data: T }
	/** Connection refused, DNS/network failure, or no answer before the timeout. */
	| { kind: "down"; message: string }
	/** Nothing was sent: the daemon URL is not loopback and the user has not allowed that. */
	| { kind: "remote-blocked"; message: string }
	/** 401: the token is missing or not the daemon's. */
	| { kind: "unauthorized"; message: string }
	/** The daemon speaks another api_version (or none): plugin and daemon do not match. */
	| { kind: "version-mismatch"; message: string }
	/** The answer could not be understood: not JSON, or not the documented shape. */
	| { kind: "bad-response"; message: string }
	/** The daemon understood and refused (400/404/409/413/...), with its own words; an
	 * undo refused because later decisions depend on it lists them in `needs`. */
	| { kind: "rejected"; status: number; message: string; needs?: UndoNeed[] };

export type FailureKind = Exclude<ClientResult<unknown>["kind"], "ok">;
export type ClientFailure = Extract<ClientResult<unknown>, { kind: FailureKind }>;
