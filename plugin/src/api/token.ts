// Where the bearer token comes from. The daemon writes it to
// .vaultlink/token inside the vault; a token typed into settings wins so a
// user can point the plugin at a daemon serving some other vault copy.

export const TOKEN_PATH = ".vaultlink/token";

/** Reads a vault-relative file; in the plugin this is app.vault.adapter.read. */
export type ReadVaultFile = (path: string) => Promise<string>;

export async function resolveToken(
	override: string,
	readFile: ReadVaultFile,
): Promise<string | null> {
	const typed = override.trim();
	if (typed) return typed;
	try {
		const fromFile = (await readFile(TOKEN_PATH)).trim();
		return fromFile || null;
	} catch {
		// No file yet (daemon never started in this vault) is a normal state:
		// the request goes out without a token and the 401 explains it.
		return null;
	}
}
