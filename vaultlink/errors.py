"""The one exception tree of vaultlink.

Every error vaultlink raises on purpose is a ``VaultlinkError``; its message says
what went wrong and, where there is one, what the user can do next. The CLI maps
each branch to an exit code and prints the message on one line.

::

    VaultlinkError
    ├── ConfigError              bad or unreadable .vaultlink/config.yaml, unknown step
    ├── FrontmatterError         a note's text has a frontmatter block that does not parse
    ├── VaultError               anything about the vault's files
    │   ├── PathRefused          a path outside the vault or outside digest/ and .vaultlink/
    │   ├── NoteUnreadable       one note cannot be read
    │   │   ├── BrokenFrontmatter    YAML that does not parse
    │   │   ├── NotUtf8              bytes that are not UTF-8
    │   │   ├── BinaryNote           NUL bytes: not a text note
    │   │   └── NoteTooLarge         over the size limit
    │   ├── NoteNotFound         the note does not exist
    │   ├── WriteConflict        the file changed since it was read (compare-and-swap)
    │   └── WriteFailed          the disk refused a write (full, read-only, I/O error)
    ├── SearchIndexError         the search index (Chroma, FTS) failed or is corrupt
    │   └── IndexServerUnavailable   the Chroma server (index.chroma.mode: http) does not answer
    ├── EmbeddingError           the embedding model could not load or run
    ├── ModelError               talking to the LLM
    │   ├── ModelUnavailable     no server answers, or the model is not pulled
    │   ├── ModelTimeout         the server did not answer in time
    │   ├── PromptTooLarge       the prompt would not fit llm.num_ctx; nothing was sent
    │   └── ModelOutputError     the answer is not what was asked for (bad JSON, bad receipt)
    │       └── AnswerCut        the answer hit its length cap: ask for less, do not resend
    ├── GuardRefusal             a proposed write breaks an invariant; the model sees the message
    ├── StateError               state.sqlite, the decision journal, undo
    │   └── UndoConflict         the file changed since the decision; undo refused
    │       └── UndoNeedsCascade     later decisions depend on it; --cascade reverts them too
    └── DaemonError              the daemon cannot start, serve or be reached
        └── VaultBusy            another vaultlink process is the vault's writer now
"""

from __future__ import annotations

import errno
from enum import StrEnum


class VaultlinkError(Exception):
    """Base of every error vaultlink raises on purpose."""

    exit_code = 1


class ConfigError(VaultlinkError):
    """The configuration is invalid; the message names the key and the fix."""

    exit_code = 2


class FrontmatterError(VaultlinkError):
    """A frontmatter block that does not parse, found in text with no path yet (the
    vault raises ``BrokenFrontmatter`` with the note's path)."""


class VaultError(VaultlinkError):
    """A problem with a file of the vault."""


class PathRefused(VaultError):
    """A path that vaultlink will not read or write (outside the vault, or not ours to write)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path!r} refused: {reason}")
        self.path = path
        self.reason = reason


class NoteUnreadable(VaultError):
    """A note that cannot be read; ``reason`` is plain words, ``path`` is vault-relative."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class BrokenFrontmatter(NoteUnreadable):
    """The YAML frontmatter does not parse."""


class NotUtf8(NoteUnreadable):
    """The file is not valid UTF-8."""


class BinaryNote(NoteUnreadable):
    """The file holds NUL bytes: it is not a text note."""


class NoteTooLarge(NoteUnreadable):
    """The file is larger than the configured limit."""


class NoteNotFound(VaultError):
    """The note does not exist."""

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: no such note")
        self.path = path


class WriteConflict(VaultError):
    """The file on disk changed since the caller read it; nothing was written."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} changed on disk since it was read; nothing was written. "
            "Read it again and redo the change."
        )
        self.path = path


# What to do about a write the disk refused, by errno name.
_DISK_ADVICE = {
    "ENOSPC": "the disk is full: free some space, then run again",
    "EDQUOT": "the disk quota is used up: free some space, then run again",
    "EROFS": "the vault is on a read-only file system: remount it writable, or run "
             "vaultlink where the vault can be written",
    "EACCES": "permission denied: vaultlink needs to write digest/ and .vaultlink/",
    "EPERM": "permission denied: vaultlink needs to write digest/ and .vaultlink/",
    "EIO": "the disk reported an I/O error: check the disk before going on",
}


def disk_advice(exc: OSError) -> str:
    """Plain words and a next step for an ``OSError`` of a write."""
    name = errno.errorcode.get(exc.errno or 0, "")
    return _DISK_ADVICE.get(name, f"{exc.strerror or exc}; check the disk and run again")


class WriteFailed(VaultError):
    """The disk refused a write (full, read-only, I/O error); nothing was half-written:
    writes are atomic, so the file keeps its old text."""

    def __init__(self, path: str, exc: OSError) -> None:
        super().__init__(f"could not write {path}: {disk_advice(exc)} (nothing was "
                         "half-written)")
        self.path = path
        self.errno = exc.errno


class SearchIndexError(VaultlinkError):
    """The search index failed; ``vaultlink reindex`` rebuilds it from the vault."""


class IndexServerUnavailable(SearchIndexError):
    """The Chroma server that holds the vectors (``index.chroma.mode: http``) did not
    answer, after retries: nothing was indexed or checkpointed, the notes wait for it."""


class EmbeddingError(VaultlinkError):
    """The embedding model could not be loaded or run."""


class ModelError(VaultlinkError):
    """A problem talking to the language model."""


class ModelUnavailable(ModelError):
    """No Ollama server answers, or the model is not pulled."""


class ModelTimeout(ModelError):
    """The model server did not answer in time."""


class PromptTooLarge(ModelError):
    """The prompt would not fit the context window; nothing was sent. Pack smaller."""

    def __init__(self, prompt_tokens: int, budget_tokens: int) -> None:
        super().__init__(
            f"prompt of about {prompt_tokens} tokens exceeds the budget of {budget_tokens} "
            "(llm.num_ctx minus room for the answer); nothing was sent"
        )
        self.prompt_tokens = prompt_tokens
        self.budget_tokens = budget_tokens


class ModelOutputError(ModelError):
    """The model answered with something unusable (bad JSON, bad receipt, unknown tool)."""


class AnswerCut(ModelOutputError):
    """The answer stopped at its length cap, so its JSON is cut off. Resending the same
    request gets the same cut answer: ask for less (fewer sections, fewer units)."""

    def __init__(self, message: str, tokens: int) -> None:
        super().__init__(message)
        self.tokens = tokens


class Refusal(StrEnum):
    """Why the guard refused a write: stable codes for code (the offline integrator, the
    journal, reports); the refusal's message is for people and models."""

    NOT_A_NODE_PATH = "not_a_node_path"  # outside <digest>/<bucket>/<slug>.md
    OTHER_TARGET = "other_target"  # the unit already wrote another node
    EXISTS = "exists"  # CREATE over a node that exists
    WRONG_BUCKET = "wrong_bucket"  # a new node outside the unit's bucket
    NOT_EXISTING = "not_existing"  # an update of a node that did not exist before
    UNREADABLE = "unreadable"  # the new text's frontmatter does not parse
    MISSING_KEY = "missing_key"  # no name or description
    NOT_ADDITIVE = "not_additive"  # an update removed a link or source entry
    BARE_SOURCE_LINE = "bare_source_line"  # a source link with no sentence around it
    UNRESOLVED_LINK = "unresolved_link"  # a new link that names no note
    RECEIPT_MISMATCH = "receipt_mismatch"  # the receipt names another node
    WRONG_ACTION = "wrong_action"  # CREATE of an old node, or an update of a new one
    NO_CHANGE = "no_change"  # the session changed nothing
    NO_SOURCE = "no_source"  # the node does not cite the unit's source
    CORRECTION_LOST = "correction_lost"  # CORRECT deleted the superseded statement
    CORRECTION_UNMARKED = "correction_unmarked"  # CORRECT says nowhere what it corrected
    PROSE_CHANGED = "prose_changed"  # a REFINE or CORROBORATE changed or dropped a sentence
    REMOTE_IMAGE = "remote_image"  # an image or embed fetched from outside the vault
    RAW_HTML = "raw_html"  # a tag that loads, runs or links (img, iframe, on*=, ...)
    UNSOURCED_URL = "unsourced_url"  # a URL none of the unit's source notes holds
    BAD_EDIT = "bad_edit"  # edit's `old` text is empty, missing or ambiguous
    BAD_ARGUMENTS = "bad_arguments"  # a tool's arguments are not what it takes
    PATH_REFUSED = "path_refused"  # a path the vault refuses (read policy, symlinked folder)
    SHADOWS_NAME = "shadows_name"  # a new node's file name is another file's or an alias
    NUMBERED_NAME = "numbered_name"  # a new node named by a date, a file id or a number


class GuardRefusal(VaultlinkError):
    """A proposed write breaks an invariant of the vault: ``code`` says which (a
    ``Refusal``), the message says it to the model in words, ``detail`` carries values
    code may need (the digest folder of a path refusal)."""

    def __init__(self, code: Refusal, message: str, **detail: str) -> None:
        super().__init__(message)
        self.code = code
        self.detail = detail


class StateError(VaultlinkError):
    """state.sqlite or the decision journal failed."""


class UndoConflict(StateError):
    """The file changed since the decision was written, so it cannot be undone safely."""


class UndoNeedsCascade(UndoConflict):
    """Undoing (or redoing) one decision alone would lose a later edit or break a link;
    ``needs`` lists the other decisions ``--cascade`` would revert with it."""

    def __init__(self, message: str, needs: list[dict[str, object]]) -> None:
        super().__init__(message)
        self.needs = needs


class DaemonError(VaultlinkError):
    """The daemon cannot start or serve (lock held, port refused)."""

    exit_code = 3


class VaultBusy(DaemonError):
    """Another vaultlink process holds the vault's writer lock.

    ``holder`` names what holds it: ``daemon`` or the command (``dream``, ``reindex``...).
    """

    def __init__(self, pid: str, holder: str, hint: str = "") -> None:
        self.pid, self.holder = pid, holder
        if holder == "daemon":
            what = f"the vaultlink daemon (pid {pid}) is running on this vault"
            hint = hint or f"stop it first (`kill {pid}`)"
        elif holder == "unknown":
            what = "another vaultlink process is just taking this vault"
            hint = hint or "try again in a moment"
        else:
            what = f"`vaultlink {holder}` (pid {pid}) is working on this vault"
            hint = hint or "wait for it to finish, then try again"
        super().__init__(f"{what}; one process writes a vault at a time: {hint}")


def unexpected(exc: BaseException) -> str:
    """What to tell the user of an error vaultlink did not foresee on one note or unit:
    it fails that item alone (kept, retried, parked after a few runs), never the run."""
    detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    kind = type(exc).__name__
    return (f"vaultlink could not handle it ({kind}{': ' + detail if detail else ''}); "
            "it is kept and tried again on the next run, then parked: please report this "
            "with the log (.vaultlink/logs/) and the note")

