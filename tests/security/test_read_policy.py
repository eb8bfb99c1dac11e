"""Findings 2, 3 (its read half) and 5 of the security review: one read policy.

Whatever reads on someone else's behalf (the model's tools, MCP ``read``, the status
API's ``/note``) reads only Markdown notes in daily/, resource/ and digest/: never a
dot-path (``.vaultlink/token`` is the live API token, ``.obsidian/plugins/*/data.json``
holds other plugins' keys, ``.git/config`` remote credentials), never a note in another
folder, never what a symlink resolves to outside the read folders. The walker lists no
such link; writes go only through real folders under digest/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.vaults import write_notes
from vaultlink.cli.settings import load_settings
from vaultlink.errors import PathRefused, Refusal, VaultlinkError
from vaultlink.mcp.tools import Assistant
from vaultlink.options import AssistOptions
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.integrate.tools import Toolbox
from vaultlink.prose.units import Unit
from vaultlink.vault.notes import Vault

SOURCE = "daily/2026-07-01.md"
TOKEN = "tok-3f9a-live-api-token"
SECRETS = {
    ".vaultlink/token": TOKEN + "\n",
    ".obsidian/plugins/other/data.json": '{"apiKey": "sk-other-plugin-key"}',
    ".git/config": '[remote "origin"]\n  url = https://user:ghp_secret@example.org/v.git\n',
    "private/secret.md": "# Secret\n\nmy bank pin is 4242\n",
}


@pytest.fixture()
def vault(tmp_path: Path) -> Vault:
    # besides the notes, the secrets a reader must never see and links that point at them
    root = write_notes(tmp_path / "v", {
        **SECRETS, SOURCE: "# Rebuild\n\nThe rebuild runs online now.\n",
        "digest/wiki/search.md": "---\nname: Search\ndescription: How "
                                 "search works.\n---\nSearch finds notes.\n"})
    (root / "resource").mkdir()
    (root / "resource/t.md").symlink_to(root / ".vaultlink/token")
    (root / "resource/pin.md").symlink_to(root / "private/secret.md")
    (root / "resource/git.md").symlink_to(root / ".git/config")
    return Vault(root)


# every spelling a caller might try for something it must never see
ATTEMPTS = [
    ".vaultlink/token", "./.vaultlink/token", "daily/../.vaultlink/token",
    ".obsidian/plugins/other/data.json", ".git/config", "private/secret.md",
    "private/secret", "resource/t.md", "resource/pin.md", "resource/git.md",
    "[[private/secret]]", "[[.vaultlink/token]]", "digest/../private/secret.md",
]


def leaked(text: str) -> bool:
    return any(s in text for s in (TOKEN, "sk-other-plugin-key", "ghp_secret", "4242"))


def assistant(vault: Vault) -> Assistant:
    settings = load_settings(vault.root, environ={})
    return Assistant(vault, AssistOptions(settings.pipeline(),
                                          float(settings.get("index.min_similarity"))))


@pytest.mark.parametrize("path", [
    *ATTEMPTS, "/.vaultlink/token", "<root>/.vaultlink/token", "<root>/.git/config"])
def test_mcp_read_refuses_what_is_not_a_read_folders_note(vault: Vault, path: str) -> None:
    path = path.replace("<root>", str(vault.root))
    with pytest.raises(VaultlinkError) as caught:
        assistant(vault).read(path)
    assert not leaked(str(caught.value))


def test_mcp_read_still_reads_a_note_and_a_node(vault: Vault) -> None:
    helper = assistant(vault)
    assert "online" in helper.read(SOURCE)["text"]
    assert helper.read("search")["name"] == "Search"


class NoRecall:
    """An index that knows no nodes: these tests are about reads, not recall."""

    def node_search(self, query: str, limit: int = 20) -> list[object]:
        return []


def toolbox(vault: Vault) -> Toolbox:
    unit = Unit("rebuild", "wiki", "The rebuild runs online.", [SOURCE])
    return Toolbox(vault, NoRecall(), Guard(unit, frozenset(vault.iter_files(["digest"])),
                                            vault.iter_files))


@pytest.mark.parametrize("path", [*ATTEMPTS[:-3], "digest/../private/secret.md"])
def test_the_models_read_is_refused_and_journaled_as_refused(vault: Vault, path: str) -> None:
    box = toolbox(vault)
    for tool in ("read", "frontmatter_read"):
        answer = json.loads(box.call(tool, {"path": path}))
        assert "error" in answer and not leaked(json.dumps(answer)), answer
    assert box.refusals == [Refusal.PATH_REFUSED.value] * 2


def test_the_walker_lists_no_link_that_leads_out_of_the_read_folders(vault: Vault) -> None:
    listed = set(vault.iter_files(["daily", "resource", "digest"]))
    assert listed == {SOURCE, "digest/wiki/search.md"}
    scanned = {i.path for i in vault.scan()}
    assert scanned == {SOURCE, "digest/wiki/search.md"}
    assert {"resource/t.md", "resource/pin.md", "resource/git.md"} <= set(vault.skipped)


def test_a_link_between_read_folders_is_still_read(vault: Vault) -> None:
    (vault.root / "resource/alias.md").symlink_to(vault.root / SOURCE)
    assert vault.readable("resource/alias.md") == "resource/alias.md"
    assert "resource/alias.md" in vault.iter_files(["resource"])


def test_a_symlinked_digest_folder_is_never_written_through(vault: Vault) -> None:
    """The review's finding 5: with digest/wiki a link to ../daily, a model's CREATE
    wrote daily/online-rebuild.md into the owner's notes."""
    (vault.root / "digest/wiki/search.md").unlink()
    (vault.root / "digest/wiki").rmdir()
    (vault.root / "digest/wiki").symlink_to(vault.root / "daily", target_is_directory=True)
    box = toolbox(vault)
    body = f"Online.\n\n## Sources\n\n- The change is in [[{SOURCE}]].\n"
    answer = json.loads(box.call("write", {"path": "digest/wiki/online-rebuild.md",
                                           "name": "Online rebuild", "description": "x",
                                           "content": body}))
    assert "error" in answer and "symlink" in answer["error"]
    assert not (vault.root / "daily/online-rebuild.md").exists()
    assert box.refusals == [Refusal.PATH_REFUSED.value]
    with pytest.raises(PathRefused, match="leads out of digest"):
        vault.write("digest/wiki/x.md", "---\nname: x\n---\nx\n", None)
    assert not (vault.root / "daily/x.md").exists()


def test_a_digest_folder_linked_to_the_owners_notes_is_never_written(vault: Vault) -> None:
    """digest/ may be a link to a folder of the vault, but not to daily/ or resource/."""
    (vault.root / "digest/wiki/search.md").unlink()
    for folder in ("digest/wiki", "digest"):
        (vault.root / folder).rmdir()
    (vault.root / "digest").symlink_to(vault.root / "daily", target_is_directory=True)
    with pytest.raises(PathRefused, match="leads out of digest"):
        vault.write("digest/x.md", "---\nname: x\n---\nx\n", None)
    assert not (vault.root / "daily/x.md").exists()
