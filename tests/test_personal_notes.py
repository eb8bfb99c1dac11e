"""Personal vaults as their owners keep them (issue 37, items 2 and 3): a day-note template
is the frame, not the content, and Obsidian's syntax is read as Obsidian means it.

The fixtures (tests/fixtures/personal/) have the shapes of real vaults: a templated
journal (Daily notes settings, a Templater template with navigation, inline fields and a
tasks query; bare days and days with one entry), and a dataview-heavy course note with
callouts. Whole offline runs on real state and index; the model path against the fake
Ollama server; the section index through its own ``docs_of``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.fakes.dream_runs import creator, offline_dream, with_extract
from tests.fakes.dream_runs import dream as model_dream
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.sample_vault_model import extract_request
from tests.vaults import vault_with
from vaultlink.index.chunks import ChunkIndex
from vaultlink.llm.chat import ChatReply
from vaultlink.markdown.sections import chunk_note
from vaultlink.pipeline.context import RunState, SourceNote
from vaultlink.pipeline.extract.extractor import ModelExtractor
from vaultlink.pipeline.extract.template import DayTemplate
from vaultlink.pipeline.offline.extract import OfflineExtractor
from vaultlink.vault.notes import Vault

FIXTURES = Path(__file__).parent / "fixtures" / "personal"
BARE = ["daily/2022-08-01.md", "daily/2022-08-02.md", "daily/2022-08-05.md"]
LEARNED = "daily/2022-08-03.md"
SISTER, WALK = "daily/2022-08-04.md", "daily/2022-08-06.md"
TEMPLATE_WORDS = ("Journal", "Learning", "Gratitudes", "Exercise", "Tasks", "Mood",
                  "Song", "Bohemian", "stood out", "Morning stretch", "not done", "<<")
STUDENT = "resource/Linear Algebra.md"
MACHINERY = ("::", "Links", "MATH 221", "Calculus II", "TABLE", "file.mtime", "dv.",
             "TODO", "lecture 12", "^diag-def", "#math", "in-progress", "rotation-diagram",
             "[!", "!definition", "<<")


def vault_of(tmp_path: Path, *names: str, leave_out: tuple[str, ...] = ()) -> Path:
    """A vault made of the named fixture folders, without the ``leave_out`` paths."""
    root = tmp_path / "vault"
    for name in names:
        shutil.copytree(FIXTURES / name, root, dirs_exist_ok=True)
    vault_with(root, {})
    for rel in leave_out:
        path = root / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return root


def dream(root: Path) -> RunState:
    return offline_dream(root, **{"auto_dream.max_units": 50})


def units_of(run: RunState, path: str) -> list[Any]:
    return [u for u in run.extraction.units if path in u.paths]


def digest_text(root: Path) -> str:
    return "\n".join(p.read_text() for p in sorted((root / "digest").rglob("*.md")))


def infos_of(root: Path) -> list[Any]:
    vault = Vault(root)
    return [i for i in vault.scan([vault.daily])]


# -- 2. the template is the frame --------------------------------------------------


def test_the_template_is_found_from_obsidians_daily_notes_settings(tmp_path: Path) -> None:
    from vaultlink.pipeline.extract.template import day_template
    root = vault_of(tmp_path, "journal")
    template = day_template(Vault(root), infos_of(root))
    assert template.source.startswith("Templates/Daily.md")
    assert {"## Journal", "## Gratitudes", "## Exercise", "```tasks"} - {"```tasks"} \
        <= template.lines
    assert template.is_frame("# 2022-08-04", "2022-08-04")  # "# <% tp.file.title %>"
    assert template.is_frame("due before 2022-08-04", "2022-08-04")
    assert not template.is_frame("# Trip to Lisbon", "2022-08-04")  # the owner's words
    text = (root / SISTER).read_text()
    owner = template.owner_text(SISTER, text)
    assert len(owner.split("\n")) == len(text.split("\n"))  # line for line
    body = [ln for ln in owner.split("\n")[3:] if ln.strip()]
    assert body == ["1. Grateful that my sister called from Lisbon and we talked for an hour "
                    "about her new job at the observatory."]
    # computed once: the same day notes and settings give the same value, not read again
    assert day_template(Vault(root), infos_of(root)) is template


def test_the_template_is_inferred_from_the_day_notes_without_settings(tmp_path: Path) -> None:
    from vaultlink.pipeline.extract.template import day_template
    root = vault_of(tmp_path, "journal", leave_out=(".obsidian", "Templates"))
    template = day_template(Vault(root), infos_of(root))
    assert "recurring" in template.source
    assert {"## Journal", "## Learning", "## Gratitudes", "## Exercise",
            "*What did I learn today?*"} <= template.lines
    assert not any("Grateful" in line or "Fourier" in line for line in template.lines)
    for path in BARE:  # a bare day is nothing but its frame
        owner = template.owner_text(path, (root / path).read_text())
        assert [ln for ln in owner.split("\n")[3:] if ln.strip()] == [f"# {path[6:16]}"]
    # fewer than five day notes: no frame is guessed
    few = vault_of(tmp_path / "few", "journal", leave_out=(".obsidian", "Templates", *BARE))
    assert not day_template(Vault(few), infos_of(few))


def test_settings_are_the_owners_but_read_as_untrusted(tmp_path: Path) -> None:
    from vaultlink.pipeline.extract.template import day_template
    root = vault_of(tmp_path, "journal")
    obsidian = root / ".obsidian"
    (obsidian / "daily-notes.json").write_text('{"template": "../../etc/passwd"')
    (obsidian / "templates.json").write_text('{"folder": ' + "[" * 5000 + "]" * 5000 + "}")
    (obsidian / "plugins/periodic-notes").mkdir(parents=True)
    (obsidian / "plugins/periodic-notes/data.json").write_text(
        '{"daily": {"enabled": true, "template": ".vaultlink/config"}}')
    (obsidian / "plugins/templater-obsidian").mkdir(parents=True)
    (obsidian / "plugins/templater-obsidian/data.json").write_text("x" * 100_000)
    template = day_template(Vault(root), infos_of(root))
    assert "Templates" not in template.source and "recurring" in template.source
    (obsidian / "plugins/periodic-notes/data.json").write_text(
        '{"daily": {"enabled": true, "template": "/Templates/Daily.md"}}')
    assert day_template(Vault(root), infos_of(root)).source.startswith("Templates/Daily.md")


def test_a_template_only_day_gives_no_unit_and_no_topics_line(tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal")
    run = dream(root)
    for path in BARE:
        assert units_of(run, path) == [], [u.name for u in units_of(run, path)]
        assert path in run.report.checkpointed  # read, and nothing to keep: not read again
    topics = "\n".join(p.read_text() for p in (root / "digest/topics").glob("*.md"))
    for path in BARE:
        assert path.removesuffix(".md") not in topics
    assert not [w for w in ("Journal", "Learning", "Gratitudes", "Exercise") if w in topics]
    nodes = {p.stem for p in (root / "digest").rglob("*.md")} - {"topics"}
    assert not nodes & {"journal", "learning", "gratitudes", "exercise", "tasks", "mood"}
    for path in BARE:  # no node cites a bare day
        assert path.removesuffix(".md") not in digest_text(root)


def test_one_owner_line_under_the_template_gives_a_unit_of_that_line_named_by_its_subject(
        tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal")
    run = dream(root)
    [unit] = units_of(run, LEARNED)
    assert "Fourier transform turns a convolution into a plain multiplication" in unit.summary
    assert not [w for w in TEMPLATE_WORDS if w in unit.summary or w in unit.title]
    assert unit.name not in {"learning", "journal", "2022-08-03"}
    assert "fourier" in unit.name or "convolution" in unit.name, unit.name


def test_repeats_are_judged_on_the_owners_text_only(tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal", leave_out=(WALK,))
    first = dream(root)
    assert [u.name for u in units_of(first, SISTER)]
    shutil.copy(FIXTURES / "journal" / WALK, root / WALK)
    second = dream(root)
    [unit] = units_of(second, WALK)  # same frame, another entry: no copy of any day
    assert not unit.repeats and not unit.corroborates
    assert "evening walk along the river with Tom" in unit.summary
    assert "confirmed again" not in digest_text(root).lower()
    cited = [p for p in (root / "digest").rglob("*.md")
             if "2022-08-06" in p.read_text() and "topics" not in p.parts]
    assert cited and all("evening walk" in p.read_text() for p in cited)


def templated_day(date: str, journal: str = "", learning: str = "", grateful: str = "") -> str:
    """A day note as the journal's template makes it, with the owner's entries."""
    day = (FIXTURES / "journal" / SISTER).read_text().replace("2022-08-04", date)
    day = day.replace("stood out?*\n- ", f"stood out?*\n- {journal}")
    day = day.replace("learn today?*\n- ", f"learn today?*\n- {learning}")
    return day.replace(day.split("\n1. ", 1)[1].split("\n", 1)[0], grateful)


def test_a_real_copy_of_a_templated_day_is_still_a_copy(tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal")
    entries = ("Rewrote the backup script so that it checks every archive after it is "
               "written and mails me when one fails.",
               "The restic prune step needs the lock released first, or it waits for ever "
               "on the stale lock of the crashed run.",
               "Grateful that the old laptop finally booted again after the new power supply "
               "arrived on Monday morning.")
    (root / "daily/2022-08-07.md").write_text(templated_day("2022-08-07", *entries))
    dream(root)
    (root / "daily/2022-08-08.md").write_text(templated_day("2022-08-08", *entries))
    again = dream(root)
    units = units_of(again, "daily/2022-08-08.md")
    assert units and all(u.repeats == "daily/2022-08-07.md" for u in units), units


# -- 3. Obsidian's syntax ------------------------------------------------------------


def test_inline_fields_navigation_queries_and_comments_never_reach_a_unit(
        tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal", "student")
    run = dream(root)
    assert run.extraction.units
    for unit in run.extraction.units:
        said = f"{unit.title}\n{unit.description}\n{unit.summary}"
        assert "Bohemian" not in said and "Mood" not in said, said
        if STUDENT in unit.paths:
            assert not [w for w in MACHINERY if w in said], said
    assert not list((root / "digest").rglob("bohemian*.md"))
    assert "Bohemian" not in digest_text(root) and "Links::" not in digest_text(root)


def test_a_callout_keeps_its_title_and_body_as_one_block(tmp_path: Path) -> None:
    root = vault_of(tmp_path, "student")
    run = dream(root)
    said = "\n".join(u.summary for u in units_of(run, STUDENT))
    assert ("Eigenvector: An eigenvector of a square matrix A is a nonzero vector v that A "
            "only stretches") in said, said
    assert "!definition" not in said and "[!" not in said


def test_a_sections_text_in_search_is_the_owners_content(tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal", "student")
    vault = Vault(root)
    index = SimpleNamespace(vault=vault, max_chars=1200)  # what docs_of reads of its index
    docs = ChunkIndex.docs_of(index, vault.read_note(STUDENT))  # type: ignore[arg-type]
    text = "\n".join(d.fts[1] for d in docs)
    assert not [w for w in MACHINERY if w in text], text
    assert "Eigenvector:\nAn eigenvector of a square matrix" in text
    assert "Diagonalization writes a matrix" in text
    lines = (root / STUDENT).read_text().split("\n")
    for doc in docs:  # each section still points at its line of the file
        first = doc.fts[1].split("\n")[0]
        assert first.removesuffix(":") in lines[doc.line - 1], (first, doc.line)
    day = "\n".join(d.fts[1] for d in ChunkIndex.docs_of(
        index, vault.read_note(SISTER)))  # type: ignore[arg-type]
    assert "Mood" not in day and "Bohemian" not in day and "not done" not in day
    assert "<<" not in day and "2022-08-03" not in day


def test_the_model_is_sent_what_the_owner_wrote(tmp_path: Path) -> None:
    root = vault_of(tmp_path, "journal", "student")
    with FakeOllama(model=with_extract(creator)) as server:
        model_dream(root, server.url)
        asked = {extract_request(r)[0]: next(m["content"] for m in r["messages"]
                                             if m["role"] == "user")
                 for r in server.chat_requests() if r.get("format")
                 and "units" in str(r.get("format"))}
    assert not set(BARE) & set(asked), sorted(asked)  # a bare day is not sent at all
    learned = asked[LEARNED]
    assert "Fourier transform" in learned
    assert not [w for w in TEMPLATE_WORDS if w in learned], learned
    course = asked[STUDENT]
    assert "Eigenvector:\nAn eigenvector" in course and "Diagonalization" in course
    assert not [w for w in MACHINERY if w in course], course


class Recording:
    """A chat model that answers no units and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def chat(self, messages: list[dict[str, Any]], tools: Any = None, schema: Any = None
             ) -> ChatReply:
        self.asked.append(messages[-1]["content"])
        return ChatReply('{"units": []}')


def asked_of(note: SourceNote) -> list[str]:
    """What the model path sends a model for ``note`` (the rules' share aside)."""
    model = Recording()
    ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
    return model.asked


def test_both_extractors_read_obsidians_syntax_in_any_note_they_are_given() -> None:
    # a note handed over as read (tests, crash recovery), not cut by extract.source_note
    text = (FIXTURES / "student" / STUDENT).read_text()
    sections = [(c.breadcrumb, c.text, True) for c in chunk_note(text, "Linear Algebra")]
    note = SourceNote(STUDENT, "Linear Algebra", sections, text)
    model = Recording()
    ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
    asked = "\n".join(model.asked)
    assert "Eigenvector:\nAn eigenvector" in asked
    assert not [w for w in MACHINERY if w in asked.split("\n", 1)[1]], asked
    units = OfflineExtractor().extract([note])
    said = "\n".join(f"{u.title}\n{u.summary}" for u in units)
    assert "Eigenvector: An eigenvector" in said
    assert not [w for w in MACHINERY if w in said], said


def test_each_piece_of_obsidian_syntax_is_read_as_obsidian_means_it() -> None:
    from vaultlink.markdown.obsidian import aliases_of, content_text
    cases = {  # line(s) as written -> what is content of them
        "Mood:: 7": "",
        "- **Sleep**:: 8h": "",
        "A day of music (Song:: Bohemian Rhapsody) and [Rating:: 5] rest.":
            "A day of music and rest.",
        "(Links:: [[Matrices]], [[Vector spaces (math)]])": "",
        "<< [[2022-08-04]] | [[2022-08-06]] >>": "",
        "⬅ [[2022-08-04|Yesterday]]": "",
        "- [[Book notes]]": "- [[Book notes]]",  # a link is no navigation line
        "```dataview\nLIST FROM #book\n```": "\n\n",
        "```tasks\nnot done\n```": "\n\n",
        "```query\ntag:#idea\n```": "\n\n",
        "```python\n# a comment :: #not-a-tag %% kept\n```":
            "```python\n# a comment :: #not-a-tag %% kept\n```",
        "<%* const x = 1\ntR += x %>Done.": "\nDone.",
        "Seen %% not shown %% here.": "Seen here.",
        "%% a comment\nover lines %%\nShown.": "\n\nShown.",
        "Count: `= this.file.day` and `code #x`.": "Count: and `code #x`.",
        "> [!definition]- Eigenvector\n> A vector A only stretches.":
            "Eigenvector:\nA vector A only stretches.",
        "> [!note]\n>\n> Body.": "\n\nBody.",
        "> [!tip] Only a title": "Only a title",
        "> [!example] Outer\n> > [!note] Inner\n> > Deep text.":
            "Outer:\nInner:\nDeep text.",
        "See the chart. ![[chart.png]]": "See the chart.",
        "![[Other note#Section]]": "",
        "A claim worth linking to. ^claim-1": "A claim worth linking to.",
        "^table-id": "",
        "#journal #life": "",
        "Ran five miles today. #exercise #health": "Ran five miles today.",
        "Read about #rust traits today.": "Read about #rust traits today.",
        "Announce it in #sift-ops": "Announce it in #sift-ops",
        "Logged the run #running #health": "Logged the run",
        "## Ideas #idea": "## Ideas",
        "C# and std::vector, see https://x.org/#frag and #123.":
            "C# and std::vector, see https://x.org/#frag and #123.",
        "- \n- [ ] \n1. ": "\n\n",
    }
    for written, meant in cases.items():
        assert content_text(written) == meant, written
    front = "---\ntags: [a]\n---\nMood:: 7\n"
    assert content_text(front) == "---\ntags: [a]\n---\n\n"  # front matter as written
    assert aliases_of({"aliases": ["LinAlg", "", 3, None, "LinAlg"]}) == ("LinAlg", "3")
    assert aliases_of({"alias": "Linear algebra course"}) == ("Linear algebra course",)
    assert aliases_of({"aliases": {"x": 1}}) == ()


def test_a_placeholder_item_is_no_content_and_names_nothing() -> None:
    """A real Chinese diary kept its template's "- DONE" items in each day: they became
    nine nodes named DONE, DONE (2) ... DONE (9)."""
    from vaultlink.markdown.obsidian import content_text
    from vaultlink.prose.subject_names import node_name_flaw
    text = "## 跬步\n\n- DONE\n- TODO\n- [ ] TODO\n- ...\n- DONE: shipped the CLI\n"
    assert [ln for ln in content_text(text).split("\n") if ln.strip()] == [
        "## 跬步", "- DONE: shipped the CLI"]
    assert node_name_flaw("DONE") == "generic" and node_name_flaw("TODO") == "generic"


def test_a_templater_scripts_variable_is_the_frame_whatever_it_holds() -> None:
    """A Chinese diary's template fetches a quote of the day by script
    (``> <% 一言 %> —— 《<% 来源 %>》``): four days holding only the template and that
    quote were cited by nodes named after the quote. A prompt's answer stays the owner's."""
    from vaultlink.pipeline.extract.template import DayTemplate, template_of
    exact, patterns = template_of("<%*\nlet 一言 = ''\n-%>\n> <% 一言 %> —— 《<% 来源 %>》\n"
                                  "Mood: <% tp.system.prompt('Mood') %>\n")
    frame = DayTemplate("daily", exact, patterns)
    assert frame.is_frame("> 如此生活 30 年，直到大厦崩塌。 —— 《杀死那个石家庄人》", "2025-03-13")
    assert not frame.is_frame("Mood: tired after the long review meeting", "2025-03-13")
    # a journal's "Random Note Review": three notes its script picked, one a line (the
    # 1.5B read "- [ ] [[Alfred]]" as "I have a task assigned to Alfred")
    exact, patterns = template_of("## Random Note Review\n\n- [ ] [[<% randomNote.basename %>]]\n"
                                  "Title: <% tp.file.title %>\n")
    frame = DayTemplate("daily", exact, patterns)
    assert frame.is_frame("- [ ] [[Alfred]]", "2022-12-11")
    assert not frame.is_frame("Title: my own title for the day", "2022-12-11")


def test_a_quote_of_the_day_lazily_inside_the_callout_is_the_frame() -> None:
    """Older days of a Chinese diary keep the fetched quote on the line under
    ``> [!quote] 一言`` without a ``>``: Obsidian shows it inside the callout (lazy
    continuation). Read as the owner's, the quotes (米津玄师, 毛泽东 ...) made nodes
    named 茅檐低小, 纵星河万里. The same words after a blank line are the owner's."""
    from vaultlink.pipeline.extract.template import DayTemplate, lazy_quote, template_of
    exact, patterns = template_of("> [!quote] 一言\n> <% 一言 %> —— 《<% 来源 %>》 · <% 作者 %>\n")
    frame = DayTemplate("daily", exact, patterns)
    text = ("> [!quote] 一言\n 若是你所期望的，那定会得到强烈的回应。 —— 《M 八七》 · 米津玄师\n\n"
            " 我抄下来的一句话 —— 《读书笔记》 · 我\n")
    lines = frame.frame_text("daily/2025-02-08.md", text).split("\n")
    assert lines[:2] == ["", ""]
    assert lines[3] == " 我抄下来的一句话 —— 《读书笔记》 · 我"
    assert lazy_quote("> [!quote] 一言", " 若是你所期望的")
    assert not lazy_quote("> [!quote] 一言", "- [x] 部署本地大模型")
    assert not lazy_quote("", " 若是你所期望的")


class Answering:
    """A chat model that answers the units it was given, as a small model did."""

    def __init__(self, units: list[dict[str, str]]) -> None:
        self.units = units

    def chat(self, messages: list[dict[str, Any]], tools: Any = None, schema: Any = None
             ) -> ChatReply:
        return ChatReply(json.dumps({"units": self.units}))


def test_a_model_unit_too_short_to_say_anything_is_no_node() -> None:
    """The 0.5B made nodes "Discuss" ("Discuss."), "Go home" ("Go home.") of a day
    planner's lines; the offline extractor passes such a line over as too short."""
    text = "## Plan\n\n- 12:00 Discuss\n- 18:00 Go home\n- Review the SE-PIM paper with Ana\n"
    note = SourceNote("daily/2022-06-20.md", "2022-06-20", [("2022-06-20 > Plan", text, True)],
                      text)
    model = Answering([{"name": "discuss", "bucket": "personal", "summary": "Discuss."},
                       {"name": "go-home", "bucket": "personal", "summary": "- Go home."},
                       {"name": "se-pim-review", "bucket": "personal",
                        "summary": "Review the SE-PIM paper with Ana."}])
    units = ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
    assert [u.summary for u in units] == ["Review the SE-PIM paper with Ana."]


def test_the_frames_heading_at_another_level_or_behind_another_icon_is_the_frame() -> None:
    """A vault's older days kept "## todo/daily" where its template now says "###
    todo/daily" (a node was named "Todo/daily"); a diary's template changed "##
    🦶跬步（...）" to "##:LiFootprints: 跬步（...）" over the years."""
    frame = DayTemplate(lines=frozenset({"### todo/daily", "## 🦶跬步（今日要做什么？）"}))
    assert frame.is_frame("## todo/daily", "2022-12-11")
    assert frame.is_frame("##:LiFootprints: 跬步（今日要做什么？）", "2025-02-21")
    assert frame.is_frame("# 跬步（今日要做什么？）", "2025-02-21")
    assert not frame.is_frame("## todo/daily notes on the garden", "2022-12-11")
    assert not frame.is_frame("- todo/daily", "2022-12-11")


def test_a_section_of_nothing_but_links_is_not_sent_to_the_model() -> None:
    """A page listing its project's notes ("- [[Alfred]]", "- [[Paste URL into
    Selection]]") was sent to the 0.5B, which wrote what it imagined each note is:
    "[[Alfred]] is a popular plugin for automating tasks"."""
    links = "## Tests\n\n- [[Alfred]]\n- [[Paste URL into Selection]]\n- [GitHub](https://x.org)\n"
    said = "## Notes\n\nAlfred runs a workflow when I type sc in its bar.\n"
    note = SourceNote("resource/_tests.md", "_tests", [("_tests > Tests", links, True),
                                                       ("_tests > Notes", said, True)],
                      links + said)
    asked = asked_of(note)
    assert len(asked) == 1 and "Alfred runs a workflow" in asked[0]
    assert "Paste URL" not in asked[0]


def test_a_days_list_of_tasks_is_read_by_the_rules_not_the_model() -> None:
    """The 0.5B made a few words of each task of kha-dinh's day planner ("- [x] 12:30
    Read Shred"), or nothing: 7 of 10 day paragraphs landed in no node. The offline
    rules keep a day's plan whole; errands stay passed over, with why."""
    plan = ("## Day Planner\n- [x] 11:40 Check student email\n- [x] 12:00 Check CAPACETI "
            "implementation\n- [x] 12:30 Read Shred\n- [x] 17:00 Arm memory tagging\n")
    said = "## Notes\n\nThe shredder paper argues for tagging every pointer at allocation.\n"
    note = SourceNote("daily/2022-03-15.md", "2022-03-15",
                      [("2022-03-15 > Day Planner", plan, True),
                       ("2022-03-15 > Notes", said, True)], plan + "\n" + said)
    model = Recording()
    extractor = ModelExtractor(model, 8192, OfflineExtractor())
    units = extractor.extract([note])
    assert len(model.asked) == 1 and "shredder paper" in model.asked[0]
    assert "Read Shred" not in model.asked[0]
    [kept] = units
    assert "☑ 12:30 Read Shred" in kept.summary and "☑ 17:00 Arm memory tagging" in kept.summary
    assert kept.paths == ["daily/2022-03-15.md"]
    errand = "## Saturday\n- [ ] buy milk\n"
    note = SourceNote("daily/2022-03-16.md", "2022-03-16", [("2022-03-16 > Saturday", errand,
                                                             True)], errand)
    assert extractor.extract([note]) == [] and len(model.asked) == 1
    assert [p.excerpt for p in extractor.passed] == ["- [ ] buy milk"], extractor.passed


def test_a_list_of_tasks_inside_a_section_goes_to_the_rules_and_the_rest_to_the_model(
        ) -> None:
    """bramses' template headings left one section of two errands and "- Coachella
    WHOOOOO!!": sent whole, the 0.5B repeated an emoji to its cap three times and the day
    was parked. The errands are the rules' (passed over, at their own lines); what is
    left says too little to send."""
    day = ("---\ntitle: 2022-12-12\n---\n\n- [ ] this task wont show up in [[Tasks]]!\n\n"
           "- [ ] this needs to be done on the 12th!!\n\n- Coachella WHOOOOO!!\n")
    body = day.split("---\n", 2)[2]
    note = SourceNote("daily/2022-12-12.md", "2022-12-12", [("2022-12-12", body, True)], day)
    model = Recording()
    extractor = ModelExtractor(model, 8192, OfflineExtractor())
    assert extractor.extract([note]) == [] and model.asked == []
    assert [(p.line, p.excerpt[:12]) for p in extractor.passed] == [(5, "- [ ] this t"),
                                                                    (7, "- [ ] this n")]
    plan = ("- [x] 09:00 Review the SE-PIM paper\n- [x] 11:00 Write the related work\n"
            "- [x] 15:00 Meet Ana about the benchmark\n")
    prose = "The benchmark needs a second machine before Friday's run.\n"
    both = prose + "\n" + plan
    note = SourceNote("daily/2022-06-20.md", "2022-06-20", [("2022-06-20", both, True)], both)
    [unit] = extractor.extract([note])
    assert "☑ 15:00 Meet Ana about the benchmark" in unit.summary
    assert len(model.asked) == 1 and "second machine" in model.asked[0]
    assert "SE-PIM" not in model.asked[0]


def test_an_empty_owner_heading_above_the_frames_heading_does_not_take_what_is_under_it(
        ) -> None:
    """kha-dinh's 2022-03-14 has "## Task" (empty) above the frame's "## Day Planner":
    with the frame's heading blank, the day's plan read as the "Task" section, logistics,
    and landed in no node."""
    frame = DayTemplate(lines=frozenset({"## Todo", "- [ ] ABC", "## Day Planner"}))
    day = ("## Task\n\n## Day Planner\n- [x] 16:00 offensive security report [[Report 2]]\n"
           "- [x] 17:30 test\n- [x] 18:00 check progress of DeepSC\n- [x] 19:00 Check "
           "student CTF\n")
    assert frame.frame_text("daily/2022-03-14.md", day).split("\n")[:3] == ["", "", ""]
    kept = "# Monday\n## Ideas\nA garden of notes.\n## Day Planner\n- [x] 9:00 Write\n"
    assert frame.frame_text("daily/2022-03-15.md", kept).split("\n")[:3] == [
        "# Monday", "## Ideas", "A garden of notes."]
    text = frame.owner_text("daily/2022-03-14.md", day)
    sections = [(c.breadcrumb, c.text, True) for c in chunk_note(text, "2022-03-14")]
    note = SourceNote("daily/2022-03-14.md", "2022-03-14", sections, text)
    [unit] = OfflineExtractor().extract([note])
    assert "☑ 19:00 Check student CTF" in unit.summary


def test_a_section_of_a_few_words_is_not_sent_to_the_model() -> None:
    """bramses' "# Events That Happened Today" held "- Coachella WHOOOOO!!": the 0.5B
    repeated its emoji to the answer's cap three times and the day was parked. A unit
    under five words is dropped anyway; in any script, the same count decides."""
    few = "# Events That Happened Today\n\n- Coachella WHOOOOO!!\n"
    mood = "## 心情\n\n很好\n"
    said = "## 读书\n\n今天读完了《三体》第二部，黑暗森林的设定很有意思。\n"
    note = SourceNote("daily/2022-12-12.md", "2022-12-12",
                      [("2022-12-12 > Events", few, True), ("2022-12-12 > 心情", mood, True)],
                      few + mood)
    model = Recording()
    assert ModelExtractor(model, 8192, OfflineExtractor()).extract([note]) == []
    assert model.asked == []
    note = SourceNote("daily/2022-12-13.md", "2022-12-13",
                      [("2022-12-13 > 心情", mood, True), ("2022-12-13 > 读书", said, True)],
                      mood + said)
    ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
    assert len(model.asked) == 1 and "三体" in model.asked[0] and "很好" not in model.asked[0]


def test_a_list_of_links_beside_prose_is_not_sent_to_the_model() -> None:
    """bramses' test page opens on a callout and lists its notes in a Waypoint block;
    the section said enough besides its links to be sent, and the 0.5B made a node
    "[[Alfred]] is a popular plugin for automating tasks and managing projects"."""
    page = (">[!info]\n>Sometimes plugins get updated and things break. It's ok! This folder "
            "will give you an idea if something doesn't work to spec\n\n- **External**\n"
            "\t- [[Alfred]]\n\t- [[GitHub]]\n\t- [[iOS Shortcuts]]\n- [[Private]]\n"
            "- [[Project Management]]\n")
    note = SourceNote("resource/_tests/_tests.md", "_tests", [("_tests", page, True)], page)
    asked = asked_of(note)
    assert len(asked) == 1 and "Sometimes plugins get updated" in asked[0]
    assert "Alfred" not in asked[0] and "Project Management" not in asked[0]


def test_a_paragraph_of_links_with_a_footnote_mark_is_not_sent_to_the_model() -> None:
    """bramses' Memes MOC holds "[[202212090136|Harlem Shake]][^1]" under "### Twitter",
    its footnote telling the reader how a link's alias works: the footnote made the
    section long enough to send, and the 0.5B wrote "[[202212090136]] is a popular
    restaurant in the city of Harlem"."""
    moc = ("### Twitter\n\n[[202212090136|Harlem Shake]][^1]\n\n[^1]: remember you can use "
           "\"|\" if you want to change the visual link displayed!\n")
    note = SourceNote("resource/202212122239.md", "Memes MOC",
                      [("Memes MOC > Twitter", moc, True)], moc)
    asked = asked_of(note)
    assert len(asked) == 1 and "visual link displayed" in asked[0]
    assert "Harlem Shake" not in asked[0]


# bramses' README opens so (9,655 words in all): a page of its own, not a folder's index
README_OPENING = ("# README\n\n## Introduction\n\nWelcome to **Bramses' Highly Opinionated Vault "
                  "2023**! Thanks for checking it out. What you'll see in this repo is a "
                  "**highly opinionated, unapologetic** way to use the knowledge base "
                  "application Obsidian. Note that this is not the *only* way to use "
                  "Obsidian, nor is it the *correct* way.\n\n")


def test_a_model_unit_naming_under_three_things_is_a_fragment_and_no_node() -> None:
    """The 0.5B cut "To create a new note." from "create a new note with `ctrl-n`" and
    "Turns out not so much actually." from a struck-through scratchpad line: five and
    six words, yet two content words each, nothing a node can say. A short fact that
    names three things stays."""
    text = ("Copy the text, then create a new note with ctrl-n.\n\n"
            "- ~~turns out not so much actually~~\n\nAna moved to Madrid in May.\n")
    note = SourceNote("resource/README.md", "README", [("README", text, True)],
                      README_OPENING + text)
    model = Answering([{"name": "create-note", "bucket": "wiki",
                        "summary": "To create a new note."},
                       {"name": "thought", "bucket": "wiki",
                        "summary": "Turns out not so much actually."},
                       {"name": "ana", "bucket": "personal",
                        "summary": "Ana moved to Madrid in May."}])
    units = ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
    assert [u.summary for u in units] == ["Ana moved to Madrid in May."]


def test_a_days_date_inside_a_model_units_name_is_no_part_of_its_node_name() -> None:
    """The 0.5B named bramses' units "daily-2022-12-11" and "bhov-2023-example-usage-
    2022-12-11": nodes "Daily 2022 12 11" and "BHOV 2023 example usage 2022 12 11" read
    as the owner's day note. The date goes; what is left names the node if it says a
    subject, else the summary does. A year is no day: "release-2024" stays."""
    from vaultlink.pipeline.extract.unit_names import subject_name
    said = "A simple example of how BHOV-2023 can be used to organize notes."
    assert subject_name("bhov-2023-example-usage-2022-12-11", said, set()) == \
        "bhov-2023-example-usage"
    named = subject_name("daily-2022-12-11", "Ana moved to Madrid in May.", set())
    assert named == "ana-moved-madrid"
    assert subject_name("release-2024", "The 2024 release ships the new sync.", set()) == \
        "release-2024"


def test_a_to_do_heading_written_as_a_path_is_a_to_do_section() -> None:
    """bramses' template has "## todo/daily" under "# Things I Need To Do"; its open
    task "this task was made on [[2022-12-11]] but it can be done whenever I guess!" was
    sent, and the 0.5B made a node "Daily 2022 12 11" of it. A to-do section is left
    out of what the model reads, whatever follows its first part."""
    todo = "## todo/daily\n- [ ] this task was made on [[2022-12-11]] but it can be done " \
           "whenever I guess!\n"
    said = "# Thoughts I Had Today\n\nThe garden needs a second bed for the tomatoes.\n"
    note = SourceNote("daily/2022-12-11.md", "2022-12-11",
                      [("2022-12-11 > Things I Need To Do > todo/daily", todo, True),
                       ("2022-12-11 > Thoughts I Had Today", said, True)], todo + said)
    asked = asked_of(note)
    assert len(asked) == 1 and "second bed" in asked[0]
    assert "whenever I guess" not in asked[0]


def test_a_model_name_its_unit_and_note_never_say_is_replaced_by_the_units_subject() -> None:
    """The 0.5B named the README's paragraph on quick capture "organize" (a letter of the
    section's "CODE": Capture, Organize, Distill, Express); "manage and [[organize]]
    notes" then led to a node on capture. A name the summary says stays."""
    text = "## CODE\n\nTo do quick capture on my computer, I leverage Shimmering Obsidian " \
           "and custom written iOS shortcuts.\n"
    note = SourceNote("resource/README.md", "README", [("README > CODE", text, True)],
                      README_OPENING + text)
    said = ("To do quick capture on my computer, I leverage Shimmering Obsidian and custom "
            "written iOS shortcuts.")
    for name, want in (("organize", None), ("shimmering-obsidian", "shimmering-obsidian")):
        model = Answering([{"name": name, "bucket": "procedure", "summary": said}])
        [unit] = ModelExtractor(model, 8192, OfflineExtractor()).extract([note])
        if want is None:
            assert "organize" not in unit.name and "capture" in unit.name, unit.name
        else:
            assert unit.name == want


def test_a_frames_heading_that_only_sorts_stays_so_its_lines_are_read_as_such() -> None:
    """The sample vault's days share "## Standup", "## Notes" and "## TODO", so those were
    found as the frame and left blank: a standup's "Fusion step implemented ... wiring
    tomorrow" joined the vacuum procedure, and a day's "## Notes" ran on under the
    owner's "## Weekend" and were passed over as logistics. A frame's heading that names
    nothing but sorts what is under it stays where the owner wrote under it."""
    frame = DayTemplate(lines=frozenset({"## Standup", "## Notes", "## TODO"}))
    day = ("## Standup\n\n- Fusion step implemented, unit tests green. Feature flag wiring "
           "tomorrow.\n- Elif flagged that the `documents` table is three times larger on "
           "disk than it should be.\n\n## Notes\n\nLooked into the documents table bloat "
           "with Elif: the re-embedding job left about 1.1M dead tuples in the documents "
           "table, and autovacuum kept getting cancelled.\n\n## TODO\n\n")
    owner = frame.owner_text("daily/2026-06-11.md", day).split("\n")
    assert "## Standup" in owner and "## Notes" in owner
    assert "## TODO" not in owner  # nothing under it: a bare frame's heading stays blank
    note = SourceNote("daily/2026-06-11.md", "2026-06-11", [("", "\n".join(owner), True)],
                      "\n".join(owner))
    ex = OfflineExtractor()
    [unit] = ex.extract([note])
    assert "documents table" in unit.summary and "Fusion" not in unit.summary
    assert [p.reason for p in ex.passed] == ["status update (who is doing what)"]
    weekend = "## Weekend\n\nSlow Saturday.\n\n## Notes\n\n" + \
        "Thinking about why the focus block works for me: I start the day on the hardest " \
        "problem before anything else can grab my attention.\n"
    text = frame.owner_text("daily/2026-06-13.md", weekend)
    [unit] = OfflineExtractor().extract([SourceNote("daily/2026-06-13.md", "2026-06-13",
                                                    [("", text, True)], text)])
    assert "focus block" in unit.summary


def test_a_status_heading_of_the_frame_never_takes_what_a_naming_one_held() -> None:
    """A frame's "## Standup" above its "## Exercise" (blank: it would name a node
    "Exercise" in every day) stays blank too, or the run along the canal would read as a
    standup line; a frame's "# Todo" stays blank (its tasks are the day's record), and a
    generic heading that ran on changes nothing (before, all of it was one section)."""
    frame = DayTemplate(lines=frozenset({"## Standup", "## Exercise", "# Todo"}))
    day = ("# Todo\n- [ ] Finish the CSCC24 cheat sheet\n## Standup\n\n- Me: fixing the "
           "build\n\n## Exercise\n\nRan 14 km along the canal.\n")
    owner = frame.owner_text("daily/2026-06-13.md", day).split("\n")
    assert not {"# Todo", "## Standup", "## Exercise"} & set(owner)
    frame = DayTemplate(lines=frozenset({"## Standup", "## Journal"}))
    closed = "## Standup\n\n- Me: fixing the build\n\n## Journal\n\nRan 14 km along the canal.\n"
    assert frame.owner_text("daily/2026-06-13.md", closed).split("\n")[0::4] == [
        "## Standup", "## Journal"]


def test_a_day_titled_by_its_date_in_words_is_read_by_its_sections() -> None:
    """pietraferreira's days open "# December 28, 2022" or "# 2022-07-06" then "---": the
    date was taken for the subject of one document ("2022 12 28 with Daily"), whose
    sixteen-sentence budget kept the first sections of a 396-line day and lost the rest,
    and the rule under the title opened 21 nodes as "--- A compiler is ..."."""
    from vaultlink.markdown.names import dated_name
    day = ("# July 6, 2022\n---\n## SMB Downloads\nThe Server Message Block protocol runs on "
           "port TCP/445 in Windows networks.\n\n## WebDAV uploads\nWebDAV extends HTTP so "
           "that a web server can take uploads from the target.\n")
    units = OfflineExtractor().extract([SourceNote("daily/2022-07-06.md", "2022-07-06",
                                                   [("", day, True)], day)])
    assert [u.title for u in units] == ["SMB Downloads", "WebDAV uploads"]
    assert not any("---" in u.summary or "---" in u.description for u in units)
    for title in ("December 28, 2022", "28. Dezember 2022", "8 мая 2023", "Dec 28 2022"):
        assert dated_name(title), title
    for name in ("May 2022 plan", "Mars 12 launch", "Project 3 May"):
        assert not dated_name(name), name
    from vaultlink.prose.subject_names import is_event
    assert is_event("2022 08 18") and not is_event("1984")  # a page on the novel is a page


def test_a_days_errands_under_a_lead_in_are_not_sent_to_the_model() -> None:
    """With the sample's "## Notes" read as its own section, the 0.5B was sent 2026-06-13's
    "Personal admin:" list and made nodes "31st dentist" and "Bike insurance" of it; the
    offline rules pass such a list over as logistics, and so does the model's share."""
    said = ("## Notes\n\nThinking about why the focus block works for me: I start on the "
            "hardest problem first.\n\nPersonal admin:\n\n- The dentist moved to the 31st.\n"
            "- Renew the bike insurance before July.\n")
    note = SourceNote("daily/2026-06-13.md", "2026-06-13", [("Notes", said, True)], said)
    asked = asked_of(note)
    assert len(asked) == 1 and "focus block works" in asked[0]
    assert "dentist" not in asked[0] and "Personal admin" not in asked[0]


def test_a_hundred_thousand_frame_headings_cost_one_pass() -> None:
    """The frame's headings come back in one pass from the bottom: a note of nothing but
    the frame's "## Notes", a hundred thousand times, then a line, is read whole (each
    heading looked for its section's end to the bottom: 10^10 steps)."""
    frame = DayTemplate(lines=frozenset({"## Notes", "## Exercise"}))
    day = "\n".join(["## Notes"] * 100_000 + ["Ran 14 km along the canal."])
    owner = frame.owner_text("daily/2026-06-13.md", day).split("\n")
    assert owner[-2:] == ["## Notes", "Ran 14 km along the canal."]
    assert sum(1 for ln in owner if ln) == 2  # the bare ones stay blank


def test_a_folders_index_page_is_no_subject_in_either_path() -> None:
    """oignon's site keeps an index.md in each folder ("いい感じの記事たち", "名前の通り、
    日記だね。"): five nodes "Index (感じ)", "Index (名前)" ...; pietraferreira's
    resource/_index.md, a hub of links, was a node "Morioh" of four lines "- Hub". A
    folder's index page that says little of its own says what the folder holds."""
    hub = ("---\ntitle: Morioh\n---\n# Welcome :)\n\nMain hub for all the different note "
           "categories :)\n\n## Work\n- [Hub](notes/private/work/work-hub.md)\n")
    for path, text in (("resource/10_cool/index.md", "いい感じの記事たち\n"),
                       ("resource/_index.md", hub)):
        note = SourceNote(path, "index", [("index", text, True)], text)
        offline = OfflineExtractor()
        assert offline.extract([note]) == []
        assert {p.reason for p in offline.passed} == {
            "a folder's index page: it says what the folder holds"}
        assert asked_of(note) == []
    readme = "# README\n\n" + "Welcome to my vault. I keep every project note here. " * 6
    note = SourceNote("resource/README.md", "README", [("README", readme, True)], readme)
    assert OfflineExtractor().extract([note]) and asked_of(note)  # a page of its own


GORWAST_DAY = ("---\ntitle: 2025-08-22\ntags:\n  - Diario\n  - agosto\n---\n"
               "> Para lo poco que hablamos, mucho conectamos\n\n"
               "Hoy fue un dia divertido con los amigos. Jugamos un rato y después aprendimos "
               "más francés con la aplicación, que ya va en la lección doce.\n\n"
               "> 94\n> \n> 27.2\n> \n> ⊙﹏⊙∥\n> \n> 3 :c\n")


def test_a_days_motto_and_its_closing_measures_are_no_subject() -> None:
    """Gorwast's Spanish diary opens each day with a quoted motto and closes it with his
    weight, BMI and a kaomoji: 25 nodes were a motto named by its leftover words ("Gota
    que", "Hablamo conectamo": stems, not words), and "98.4 / 29.4" ended topic nodes."""
    from tests.test_offline_extract import extract
    (unit,), ex = extract("daily/2025/08/2025-08-22.md", GORWAST_DAY)
    assert "hablamos" not in unit.summary and "27.2" not in unit.summary
    assert "francés" in unit.summary
    assert [p.reason for p in ex.passed] == ["the day's motto (a quote above the day)",
                                             "no word of three letters: numbers and signs"]
    decided = GORWAST_DAY.replace("> Para lo poco", "> Decidimos: from now on, para lo poco")
    units, _ = extract("daily/2025/08/2025-08-22.md", decided)
    assert any("Decidimos" in u.summary for u in units)  # a quoted decision is no motto


def test_a_day_of_nothing_but_its_motto_gives_no_node() -> None:
    """Gorwast's 2025-07-02 holds its motto and its measures only: the motto was a node
    "Hombre excede", its one line the whole body. A page of one quote is still read."""
    from tests.test_offline_extract import extract
    day = GORWAST_DAY.replace("Hoy fue un dia divertido con los amigos. Jugamos un rato y "
                              "después aprendimos más francés con la aplicación, que ya va "
                              "en la lección doce.\n\n", "")
    units, ex = extract("daily/2025/07/2025-07-02.md", day)
    assert units == []
    assert [p.reason for p in ex.passed] == ["the day's motto (a quote above the day)",
                                             "no word of three letters: numbers and signs"]
    page = "> El limite del hombre excede su imaginación, y su imaginación no tiene fin.\n"
    units, _ = extract("resource/Citas/Imaginación.md", page)
    assert len(units) == 1


def test_a_name_from_the_texts_words_keeps_them_whole_in_any_language() -> None:
    """"Para lo poco que hablamos, mucho conectamos" was named "Hablamo conectamo": the
    English stemmer's "-s" cut from Spanish verbs, in a name."""
    from vaultlink.prose.sentences import content_words, plain_words
    said = "Para lo poco que hablamos, mucho conectamos"
    assert "hablamos" in plain_words(said) and "conectamos" in plain_words(said)
    assert "hablamo" in content_words(said)  # stems, for matching only


def test_a_name_from_the_texts_words_keeps_their_capitals() -> None:
    """pietraferreira's meeting notes list who came ("- Sammy", "- Adriana"); the node was
    "Attendants sammy adriana": the words were lower-cased for matching and kept so."""
    from vaultlink.prose.blocks import parse_blocks
    from vaultlink.prose.subjects import Subject, _unnamed
    (subject,) = _unnamed([Subject("", parse_blocks("Attendants:\n\n- Sammy\n- Adriana\n"
                                                    "- Zeeshan\n"))])
    assert subject.name == "Attendants Sammy Adriana"
    (subject,) = _unnamed([Subject("", parse_blocks("- Zoë\n- Ángel\n- Müller\n"))])
    assert subject.name == "Zoë Ángel Müller"


def test_a_kaomoji_makes_no_text_japanese() -> None:
    """Fifteen of Gorwast's nodes had Japanese Sources lines ("のメモ]]からの引用") and six
    Japanese descriptions: a kaomoji's katakana ("ヽ(・∀・)ﾉ") read as Japanese text."""
    from vaultlink.markdown.language import language_of
    assert language_of("Hoy fue un día tranquilo, jugamos roblox con los amigos ヽ(・∀・)ﾉ") != "ja"
    # ... nor its hiragana iteration mark (Gorwast's "Esta canción" was described
    # "Esta canciónについてのメモ。")
    assert language_of("Esta canción es buenísima, es toda una vibra （；´д｀）ゞ") != "ja"
    assert language_of("ゝゞの使い方") == "ja"
    assert language_of("ObsidianでWindows IMEが機能しない時の対処法") == "ja"
    assert language_of("Quartzの哲学") == "ja"


def test_no_link_is_woven_on_the_function_words_of_the_texts_language() -> None:
    """Gorwast's book notes linked "de la" in "Nacidos de la Bruma" to a node "El pozo de
    la ascensión libro", and "Hoy fue" (today was) to a node named so, ten times."""
    from vaultlink.prose.writing import weave
    text = ["Mistborn (Nacidos de la Bruma) es uno de los mejores libros de Brandon "
            "Sanderson. Hoy fue un día largo, pero lo terminé."]
    nodes = [("digest/wiki/el-pozo-de-la-ascension-libro.md", "El pozo de la ascensión libro"),
             ("digest/wiki/hoy-fue.md", "Hoy fue")]
    blocks, linked = weave(text, nodes, set())
    assert linked == [] and blocks == text


def test_a_short_text_is_told_by_its_function_words_when_the_model_is_unsure() -> None:
    """18 of Gorwast's 117 nodes said "taken from" and "Notes on": a diary line is too
    short for py3langid to be sure of Spanish (0.46-0.74), and unsure meant English. Its
    function words ("fue", "un", "con", "los") bear the verdict out; English ones keep
    an English line English."""
    from vaultlink.markdown.language import language_of
    assert language_of("Frankie Ruiz fue un cantante de salsa. (◕‿◕)") == "es"
    assert language_of("Je suis allé au marché avec ma soeur ce matin.") == "fr"
    assert language_of("Met Anna at the park, we talked about the move.") == "en"
    assert language_of("Ah ha ha, yeah, JUST DOING IT!") == "en"


def test_a_block_of_numbers_and_signs_says_nothing_but_a_short_chinese_line_does() -> None:
    from vaultlink.prose.blocks import parse_blocks
    from vaultlink.prose.passing import NO_WORDS, passed_reason
    for said, none in (("> 93.55\n> 27.6\n> 3 :cc\n", True), ("ヽ(・∀・)ﾉ 12\n", True),
                       ("很好\n", False), ("Swam 2 km.\n", False)):
        assert (passed_reason(parse_blocks(said)[0], True) == NO_WORDS) is none, said
