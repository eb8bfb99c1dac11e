// A fake Obsidian `app` with just the workspace and vault calls the plugin
// makes, recording what it is asked to do.

import { Events, TFile, WorkspaceLeaf } from "./obsidian-stub";

export class FakeWorkspace extends Events {
	activeFile: TFile | null = null;
	opened: { linktext: string; sourcePath: string }[] = [];
	leaves: WorkspaceLeaf[] = [];
	revealed: WorkspaceLeaf[] = [];
	private app: unknown;

	constructor(app: unknown) {
		super();
		this.app = app;
	}

	getActiveFile(): TFile | null {
		return this.activeFile;
	}

	/** Switch notes the way Obsidian does: file-open, then active-leaf-change. */
	open(path: string | null): void {
		this.activeFile = path === null ? null : new TFile(path);
		this.trigger("file-open", this.activeFile);
		this.trigger("active-leaf-change", null);
	}

	async openLinkText(linktext: string, sourcePath: string): Promise<void> {
		this.opened.push({ linktext, sourcePath });
	}

	getLeavesOfType(type: string): WorkspaceLeaf[] {
		return this.leaves.filter((l) => l.viewState?.type === type);
	}

	getRightLeaf(): WorkspaceLeaf {
		const leaf = new WorkspaceLeaf(this.app);
		this.leaves.push(leaf);
		return leaf;
	}

	async revealLeaf(leaf: WorkspaceLeaf): Promise<void> {
		this.revealed.push(leaf);
	}

	onLayoutReady(cb: () => void): void {
		cb();
	}
}

export function fakeApp(files: Record<string, string> = {}) {
	const app = {
		workspace: undefined as unknown as FakeWorkspace,
		vault: {
			adapter: {
				read: async (path: string): Promise<string> => {
					if (!(path in files)) throw new Error(`ENOENT: ${path}`);
					return files[path];
				},
			},
		},
	};
	app.workspace = new FakeWorkspace(app);
	return app;
}
