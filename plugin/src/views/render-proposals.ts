// Proposals: decisions vaultlink held for the owner's review instead of
// writing them (review.mode), each with its diff and the three answers.

import type { ClientResult } from "../api/result";
import type { Proposal, ProposalList, ProposalVerb } from "../api/types";
import { button, muted, noteLink, noteTitle, section, shortTime } from "./dom-util";
import { renderDiff } from "./render-decisions";
import { renderFailure } from "./render-state";

/** What the proposals view can ask for; wired to the daemon by the view. */
export interface ProposalActions {
	openNote(path: string): void;
	/** POST /proposals/{id}/{verb}, then refresh. */
	settle(proposal: Proposal, verb: ProposalVerb): void;
	refresh(): void;
}

export const NO_PROPOSALS = "No decision waits for your review.";
export const STALE_TEXT =
	"Its node changed since this was proposed: nothing of it will be written, and the next run decides the unit again.";

export function renderProposal(parent: HTMLElement, p: Proposal, actions: ProposalActions): HTMLElement {
	const card = parent.createDiv({
		cls: ["vaultlink-proposal", p.stale ? "is-stale" : ""].filter(Boolean),
		attr: { "data-proposal-id": p.id },
	});
	const head = card.createDiv({ cls: "vaultlink-decision-head" });
	head.createSpan({
		cls: ["vaultlink-action", `vaultlink-action-${p.action.toLowerCase()}`],
		text: p.action,
	});
	noteLink(head, p.target, noteTitle(p.target), actions);
	head.createSpan({ cls: "vaultlink-time", text: shortTime(p.at) });

	if (p.stale) card.createDiv({ cls: "vaultlink-stale", text: STALE_TEXT });
	card.createDiv({ cls: "vaultlink-proposal-reason", text: `Held: ${p.reason}` });
	if (p.why) card.createDiv({ cls: "vaultlink-decision-note", text: p.why });
	const unit = card.createDiv({ cls: "vaultlink-unit" });
	unit.createSpan({ text: `unit ${p.unit.name}${p.unit.bucket ? ` (${p.unit.bucket})` : ""} from ` });
	p.unit.paths.forEach((path, i) => {
		if (i > 0) unit.createSpan({ text: ", " });
		noteLink(unit, path, path, actions);
	});

	if (p.diff) renderDiff(card, p.diff);

	const foot = card.createDiv({ cls: "vaultlink-decision-foot" });
	if (p.stale) {
		// Approving a stale proposal writes nothing: the daemon marks it stale and
		// queues its note, so the unit is decided again against the node as it is.
		button(foot, "Re-decide", "vaultlink-redecide", () => actions.settle(p, "approve"), true);
		button(foot, "Reject", "vaultlink-reject", () => actions.settle(p, "reject"), true);
	} else {
		button(foot, "Approve", "vaultlink-approve", () => actions.settle(p, "approve"), true);
		button(foot, "Reject", "vaultlink-reject", () => actions.settle(p, "reject"), true);
		button(foot, "Create as new", "vaultlink-new", () => actions.settle(p, "new"), true);
	}
	return card;
}

export function renderProposals(
	container: HTMLElement,
	result: ClientResult<ProposalList>,
	actions: ProposalActions,
): void {
	if (result.kind !== "ok") {
		renderFailure(container, result, () => actions.refresh());
		return;
	}
	container.empty();
	const root = container.createDiv({ cls: ["vaultlink-panel", "vaultlink-proposals"] });
	const sec = section(root, "Proposals", result.data.proposals.length);
	if (result.data.proposals.length === 0) muted(sec, NO_PROPOSALS);
	for (const p of result.data.proposals) renderProposal(sec, p, actions);
}
