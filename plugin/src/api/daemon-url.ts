// Whether a daemon URL stays on this computer. Every request carries the
// vault's token, so a URL elsewhere (a typo, a pasted link, a synced
// data.json) would hand that token to whoever answers there.

/** The host names the daemon itself accepts (its Host check, docs/status-api.md). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export const DEFAULT_DAEMON_URL = "http://127.0.0.1:8765";

/** True for an http(s) URL on 127.0.0.1, localhost or [::1]; false for any
 * other host and for text that is not a URL at all. */
export function isLoopbackUrl(url: string): boolean {
	let parsed: URL;
	try {
		parsed = new URL(url.trim());
	} catch {
		return false;
	}
	const web = parsed.protocol === "http:" || parsed.protocol === "https:";
	// user:pass@ would travel too, and is never needed for the daemon
	const bare = parsed.username === "" && parsed.password === "";
	return web && bare && LOOPBACK_HOSTS.has(parsed.hostname.toLowerCase());
}

/** Why the plugin sends nothing to `url`, and what the user can do about it. */
export function remoteRefusal(url: string): string {
	return (
		`The daemon URL ${url} is not on this computer, and every request would carry ` +
		`your vault's token there. Set it back to ${DEFAULT_DAEMON_URL} (or another ` +
		`127.0.0.1 port) in the vaultlink settings, or turn on "Allow a daemon on another ` +
		`computer" there if you run that daemon yourself and trust the network to it.`
	);
}
