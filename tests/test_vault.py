"""Pins the vault layer: the path sandbox, the scanner, typed read errors, the CAS write."""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import unicodedata
from pathlib import Path

import pytest

from tests.vaults import vault_with, write_note
from vaultlink.errors import (
    BinaryNote,
    BrokenFrontmatter,
    NoteNotFound,
    NoteTooLarge,
    NoteUnreadable,
    NotUtf8,
    PathRefused,
    VaultError,
    WriteConflict,
    WriteFailed,
)
from vaultlink.vault.atomic import content_hash
from vaultlink.vault.notes import Vault, render_note
from vaultlink.vault.paths import is_skipped_name, normalize_rel

NODE = "digest/wiki/hybrid-search.md"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(vault_with(tmp_path / "vault", {}))


def leftovers(root: Path) -> list[str]:
    """Anything that looks like a temp or aside file left by a write."""
    return sorted(p.name for p in root.rglob("*") if p.name.startswith("."))


# -- the path sandbox ---------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("/etc/passwd", id="absolute"),
        pytest.param("C:\\Users\\x.md", id="windows-drive-backslash"),
        pytest.param("C:/Users/x.md", id="windows-drive-slash"),
        pytest.param("../outside.md", id="dotdot"),
        pytest.param("digest/../../outside.md", id="dotdot-inside"),
        pytest.param("digest/x\x00.md", id="nul"),
        pytest.param("digest\\wiki\\x.md", id="backslash"),
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("./", id="names-no-file"),
    ],
)
def test_refused_path_forms_raise_path_refused(vault: Vault, raw: str) -> None:
    with pytest.raises(PathRefused) as info:
        vault.abs(raw)
    assert isinstance(info.value, VaultError)
    assert info.value.reason


def test_paths_are_normalised_to_nfc_and_forward_slashes() -> None:
    nfd = unicodedata.normalize("NFD", "daily/Café notes.md")
    assert normalize_rel(nfd) == unicodedata.normalize("NFC", "daily/Café notes.md")
    assert normalize_rel("daily//./x.md") == "daily/x.md"


def test_nfd_path_reads_the_nfc_file(vault: Vault) -> None:
    write_note(vault.root, unicodedata.normalize("NFC", "daily/Café.md"), "hello\n")
    note = vault.read_note(unicodedata.normalize("NFD", "daily/Café.md"))
    assert note.body == "hello"
    assert note.path == unicodedata.normalize("NFC", "daily/Café.md")


def test_symlink_inside_pointing_outside_is_refused_and_skipped(
    vault: Vault, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("secret\n")
    (vault.root / "daily" / "evil.md").symlink_to(secret)
    (vault.root / "resource" / "outdir").symlink_to(secret.parent, target_is_directory=True)
    with pytest.raises(PathRefused):
        vault.abs("daily/evil.md")
    with pytest.raises(PathRefused):
        vault.read_note("daily/evil.md")
    with pytest.raises(PathRefused):
        vault.read_note("resource/outdir/secret.md")
    assert not vault.exists("daily/evil.md")
    paths = [info.path for info in vault.scan()]
    assert "daily/evil.md" not in paths
    assert not any("secret" in p for p in paths)


def test_a_file_leading_out_is_recorded_with_why_not_warned_about_at_every_walk(
    vault: Vault, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The vault is walked before every unit and by every command: no warning each time;
    the walk records why, and the run's summary and ``status`` say it once."""
    (tmp_path / "secret.md").write_text("secret\n")
    (vault.root / "daily" / "evil.md").symlink_to(tmp_path / "secret.md")
    with caplog.at_level(logging.WARNING, logger="vaultlink.vault.notes"):
        for _ in range(3):
            assert "daily/evil.md" not in list(vault.iter_files())
    assert [r for r in caplog.records if "evil.md" in r.getMessage()] == []
    assert vault.skipped_in(["daily"]) == {
        "daily/evil.md": "it is a symlink whose target is outside the vault"}


def test_symlink_inside_pointing_inside_is_fine(vault: Vault) -> None:
    write_note(vault.root, "resource/paper.md", "paper\n")
    (vault.root / "daily" / "alias.md").symlink_to(vault.root / "resource" / "paper.md")
    assert vault.abs("daily/alias.md") == vault.root / "daily" / "alias.md"
    assert vault.read_note("daily/alias.md").body == "paper"
    assert "daily/alias.md" in [info.path for info in vault.scan()]


def test_vault_root_reached_through_a_symlink_still_works(tmp_path: Path, vault: Vault) -> None:
    write_note(vault.root, "daily/a.md", "a\n")
    link = tmp_path / "vault-link"
    link.symlink_to(vault.root, target_is_directory=True)
    linked = Vault(link)
    assert linked.read_note("daily/a.md").body == "a"
    assert [i.path for i in linked.scan()] == ["daily/a.md"]


def test_symlink_loops_are_refused_and_skipped_not_crashing(vault: Vault) -> None:
    (vault.root / "daily" / "loop.md").symlink_to(vault.root / "daily" / "loop.md")
    (vault.root / "daily" / "a.md").symlink_to(vault.root / "daily" / "b.md")
    (vault.root / "daily" / "b.md").symlink_to(vault.root / "daily" / "a.md")
    write_note(vault.root, "daily/ok.md", "ok\n")
    assert [i.path for i in vault.scan()] == ["daily/ok.md"]
    assert not vault.exists("daily/loop.md")
    with pytest.raises(PathRefused, match="loop"):
        vault.read_note("daily/loop.md")


def test_a_fifo_named_like_a_note_does_not_block(vault: Vault) -> None:
    os.mkfifo(vault.root / "daily" / "pipe.md")
    write_note(vault.root, "daily/ok.md", "ok\n")
    result: list[object] = []

    def scan_and_read() -> None:
        result.append([i.path for i in vault.scan()])
        try:
            vault.read_note("daily/pipe.md")
        except VaultError as exc:
            result.append(type(exc))

    worker = threading.Thread(target=scan_and_read, daemon=True)
    worker.start()
    worker.join(timeout=10)  # a deadline, not a pause: the thread ends at once when fixed
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert result == [["daily/ok.md"], NoteNotFound]


def test_a_note_that_cannot_be_read_is_note_unreadable(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_note(vault.root, "daily/locked.md", "secret\n")
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(NoteUnreadable) as info:
        vault.read_note("daily/locked.md")
    assert info.value.path == "daily/locked.md"
    assert "Permission denied" in info.value.reason


def test_missing_vault_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(VaultError):
        Vault(tmp_path / "nope")


# -- the scanner --------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        ".x.tmp",
        "x~",
        ".#x",
        "x.swp",
        "x.md.swp",
        "x.sync-conflict-20260101-123456-ABC.md",
        "x (conflict 2026-01-01).md",
        "x (Mara's conflicted copy 2026-01-01).md",
    ],
)
def test_editor_and_sync_conflict_files_are_skipped(vault: Vault, name: str) -> None:
    assert is_skipped_name(name)
    write_note(vault.root, f"daily/{name}", "copy\n")
    write_note(vault.root, "daily/real.md", "real\n")
    assert [i.path for i in vault.scan()] == ["daily/real.md"]


@pytest.mark.parametrize(
    "name",
    [
        "Meeting (conflict resolution).md",
        "Notes on sync-conflict handling.md",
        "x.sync-conflict-notes.md",
        "Dropbox (conflicted copy explained).md",
        "tilde~in the middle.md",
    ],
)
def test_user_notes_that_merely_mention_conflicts_are_not_skipped(
    vault: Vault, name: str
) -> None:
    assert not is_skipped_name(name)
    write_note(vault.root, f"daily/{name}", "mine\n")
    assert [i.path for i in vault.scan()] == [f"daily/{name}"]


@pytest.mark.parametrize("folder", [".obsidian", ".trash", ".vaultlink", ".git"])
def test_tool_folders_are_skipped(vault: Vault, folder: str) -> None:
    write_note(vault.root, f"{folder}/x.md", "tool\n")
    write_note(vault.root, f"daily/{folder}/y.md", "tool\n")
    write_note(vault.root, "daily/real.md", "real\n")
    assert list(vault.iter_files()) == ["daily/real.md"]


def test_scan_reports_size_mtime_and_sha256(vault: Vault) -> None:
    data = "# Day\n\nCafé ☕\n".encode()
    path = write_note(vault.root, "daily/2026-06-20.md", data)
    os.utime(path, (1_750_000_000, 1_750_000_000))
    write_note(vault.root, "resource/figure.png", b"\x89PNG\x00")
    [info] = vault.scan()
    assert info.path == "daily/2026-06-20.md"
    assert info.size == len(data)
    assert info.mtime == 1_750_000_000
    assert info.hash == hashlib.sha256(data).hexdigest() == content_hash(data)


def test_scan_covers_only_the_configured_folders_sorted(vault: Vault) -> None:
    for rel in ("resource/b.md", "daily/2026/z.md", "daily/a.md", "digest/wiki/n.md",
                "elsewhere/x.md", "root.md"):
        write_note(vault.root, rel, "x\n")
    assert [i.path for i in vault.scan()] == [
        "daily/2026/z.md", "daily/a.md", "digest/wiki/n.md", "resource/b.md"]
    assert "root.md" in list(vault.iter_files())


def test_scan_reports_oversized_notes_without_hashing(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily" / "big.md").write_bytes(b"x" * 101)
    v = Vault(tmp_path, max_note_bytes=100)
    [info] = v.scan()
    assert (info.size, info.hash) == (101, "")


# -- reading ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "error"),
    [
        pytest.param(b"---\nname: [unclosed\n---\nbody\n", BrokenFrontmatter, id="broken-yaml"),
        pytest.param(b"---\nname: x\n  bad: indent\n---\nbody\n", BrokenFrontmatter,
                     id="bad-indent"),
        pytest.param(b"caf\xe9 latin-1\n", NotUtf8, id="not-utf8"),
        pytest.param(b"text\x00more", BinaryNote, id="nul-bytes"),
    ],
)
def test_bad_notes_raise_typed_errors_with_path_and_reason(
    vault: Vault, data: bytes, error: type[NoteUnreadable]
) -> None:
    write_note(vault.root, "daily/bad.md", data)
    with pytest.raises(error) as info:
        vault.read_note("daily/bad.md")
    exc = info.value
    assert isinstance(exc, NoteUnreadable) and isinstance(exc, VaultError)
    assert exc.path == "daily/bad.md"
    assert exc.reason and "Traceback" not in exc.reason
    assert "daily/bad.md" in str(exc)


def test_note_over_the_size_limit_raises_note_too_large(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily" / "big.md").write_bytes(b"x" * 2048)
    v = Vault(tmp_path, max_note_bytes=1024)
    with pytest.raises(NoteTooLarge) as info:
        v.read_note("daily/big.md")
    assert info.value.path == "daily/big.md"
    assert "1,024" in info.value.reason
    assert isinstance(info.value, VaultError)


def test_missing_note_raises_note_not_found(vault: Vault) -> None:
    with pytest.raises(NoteNotFound) as info:
        vault.read_note("daily/nope.md")
    assert info.value.path == "daily/nope.md"
    assert isinstance(info.value, VaultError)


def test_a_folder_is_not_a_note(vault: Vault) -> None:
    with pytest.raises(NoteNotFound):
        vault.read_note("daily")


def test_utf8_bom_is_fine(vault: Vault) -> None:
    data = b"\xef\xbb\xbf---\nname: Caf\xc3\xa9\n---\nbody [[x]]\n"
    write_note(vault.root, "daily/bom.md", data)
    note = vault.read_note("daily/bom.md")
    assert note.frontmatter == {"name": "Café"}
    assert note.body == "body [[x]]"
    assert not note.text.startswith("\ufeff")
    assert note.hash == content_hash(data)


def test_frontmatter_that_is_not_a_mapping_is_broken(vault: Vault) -> None:
    write_note(vault.root, "daily/list.md", "---\n- a\n- b\n---\nbody\n")
    with pytest.raises(BrokenFrontmatter):
        vault.read_note("daily/list.md")


def test_empty_frontmatter_and_no_frontmatter_are_fine(vault: Vault) -> None:
    write_note(vault.root, "daily/empty.md", "---\n---\nbody\n")
    write_note(vault.root, "daily/none.md", "just text\n")
    assert vault.read_note("daily/empty.md").frontmatter == {}
    assert vault.read_note("daily/none.md").body == "just text"


def test_note_name_and_description_fall_back(vault: Vault) -> None:
    write_note(vault.root, "digest/wiki/a.md",
               "---\nname: A node\ndescription: What it is.\n---\nx\n")
    write_note(vault.root, "digest/wiki/b-slug.md", "x\n")
    a, b = vault.read_note("digest/wiki/a.md"), vault.read_note("digest/wiki/b-slug.md")
    assert (a.name, a.description) == ("A node", "What it is.")
    assert (b.name, b.description) == ("b-slug", "")


def test_render_note_round_trips_through_read(vault: Vault) -> None:
    meta = {"name": "Café", "description": "Short.", "kind": "concept"}
    text = render_note(meta, "Body [[daily/x.md]].")
    vault.write(NODE, text, None)
    note = vault.read_note(NODE)
    assert note.frontmatter == meta
    assert list(note.frontmatter) == ["name", "description", "kind"]
    assert note.body == "Body [[daily/x.md]]."


# -- the compare-and-swap write -----------------------------------------------


def test_write_creates_when_expected_hash_is_none(vault: Vault) -> None:
    new_hash = vault.write(NODE, "first\n", None)
    assert (vault.root / NODE).read_bytes() == b"first\n"
    assert new_hash == content_hash(b"first\n")
    assert leftovers(vault.root) == []


def test_create_over_an_existing_file_is_a_conflict(vault: Vault) -> None:
    write_note(vault.root, NODE, "the user's node\n")
    with pytest.raises(WriteConflict):
        vault.write(NODE, "ours\n", None)
    assert (vault.root / NODE).read_text() == "the user's node\n"
    assert leftovers(vault.root) == []


def test_write_replaces_when_the_hash_matches(vault: Vault) -> None:
    h = vault.write(NODE, "v1\n", None)
    h2 = vault.write(NODE, "v2\n", h)
    assert (vault.root / NODE).read_text() == "v2\n"
    assert h2 == content_hash(b"v2\n")
    assert leftovers(vault.root) == []


def test_write_conflicts_when_the_file_changed_since_read(vault: Vault) -> None:
    vault.write(NODE, "v1\n", None)
    read_hash = vault.read_note(NODE).hash
    user = "v1\nthe user's edit, café\n".encode()
    (vault.root / NODE).write_bytes(user)
    with pytest.raises(WriteConflict) as info:
        vault.write(NODE, "ours\n", read_hash)
    assert info.value.path == NODE
    assert (vault.root / NODE).read_bytes() == user
    assert leftovers(vault.root) == []


def test_write_conflicts_when_the_file_was_deleted_since_read(vault: Vault) -> None:
    h = vault.write(NODE, "v1\n", None)
    (vault.root / NODE).unlink()
    with pytest.raises(WriteConflict):
        vault.write(NODE, "ours\n", h)
    assert not (vault.root / NODE).exists()
    assert leftovers(vault.root) == []


def test_write_makes_missing_folders(vault: Vault) -> None:
    vault.write("digest/procedure/new-one.md", "x\n", None)
    vault.write(".vaultlink/logs/run.md", "x\n", None)
    assert (vault.root / "digest/procedure/new-one.md").is_file()
    assert (vault.root / ".vaultlink/logs/run.md").is_file()


@pytest.mark.parametrize(
    "raw",
    ["daily/x.md", "resource/x.md", "x.md", "digest/../daily/x.md", "digest", "digestx/a.md",
     ".obsidian/app.json", "../digest/x.md"],
)
def test_write_outside_digest_and_state_is_refused(vault: Vault, raw: str) -> None:
    before = sorted(p.as_posix() for p in vault.root.rglob("*"))
    with pytest.raises(PathRefused):
        vault.write(raw, "x\n", None)
    assert sorted(p.as_posix() for p in vault.root.rglob("*")) == before


def test_write_through_a_symlinked_digest_pointing_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "digest").symlink_to(outside, target_is_directory=True)
    v = Vault(root)
    with pytest.raises(PathRefused):
        v.write("digest/wiki/x.md", "x\n", None)
    with pytest.raises(PathRefused):
        v.write("digest/x.md", "x\n", None)
    assert list(outside.rglob("*")) == []


def test_write_through_a_symlinked_subfolder_pointing_outside_is_refused(
    vault: Vault, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault.root / "digest" / "wiki").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused):
        vault.write("digest/wiki/x.md", "x\n", None)
    assert list(outside.iterdir()) == []


def test_delete_checks_the_hash(vault: Vault) -> None:
    h = vault.write(NODE, "v1\n", None)
    (vault.root / NODE).write_text("user edit\n")
    with pytest.raises(WriteConflict):
        vault.delete(NODE, h)
    assert (vault.root / NODE).read_text() == "user edit\n"
    vault.delete(NODE, content_hash(b"user edit\n"))
    assert not (vault.root / NODE).exists()
    assert leftovers(vault.root) == []


def test_delete_of_a_missing_file_is_a_conflict(vault: Vault) -> None:
    with pytest.raises(WriteConflict):
        vault.delete(NODE, content_hash(b"x"))


def test_delete_outside_digest_is_refused(vault: Vault) -> None:
    write_note(vault.root, "daily/x.md", "mine\n")
    with pytest.raises(PathRefused):
        vault.delete("daily/x.md", content_hash(b"mine\n"))
    assert (vault.root / "daily/x.md").read_text() == "mine\n"


def save_like_an_editor(path: Path, data: bytes, atomic: bool = True) -> None:
    """The user's save: to a temp file and renamed over the note, or rewritten in place."""
    if atomic:
        tmp = path.with_name(f".{path.name}.editor-save")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("atomic", [True, False], ids=["atomic-save", "in-place-save"])
def test_a_save_landing_right_after_the_hash_compare_wins(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, atomic: bool
) -> None:
    """The user saves at the worst moment: just after the write compared the hash."""
    path = vault.root / NODE
    read_hash = vault.write(NODE, "v1\n", None)
    user = b"v1\nthe user's edit\n"
    fired: list[bool] = []
    real_hash = content_hash

    def hash_then_user_saves(data: bytes) -> str:
        digest = real_hash(data)
        if not fired and digest == read_hash:
            fired.append(True)
            save_like_an_editor(path, user, atomic)
        return digest

    monkeypatch.setattr("vaultlink.vault.atomic.content_hash", hash_then_user_saves)
    with pytest.raises(WriteConflict):
        vault.write(NODE, "ours\n", read_hash)
    assert fired, "the write never compared the hash through content_hash"
    assert path.read_bytes() == user
    assert leftovers(vault.root) == []


def test_a_save_landing_right_after_the_delete_compare_wins(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = vault.root / NODE
    read_hash = vault.write(NODE, "v1\n", None)
    fired: list[bool] = []
    real_hash = content_hash

    def hash_then_user_saves(data: bytes) -> str:
        digest = real_hash(data)
        if not fired and digest == read_hash:
            fired.append(True)
            save_like_an_editor(path, b"kept\n")
        return digest

    monkeypatch.setattr("vaultlink.vault.atomic.content_hash", hash_then_user_saves)
    with pytest.raises(WriteConflict):
        vault.delete(NODE, read_hash)
    assert fired
    assert path.read_bytes() == b"kept\n"


def test_a_write_failing_midway_keeps_the_old_file(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links: the write fails, the old node stays."""
    h = vault.write(NODE, "v1\n", None)

    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "hard links not supported")

    monkeypatch.setattr("vaultlink.vault.notes.os.link", no_links)
    with pytest.raises(WriteFailed, match=r"permission denied.*nothing was half-written"):
        vault.write(NODE, "v2\n", h)
    monkeypatch.undo()
    assert (vault.root / NODE).read_text() == "v1\n"
    assert leftovers(vault.root) == []


def test_concurrent_user_saves_are_never_lost(vault: Vault) -> None:
    """A writer thread hammers the node while the user keeps saving it.

    Every content we write names the hash it was based on. Whenever the user looks
    at the file, following those bases back must lead to the user's own last save:
    anything else means a write replaced a save it never saw. Big contents make the
    hashing slow enough for saves to land inside the write.
    """
    path = vault.root / NODE
    pad = "lorem ipsum " * 100_000
    first = f"user 0\n{pad}".encode()
    vault.write(NODE, first.decode(), None)
    based_on: dict[str, str] = {}
    outcomes = {"written": 0, "conflict": 0}
    attempt_started = threading.Semaphore(0)
    finished = threading.Event()
    errors: list[BaseException] = []

    def read() -> bytes:
        while True:  # the name is absent for an instant while a write swaps it
            try:
                return path.read_bytes()
            except FileNotFoundError:
                continue

    def writer() -> None:
        try:
            for k in range(60):
                base = content_hash(read())
                text = f"vaultlink {k} based on {base}\n{pad}"
                based_on[content_hash(text.encode())] = base
                attempt_started.release()
                try:
                    vault.write(NODE, text, base)
                    outcomes["written"] += 1
                except WriteConflict:
                    outcomes["conflict"] += 1
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            finished.set()
            attempt_started.release()

    def origin(digest: str) -> str:
        while digest in based_on:
            digest = based_on[digest]
        return digest

    thread = threading.Thread(target=writer)
    thread.start()
    last_save = content_hash(first)
    typing = bytes(4_000_000)
    saves = 0
    while True:
        attempt_started.acquire()
        if finished.is_set():
            break
        assert origin(content_hash(read())) == last_save, f"save {saves} was lost"
        saves += 1
        hashlib.sha256(typing[: (saves * 7919 * 97) % len(typing)]).digest()  # types a while
        user = f"user {saves}\n{pad}".encode()
        save_like_an_editor(path, user)
        last_save = content_hash(user)
    thread.join()
    assert errors == []
    assert origin(content_hash(read())) == last_save, "the last save was lost"
    assert outcomes["written"] + outcomes["conflict"] == 60
    assert outcomes["conflict"] > 0
    assert leftovers(vault.root) == []
