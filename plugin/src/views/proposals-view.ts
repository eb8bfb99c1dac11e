// The proposals view: a side panel listing the decisions held for review,
// with Approve / Reject / Create as new. Drawing is render-proposals'; the
// Notice texts and refresh-after-answer rule are makeProposalActions'.

import { ItemView, Notice, WorkspaceLeaf } from "obsidian";
import type { DaemonClient } from "../api/client";
import type { ClientResult } from "../api/result";
import type { Proposal, ProposalVerb, SettleResult } from "../api/types";
import { type ProposalActions, renderProposals } from "./render-proposals";
import { failureCopy, renderLoading } from "./render-state";

export const VIEW_TYPE_PROPOSALS = "vaultlink-proposals";

export interface ProposalDeps {
	client: Pick<DaemonClient, "settle">;
	notify: (message: string) => void;
	openNote: (path: string) => void;
	refresh: () => void;
}

const DONE: Record<ProposalVerb, string> = { approve: "approved", reject: "rejected", new: "created as a new node" };

/** The Notice an answer gets: what was written, or that a stale one is re-decided. */
export function settleNotice(p: Proposal, verb: ProposalVerb, res: ClientResult<SettleResult>): string {
	if (res.kind === "ok") {
		if (res.data.stale) {
			return `vaultlink: ${p.target} changed since proposal #${p.id}; nothing written, the next run decides the unit again`;
		}
		return `vaultlink: proposal #${p.id} ${DONE[verb]}: ${res.data.message}`;
	}
	if (res.kind === "rejected") return `vaultlink: cannot settle proposal #${p.id}: ${res.message}`;
	return `vaultlink: ${failureCopy(res).title}. ${res.message}`;
}

export function makeProposalActions(deps: ProposalDeps): ProposalActions {
	return {
		openNote: deps.openNote,
		refresh: deps.refresh,
		settle: async (p, verb) => {
			const res = await deps.client.settle(p.id, verb);
			deps.notify(settleNotice(p, verb, res));
			deps.refresh();
		},
	};
}

export class VaultlinkProposalsView extends ItemView {
	private readonly client: DaemonClient;
	private readonly actions: ProposalActions;
	private generation = 0;
	private shown = "";

	constructor(leaf: WorkspaceLeaf, client: DaemonClient) {
		super(leaf);
		this.client = client;
		this.actions = makeProposalActions({
			client,
			notify: (m) => new Notice(m),
			openNote: (p) => void this.app.workspace.openLinkText(p, "", false),
			refresh: () => void this.refresh(true),
		});
	}

	getViewType(): string {
		return VIEW_TYPE_PROPOSALS;
	}

	getDisplayText(): string {
		return "vaultlink proposals";
	}

	getIcon(): string {
		return "git-pull-request-draft";
	}

	async onOpen(): Promise<void> {
		this.contentEl.addClass("vaultlink-view");
		renderLoading(this.contentEl);
		await this.refresh(true);
	}

	async onClose(): Promise<void> {
		this.generation++;
	}

	/** Ask the daemon again (each poll, and after an answer to a proposal). */
	async refresh(force = false): Promise<void> {
		const gen = ++this.generation;
		const result = await this.client.proposals();
		if (gen !== this.generation) return;
		const key = JSON.stringify(result);
		if (!force && key === this.shown) return;
		this.shown = key;
		renderProposals(this.contentEl, result, this.actions);
	}
}
