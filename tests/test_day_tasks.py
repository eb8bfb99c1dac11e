"""A day's task list, as its owner keeps it: one that says something is kept with its
state, named by what it says, never by a note it links (issue 37's day paragraphs).

Shapes from real vaults: a student's Todo lists linking course notes
(digitalyoshixi/zettelkasten), a researcher's day planner with times
(kha-dinh/my-obsidian), a Chinese diary's lists of links to its projects (ped-Yc/dg.pedyc).
"""

from __future__ import annotations

from pathlib import Path

from tests.test_offline_extract import extract
from vaultlink.prose.blocks import parse_blocks
from vaultlink.prose.node_names import node_names
from vaultlink.prose.passing import OTHER_TASK
from vaultlink.prose.units import Unit
from vaultlink.prose.update import plan_update

SAMPLE = Path(__file__).resolve().parents[1] / "sample_vault"
YOSHIXI = ("- [x] Finish [[Principles of Programming Languages|CSCC24]] cheat sheet ✅ 2026-03-17\n"
           "- [ ] Work on a few [[Principles of Programming Languages|CSCC24]] proofs\n"
           "- [x] Review the moosavi paper on regulatory markets ✅ 2026-03-17\n"
           "- [ ] See if you can order the birth certificate for CSE\n")


def test_a_days_task_list_that_says_something_is_kept_with_its_state() -> None:
    """A student's Todo lists (under the template's "# Todo", which is the frame) were
    all passed over as "open tasks": 47 of 65 day paragraphs. The list is the day's
    record: each item keeps its box, as ☑ / ☐ (a copied "- [ ]" would show in the
    owner's task queries)."""
    (unit,), ex = extract("daily/2026-03-17.md", YOSHIXI)
    assert unit.summary.split("\n") == [
        "- ☑ Finish CSCC24 cheat sheet ✅ 2026-03-17", "- ☐ Work on a few CSCC24 proofs",
        "- ☑ Review the moosavi paper on regulatory markets ✅ 2026-03-17",
        "- ☐ See if you can order the birth certificate for CSE"]
    assert ex.passed == []
    assert unit.bucket == "wiki"  # no steps to follow


def test_errands_and_a_pages_tasks_are_still_passed_over() -> None:
    """An errand or two ("call the bank", under three items and twelve words, boxes and
    dates not counted) is no record of the day, and a task list in a page (not a day)
    is the page's to-do, as before."""
    _, ex = extract("daily/2026-07-01.md", "## Notes\n\n- [ ] call the bank today\n"
                    "- [x] post the parcel to Oslo ✅ 2026-07-01 ⏫\n")
    assert [p.reason for p in ex.passed] == ["open tasks (checkboxes)"]  # 9 words
    units, ex = extract("resource/Garden.md", "# Garden\n\nThe tomatoes need staking before "
                        "the first truss sets fruit.\n\n" + YOSHIXI)
    assert "☐" not in units[0].summary and ex.passed[0].reason == "open tasks (checkboxes)"


def test_the_owners_own_todo_section_is_still_logistics() -> None:
    """A work journal's "## TODO" under its decisions: its tasks share words with the
    standup and the decision, and kept they joined both into one subject (the sample
    vault's correction of the rebuild procedure was merged with the standup). The
    template's "Todo" heading is the frame, so its tasks are read as the day's."""
    text = ("## Decisions\n\nThe v2.3 indexer swaps the new index in; the service keeps "
            "running.\n\n## TODO\n\n- [ ] Upgrade the production indexer to v2.3 next week\n"
            "- [ ] Remove the stop/start steps from the ops wiki\n")
    (unit,), ex = extract("daily/2026-06-19.md", text)
    assert "☐" not in unit.summary
    assert [p.reason for p in ex.passed] == ["logistics (the 'TODO' section)"]


def test_a_day_planners_times_do_not_make_its_tasks_a_log() -> None:
    """A day planner's tasks sit in time slots ("- [x] 12:30 Write Capaceti"): still
    tasks, named by what they say, never by the time ("16 00 offensive")."""
    text = ("- [x] 16:00 offensive security report [[Report 2]]\n"
            "- [x] 17:30 test\n- [x] 18:00 check progress of DeepSC\n"
            "- [x] 19:00 Check student CTF\n")
    (unit,), ex = extract("daily/2022-03-14.md", text)
    assert ex.passed == [] and "☑ 18:00 check progress of DeepSC" in unit.summary
    assert unit.title == "Offensive security report"


def test_a_days_tasks_are_no_procedure() -> None:
    """"Check due dates ..." twice and "Do work on ...": led by verbs, as tasks are, yet
    no steps to follow (it was filed as a procedure, "Steps for Check due dates")."""
    text = ("- [x] Finish the CSCC24 assignment\n"
            "- [x] Check due dates for the CSCB63 assignment ✅ 2026-02-13\n"
            "- [x] Check due dates for the CSCB09 assignment ✅ 2026-02-13\n"
            "- [ ] Do work on the CTFs seminar\n")
    (unit,), _ = extract("daily/2026-02-13.md", text)
    assert unit.bucket == "wiki"


def test_a_heading_after_a_task_list_is_no_title_of_the_day() -> None:
    """A day of "Todo" (the frame), then "# Hour Log": the heading came after the list,
    yet named the day as its title, and the list became a node "Hour Log"."""
    text = YOSHIXI + "# Hour Log\n- 12:28: start deep reading\n" \
        "- 13:18: email some degree stuff\n- 14:04: make food\n"
    (unit,), ex = extract("daily/2026-04-12.md", text)
    assert unit.title != "Hour Log" and [p.reason for p in ex.passed] == [
        "a log of times of day"]


def test_a_list_named_after_a_note_it_links_is_named_by_its_line() -> None:
    """"Look into [[American Fuzzy Lop]], [[z3]], [[LEAN]]" was named "American Fuzzy
    Lop", and the AFL page then merged into the day's list. A list of links alone says
    nothing of its own: the notes it links are the subjects."""
    text = ("- [ ] Curate what you need from https://example.org/program-analysis-reading-list\n"
            "- [ ] Look into [[American Fuzzy Lop]]\n- [ ] Look into [[z3]]\n"
            "- [ ] Look into [[LEAN]]\n- [ ] Look into [[F*]]\n")
    (unit,), _ = extract("daily/2026-06-09.md", text)
    assert unit.title == "Look into American Fuzzy Lop"
    text = ("- [x] [[2025Q1-构建一个cli工具]] ✅ 2025-02-24\n- [ ] [[2025Q1-学习Github Actions]]\n"
            "- [ ] [[2025Q1-完成我的知识管理方案]] ⏫\n- [ ] [[2025Q1-清理待办列表]]⏫\n")
    units, ex = extract("daily/2025-02-24.md", text)
    assert units == [] and [p.reason for p in ex.passed] == [
        "a link to another note, which is the subject"]


def test_a_name_from_words_never_from_an_address_or_character_pairs() -> None:
    """A Chinese bookmark line with its address was named "是否 否应 应该" (pairs of
    characters: the address made the text look Latin)."""
    text = ("- [是否应该学习WASM及优先级建议](https://chat.deepseek.com/a/chat/s/47b405a6-9641)\n"
            "- 先看一下周报，再决定\n")
    (unit,), _ = extract("daily/2025-02-27.md", text)
    assert unit.title == "是否应该学习"


def test_another_days_tasks_are_a_list_of_their_own() -> None:
    """Two days' tasks run into one list could not be told apart, nor which day's Sources
    line backs which items."""
    body = "- ☑ Finish the CSCC24 assignment ✅ 2026-03-20\n- ☐ Work on the CSCB63 assignment\n"
    plan = plan_update(body, "- ☑ Finish CSCC24 assignment five and six ✅ 2026-03-29",
                       "daily/2026-03-28.md", "CSCC24 assignment", False)
    assert plan is not None
    lines = plan.body.split("\n")
    assert lines[2] == "" and lines[3].startswith("- ☑ Finish CSCC24 assignment five")


def test_a_task_box_is_read_as_a_box_only_where_it_is_one() -> None:
    """A reference list ("- [1] Smith 2020") is no task, its "[1]" kept as written; "[x]"
    in a mixed list is a done item, not a stray "x"."""
    (block,) = parse_blocks("- [1] Smith, 2020, on ridges\n- [x] read it again\n- notes\n")
    assert block.items == ["- [1] Smith, 2020, on ridges", "- ☑ read it again", "- notes"]


PEDYC_DAY = ('---\ntitle: "2025-02-21"\ntags: [diary]\n---\n\n'
             "## ☁行云（闪念，突然想到什么？）\n\n"
             "- [ ] 在 [[知识管理概述|个人知识管理]] 中添加**可视化的知识管理方式**\n"
             "- [x] 完善 [[数字花园概述]]：以想法为核心的方法论和相关工作流 ✅ 2025-02-21\n\n"
             "##:LiFootprints: 跬步（今日要做什么？）\n\n"
             "## ☀日新（你比昨天更好吗？）\n\n"
             "##:LiSunMoon: 温故（每日总结）\n")


def test_a_heading_led_by_an_icon_is_a_heading() -> None:
    """"##:LiFootprints: 跬步" (an icon plugin's shortcode, no space) was read as a
    paragraph: a diary's empty template headings became a node's lines and its
    description ("关于2025 02 21的笔记: ☀日新")."""
    heads = [b.info for b in parse_blocks(PEDYC_DAY) if b.kind == "heading"]
    assert heads == ["☁行云（闪念，突然想到什么？）", "跬步（今日要做什么？）",
                     "☀日新（你比昨天更好吗？）", "温故（每日总结）"]
    assert [b.kind for b in parse_blocks("#tag and more\n")] == ["prose"]
    (unit,), _ = extract("daily/2025-02-21.md", PEDYC_DAY)
    assert "#" not in unit.summary and "☀" not in unit.description


def test_a_chinese_days_plan_is_named_by_its_first_task() -> None:
    """The two tasks above were named "方法论" (a phrase of the second), and six pages'
    "对现有方法论的冲击" (the impact on existing methodology) were linked to them. A
    day's plan is named by its first task, as an English one is."""
    (unit,), _ = extract("daily/2025-02-21.md", PEDYC_DAY)
    assert node_names(unit)[0][0] == "在 个人知识管理 中添加可视化的知识管理方式"
    # as integrate hands it over: the owner's links carried as the paths they resolve to
    carried = "[[resource/PKM/知识管理概述.md|个人知识管理]]"
    unit.summary = unit.summary.replace("个人知识管理", carried, 1)
    assert node_names(unit)[0][0] == "在 个人知识管理 中添加可视化的知识管理方式"


def test_a_tasks_priority_is_no_part_of_its_name() -> None:
    """pedyc's 2025-02-23 plan was named "使用 PARA 笔记组织法重构数字花园 ⏫": the Tasks
    plugin's mark of a high priority says how urgent the task is, not what it is."""
    day = PEDYC_DAY.replace("中添加**可视化的知识管理方式**", "中添加**可视化的知识管理方式** ⏫")
    (unit,), _ = extract("daily/2025-02-21.md", day)
    assert "⏫" in unit.summary  # the owner's words are kept as written
    assert node_names(unit)[0][0] == "在 个人知识管理 中添加可视化的知识管理方式"


def test_a_list_mark_is_no_word() -> None:
    """"- 完善 [[我的工作流]]" (improve [[my workflow]]) counted its "-" as a word and
    became a node "完善" (improve) of one line."""
    units, ex = extract("daily/2025-02-10.md", "## 行云\n\n- 完善 [[我的工作流]]\n")
    assert units == [] and [p.reason for p in ex.passed] == [
        "too short to say anything on its own"]


def test_a_carried_links_path_never_qualifies_a_name() -> None:
    """A second "Finish CSCC24 assignment" was qualified "(Programming Languages.md)":
    the path of the owner's link the unit carries, read as its subject."""
    unit = Unit("finish-cscc24-assignment", "wiki", "- ☑ Finish [[resource/Programming "
                "Languages.md|CSCC24]] assignment five ✅ 2026-03-29", ["daily/2026-03-28.md"],
                title="Finish CSCC24 assignment")
    assert [n for n, _ in node_names(unit)[:2]] == [
        "Finish CSCC24 assignment", "Finish CSCC24 assignment five"]


def test_a_task_in_lower_case_is_kept_and_a_link_to_a_day_says_its_date() -> None:
    """"- [ ] this task was made on [[2022-12-11]] but it can be done whenever I guess!"
    was passed over ("no sentence to open a node with": its lower-case "this"), and the
    owner's link to a day was quoted as "the note of 2022-12-11"."""
    (unit,), ex = extract("daily/2022-12-11.md", "- [ ] this task was made on [[2022-12-11]] "
                          "but it can be done whenever I guess!\n")
    assert unit.summary == ("- ☐ this task was made on 2022-12-11 but it can be done "
                            "whenever I guess!") and ex.passed == []


def test_a_chinese_days_plan_under_a_heading_is_named_by_its_first_task() -> None:
    """pedyc's 2025-02-23, read by its sections since its date title names nothing, named
    its plan "组织法重构" (a phrase inside the first task) instead of the task."""
    day = ('---\ntitle: "2025-02-23"\n---\n\n## 跬步\n\n'
           "- [x] 使用 PARA 笔记组织法重构数字花园 ⏫ ✅ 2025-02-23\n"
           "- [ ] 2025Q1 模拟面试复盘01\n- [ ] [[2025Q1-学习Github Actions]]\n")
    (unit,), _ = extract("daily/2025-02-23.md", day)
    assert node_names(unit)[0][0].startswith("使用 PARA 笔记组织法重构数字花园")


def test_a_task_of_another_subject_stays_out_of_the_list_that_joins_a_subject() -> None:
    """The sample vault's 2026-06-21: below the golden query set's definition (the
    template's "TODO" heading is the frame, taken out here as the template reader does),
    "Hybrid search to 10% of production on Monday" went into the golden query set's node
    with its two tasks, and the node linked Hybrid search for it. A task joins with its
    list only when it names the subject or shares its words (numbers aside); the other
    is passed over."""
    text = (SAMPLE / "daily" / "2026-06-21.md").read_text("utf-8").replace("## TODO\n", "\n")
    units, ex = extract("daily/2026-06-21.md", text)
    unit = next(u for u in units if u.title == "Golden query set")
    assert unit.summary.split("\n")[-2:] == [
        "- ☐ Label the remaining 70 golden queries with Priya",
        "- ☐ Wire the golden query check into CI"]
    assert "Hybrid search" not in unit.summary
    assert (23, OTHER_TASK) in [(p.line, p.reason) for p in ex.passed]



def test_a_list_is_described_by_its_first_items_not_as_notes_on_its_name() -> None:
    """A day planner's list was described "Notes on Buy coffee." (30% of the personal
    vaults' nodes said "Notes on ..."): a unit that is nothing but a list is described by
    its first items as they read, without boxes, times, date stamps or link brackets, in
    the list's own script; a list beside prose keeps the other rules."""
    text = ("- [x] 11:30 Make slides\n- [x] 12:30 Buy coffee\n- [x] 13:00 Meeting with "
            "[[Capaceti]]\n- [ ] 14:30 Capaceti ✅ 2022-03-14\n- [x] 19:00 Take bike\n")
    (unit,), _ = extract("daily/2022-03-14.md", text)
    assert unit.description == "Make slides, Buy coffee, Meeting with Capaceti, Capaceti, …"
    (unit,), _ = extract("daily/2025-03-06.md", "- [ ] 买菜和做饭\n- [ ] 给妈妈打电话\n"
                         "- [x] 写完项目周报\n")
    assert unit.description == "买菜和做饭、给妈妈打电话、写完项目周报。"
    # a link says its label, an address nothing (a description holds nothing remote)
    (unit,), _ = extract("daily/2023-01-09.md", "- [ ] [Redis 容量预估工具](http://www."
                         "redis.cn/redis_memory/)\n- [ ] Build a C2 (https://example.org/c2)"
                         "\n- [ ] What was I supposed to do with co-op?\n")
    assert unit.description == ("Redis 容量预估工具, Build a C2, What was I supposed to do "
                                "with co-op?")
    units, _ = extract("resource/CPU Caches.md", "# CPU Caches\n\nCaches keep recent lines "
                       "close to the core.\n\n- Modern CPUs use set associative caches\n"
                       "- Lines are 64 bytes\n")
    assert units[0].description == "Caches keep recent lines close to the core."
