"""What the offline integrator writes, rule by rule (issue #16, rules 4 to 7): updates that
edit instead of append, a changed value replaced and kept once as "Earlier", links where
the text names a node, Sources lines that say what they back, topics named by subject.

Pure functions on small texts; the CORRECT case also goes through the real guard.
"""

from __future__ import annotations

import pytest

from vaultlink.pipeline.integrate.guard import Guard
from vaultlink.pipeline.topics import keywords
from vaultlink.prose.units import Receipt, Unit
from vaultlink.prose.update import Linkable, plan_update, value_changes
from vaultlink.prose.writing import also_covered, source_sentence, weave

NODE = """Hybrid search runs BM25 and a vector index and fuses them with reciprocal rank fusion.

- Fusion: RRF with k = 60.
- Candidate depth: the top 100 from BM25 and the top 100 from the vector index are fused.
- Latency: HNSW at `ef_search=40` costs about 35 ms and BM25 about 10 ms.

## Rollout

It ships behind the `hybrid_search` feature flag.

## Sources

- The design was decided in [[daily/2026-06-10.md]].
"""
SOURCE = "daily/2026-06-20.md"


def test_refine_puts_each_fact_in_its_section_cited_there_never_added_from() -> None:
    summary = ("The feature flag goes to 10% of production traffic on Monday.\n"
               "- Exact ticket IDs bypass fusion and pin to the top of the results.")
    plan = plan_update(NODE, summary, SOURCE, "Hybrid search", cites_source=False)
    assert plan is not None and plan.action == "REFINE"
    body = plan.body
    assert "Added from" not in body and body.count("## Sources") == 1
    rollout = body.split("## Rollout")[1].split("## Sources")[0]
    assert "10% of production traffic on Monday. ([[daily/2026-06-20.md|the note of " \
           "2026-06-20]])" in rollout  # next to the flag, cited there
    lead = body.split("## Rollout")[0]
    # a list item joins the list it belongs to, right after its last item
    assert "about 10 ms.\n- Exact ticket IDs bypass fusion" in lead
    assert body.rstrip().endswith("2026-06-20]].")  # the Sources line comes last
    assert NODE.split("## Sources")[1].strip() in body  # every old source kept


def test_sections_a_page_adds_are_cited_once_by_a_sources_line_that_names_them() -> None:
    """The demo's reranker node ended five sections from one page with the same link."""
    page = "resource/reranking-notes.md"
    summary = ("A bi-encoder encodes query and document apart, so hybrid search can "
               "precompute the document vectors.\n"
               "## Cost\n\n- Every query and candidate pair is a full forward pass.\n"
               "## Pitfalls\n\n- Scores are not calibrated across queries.")
    plan = plan_update(NODE, summary, page, "Hybrid search", cites_source=False)
    assert plan is not None and plan.action == "REFINE"
    cost = plan.body.split("## Cost")[1].split("## Sources")[0]
    assert "full forward pass." in cost and "[[" not in cost  # no link per section
    lead = plan.body.split("## Rollout")[0]
    assert "precompute the document vectors. ([[resource/reranking-notes.md|" in lead
    line = plan.body.split("## Sources")[1].strip().splitlines()[-1]
    assert line.startswith("- More on ") and "the sections “Cost” and “Pitfalls”: taken " \
        "from [[resource/reranking-notes.md|" in line
    assert plan.body.count("resource/reranking-notes.md") == 2  # the lead's line, Sources


def test_a_changed_value_is_replaced_and_kept_once_as_earlier() -> None:
    summary = ("We agreed to take the top 200 from BM25 and the top 200 from the vector "
               "index before fusion.")
    plan = plan_update(NODE, summary, SOURCE, "Hybrid search", cites_source=False)
    assert plan is not None and plan.action == "CORRECT"
    line = next(ln for ln in plan.body.split("\n") if ln.startswith("- Candidate depth"))
    assert line.startswith("- Candidate depth: the top 200 from BM25 and the top 200 from the "
                           "vector index are fused. Earlier: Candidate depth: the top 100")
    assert "Corrected in [[daily/2026-06-20.md|" in line and plan.body.count("Earlier:") == 1
    assert "- Candidate depth is now 200 (was 100): corrected in [[daily/2026-06-20.md|" \
        in plan.body
    # the guard accepts it as a CORRECT: the old claim is still there, marked, with its source
    unit = Unit("hybrid-search", "wiki", summary, [SOURCE])
    path = "digest/wiki/hybrid-search.md"
    before = f"---\nname: Hybrid search\ndescription: d\n---\n{NODE}"
    after = f"---\nname: Hybrid search\ndescription: d\n---\n{plan.body}"
    guard = Guard(unit, frozenset({path}), lambda: [path, "daily/2026-06-10.md", SOURCE])
    guard.check_write(path, before, after)
    guard.accept_write(path, created=False)
    assert guard.check_result(Receipt("CORRECT", path), before, after).action == "CORRECT"
    # read again, the same note changes nothing: no second "Earlier"
    assert plan_update(plan.body, summary, SOURCE, "Hybrid search", cites_source=True) is None


def test_another_number_in_other_words_is_no_correction() -> None:
    """"adds about 8 ms" is not "costs about 35 ms": the words around the numbers differ."""
    extra = ("Fetching 200 instead of 100 candidates from the vector index adds about 8 ms at "
             "the same ef_search.")
    latency = next(ln for ln in NODE.split("\n") if ln.startswith("- Latency"))
    assert value_changes([extra], latency) == []


def test_a_repeat_only_adds_a_sources_line_saying_what_it_confirms() -> None:
    summary = "- Fusion: RRF with k = 60.\n- It ships behind the `hybrid_search` feature flag."
    plan = plan_update(NODE, summary, "resource/again.md", "Hybrid search", cites_source=False)
    assert plan is not None and plan.action == "CORROBORATE"
    added = [ln for ln in plan.body.split("\n") if ln not in NODE.split("\n")]
    assert added == ["- Hybrid search: confirmed again by [[resource/again.md|again]]."]


def test_added_text_links_the_nodes_it_names() -> None:
    summary = "Reciprocal rank fusion needs no score calibration at all."
    plan = plan_update(NODE.replace("reciprocal rank fusion", "RRF"), summary, SOURCE,
                       "Hybrid search", cites_source=False,
                       linkable=Linkable((("digest/wiki/rrf.md", "Reciprocal rank fusion"),)))
    assert plan is not None
    assert "[[digest/wiki/rrf.md|Reciprocal rank fusion]] needs no score calibration" in plan.body


def test_a_mention_becomes_the_link_longest_name_first_code_left_alone() -> None:
    blocks = ["Set `environment configuration` first. The environment configuration and "
              "the environments it makes are described below.", "## Environments"]
    out, linked = weave(blocks, [("digest/wiki/env.md", "Environments"),
                                 ("digest/wiki/env-config.md", "Environment configuration")],
                        set())
    assert out[0] == ("Set `environment configuration` first. The [[digest/wiki/env-config.md|"
                      "environment configuration]] and the [[digest/wiki/env.md|environments]]"
                      " it makes are described below.")
    assert out[1] == "## Environments" and linked == ["digest/wiki/env-config.md",
                                                       "digest/wiki/env.md"]


def test_a_name_without_its_qualifier_counts_only_when_the_text_keeps_using_it() -> None:
    node = [("digest/wiki/fastify-plugins.md", "Fastify plugins")]
    once = ["Decorators can be shared with plugins."]
    often = ["Plugins wrap routes. Register plugins early; plugins load in order."]
    assert weave(once, node, {"fastify"})[1] == []
    assert weave(often, node, {"fastify"})[1] == ["digest/wiki/fastify-plugins.md"]
    assert weave(often, node, set())[1] == []  # not the text's own qualifier


def test_nodes_the_note_names_elsewhere_get_one_sentence_worded_from_the_mention() -> None:
    page = "Options support context formatting. See also the build configuration page."
    sentence = also_covered(page, [("digest/wiki/ctx.md", "Context formatting"),
                                   ("digest/wiki/build.md", "Build configuration"),
                                   ("digest/wiki/other.md", "Lockfiles")])
    assert sentence == ("Context formatting and build configuration are covered in "
                        "[[digest/wiki/ctx.md|Context formatting]] and "
                        "[[digest/wiki/build.md|Build configuration]].")
    assert also_covered(page, [("digest/wiki/other.md", "Lockfiles")]) == ""


def test_a_sources_line_opens_with_what_its_source_backs() -> None:
    assert source_sentence("CREATE", "Retry limit of 3", ["daily/2026-06-10.md"]) == \
        "- Retry limit of 3: taken from [[daily/2026-06-10.md|the note of 2026-06-10]]."
    assert source_sentence("CORROBORATE", "Golden query set", ["daily/2026-06-21/sync.md"]) \
        == "- Golden query set: confirmed again by [[daily/2026-06-21/sync.md|the " \
           "2026-06-21 sync]]."


def test_topic_keywords_are_content_words_two_to_five() -> None:
    words = keywords("The top 100 from BM25 and the top 200 from the vector index, every "
                     "time: vector recall 0.91 and vector latency 35 ms.", first="Hybrid search")
    assert words[:2] == ["hybrid", "search"] and 2 <= len(words) <= 5
    assert not {"the", "top", "every", "100", "200", "0.91"} & set(words)
    assert "vector" in words


def test_an_older_note_read_later_never_puts_an_old_value_back() -> None:
    """A replay or a backlog reads the 10 June note after the 20 June correction: the node
    keeps 200, and the 100 stays where it is, in its "Earlier" sentence."""
    corrected = plan_update(NODE, "We agreed to take the top 200 from BM25 and the top 200 "
                            "from the vector index.", SOURCE, "Hybrid search", False)
    assert corrected is not None
    older = plan_update(corrected.body, "Candidate depth: the top 100 from BM25 and the top "
                        "100 from the vector index, fuse them.", "daily/2026-06-10/review.md",
                        "Hybrid search", cites_source=False)
    assert older is not None and older.action != "CORRECT"
    assert "the top 200 from BM25 and the top 200 from the vector index are fused" in older.body
    undated = plan_update(NODE, "We agreed to take the top 200 from BM25 and the top 200 from "
                          "the vector index.", "resource/notes.md", "Hybrid search", False)
    assert undated is not None and undated.action != "CORRECT"  # no date, no say on values


# -- links woven only for real mentions (issue 37: "Https is covered in [[...|HTTPS]]."
# was woven into 26 of 68 nodes of a real vault because their text holds URLs) -------

HTTPS = ("digest/wiki/https.md", "HTTPS")


def test_a_name_inside_a_url_code_or_a_path_is_no_mention() -> None:
    page = ("Fetch https://example.org/https and www.https.org, mail ops@https.dev, "
            "edit /etc/https/site.conf or conf/https/site.yaml, run `https --check`.\n\n"
            "```\ncurl https\n```\n")
    assert also_covered(page, [HTTPS]) == ""
    blocks, linked = weave(["```\nhttps here\n```", "Open https://x.org/https today."],
                           [HTTPS], set())
    assert linked == [] and blocks[0] == "```\nhttps here\n```"


def test_a_name_ending_in_a_number_is_no_mention_of_a_longer_number() -> None:
    """The 0.5B's node linked "[[...|glibc 2]].34": a version is one number."""
    glibc = ("digest/wiki/glibc-2.md", "glibc 2")
    blocks, linked = weave(["To install glibc 2.34, run apt-get."], [glibc], set())
    assert linked == [] and blocks == ["To install glibc 2.34, run apt-get."]
    _, linked = weave(["Pin glibc 2, then rebuild."], [glibc], set())
    assert linked == ["digest/wiki/glibc-2.md"]


def test_a_name_inside_the_nodes_own_name_is_no_mention() -> None:
    """The 0.5B's node "Link time Optimization" linked its own "Link-time Optimization"
    to a node named "Optimization" (on optimizing constraints); a node's namesake is
    never linked for its own name."""
    text = ["Some CFI requires global information (e.g., Link-time Optimization)."]
    optimization = ("digest/wiki/optimization.md", "Optimization")
    assert weave(text, [optimization], set(), own="Link time Optimization")[1] == []
    assert weave(text, [optimization], set())[1] == ["digest/wiki/optimization.md"]
    namesake = ("digest/wiki/project-description.md", "Project Description")
    label = ["Project Description: what is my purpose?"]
    assert weave(label, [namesake], set(), own="Project Description (2)")[1] == []


def test_the_nodes_own_name_is_no_part_of_a_longer_name() -> None:
    """The demo's Hybrid search node said "[[...hybrid-search-design-doc.md|Hybrid search]]
    ran on staging all week": its own name, linked to "Hybrid search design doc" as a
    part of that name. A run of words that is the node's own name is the node itself."""
    text = ["- Hybrid search ran on staging all week with no incidents."]
    doc = ("digest/wiki/hybrid-search-design-doc.md", "Hybrid search design doc")
    assert weave(text, [doc], set(), own="Hybrid search")[1] == []
    assert weave(text, [doc], set(), own="Staging")[1] == [doc[0]]  # elsewhere a part


def test_a_name_in_prose_is_still_a_mention() -> None:
    assert "[[digest/wiki/https.md|HTTPS]]" in also_covered("We moved to HTTPS.", [HTTPS])
    _, linked = weave(["See https://x.org; HTTPS is on for every site."], [HTTPS], set())
    assert linked == ["digest/wiki/https.md"]


def test_refines_add_no_woven_link_past_the_cap_of_a_node() -> None:
    links = " ".join(f"[[digest/wiki/n{i}.md|n{i}]]" for i in range(5))
    node = (f"---\nname: Backups\ndescription: d\n---\nBackups touch {links}.\n\n"
            "## Sources\n\n- Backups: taken from [[daily/2026-06-01.md]].\n")
    summary = "Backups now also copy the HTTPS certificates every night to the second disk."
    plan = plan_update(node, summary, "daily/2026-06-02.md", "Backups", cites_source=False,
                       linkable=Linkable((HTTPS,)))
    assert plan is not None and "certificates" in plan.body
    assert "[[digest/wiki/https.md" not in plan.body
    fewer = node.replace(" [[digest/wiki/n4.md|n4]]", "")
    plan = plan_update(fewer, summary, "daily/2026-06-02.md", "Backups", cites_source=False,
                       linkable=Linkable((HTTPS,)))
    assert plan is not None and "[[digest/wiki/https.md|HTTPS]]" in plan.body


def test_a_cjk_name_is_a_mention_only_as_a_whole_word() -> None:
    """A real Japanese vault had 44 links woven on "ない" and "ある" inside the owner's
    sentences: a name's characters inside a longer word are no mention of it."""
    blocks, linked = weave(["あるいは半音の練習をした。"], [("digest/wiki/aru.md", "ある"),
                                                       ("digest/wiki/hanon.md", "半音")], set())
    assert linked == ["digest/wiki/hanon.md"] and "[[digest/wiki/aru.md" not in blocks[0]
    _, linked = weave(["今天练习了半音阶。"], [("digest/wiki/yin.md", "音")], set())
    assert linked == []
    assert also_covered("今天练习了半音阶。", [("digest/wiki/yin.md", "音")]) == ""


@pytest.mark.parametrize("items, name", [
    # a word said twice in one clause is said once: the diary line is about the cold
    (["風邪のせいで、今本当に全ての音が半音の半音(50¢)低く聞こえる。", "気味が悪い。",
      "キーボードのtuneを+50まで捻ってようやく聴き覚えのある音になる。"], "風邪"),
    # こと ("thing"), これ ("this") and 全て ("all") come back in every text: no subject
    (["入力を処理することができる。置き換えることはできない。", "意識の問題がある。",
      "これは意識の問題だ。"], "意識"),
])
def test_a_japanese_name_is_what_the_text_keeps_returning_to_not_its_grammar(
        items: list[str], name: str) -> None:
    """oignon's nodes "こと", "これ", "全て" and "半音" (a diary line on a cold) took links
    from 30 of its nodes: every "ことができる", every "これ", every semitone."""
    from vaultlink.prose.phrase_names import unspaced_phrase
    assert unspaced_phrase(items) == name


def test_a_japanese_noun_made_a_verb_is_no_mention_of_it() -> None:
    from vaultlink.prose.writing import weave
    blocks, linked = weave(["忘れられない。意識するのを止められない。"],
                           [("digest/wiki/意識.md", "意識")], set())
    assert linked == [] and "[[" not in blocks[0]
    blocks, linked = weave(["人間の意識は量子的だ。"], [("digest/wiki/意識.md", "意識")], set())
    assert linked == ["digest/wiki/意識.md"]


def test_a_japanese_name_is_made_of_nouns_not_verb_endings() -> None:
    from vaultlink.prose.phrase_names import unspaced_phrase
    name = unspaced_phrase(["風邪で全部が低く聞こえる。半音下がってない気がする。"
                            "半音の練習はまだない。ないものはない。"])
    assert name == "半音"


@pytest.mark.parametrize("path, site", [
    ("resource/fastify/plugins.md", "Fastify"),  # a documentation set: its pages' site
    ("resource/10_cool/CESH.md", ""),  # folders numbered to sort are where the owner files
    ("resource/PKM/20-AREAS/growth.md", ""),
    ("resource/1. Projects/plan.md", ""),
])
def test_a_folder_numbered_to_sort_is_no_site_to_name_a_node_by(path: str, site: str) -> None:
    """oignon's nodes were "10_cool cesh", "10_cool index", "11_fine 数式": a one-word
    title qualified by its folder, as a documentation page is by its site."""
    from vaultlink.prose.pages import site_of
    assert site_of([], path) == site


def test_no_link_is_woven_into_a_days_task_list() -> None:
    """yoshixi's day lists linked each other on their chores: "cheat sheet" in one day's
    "Make CSCB09 cheat sheet" went to another day's "Finish CSCC24 cheat sheet" list."""
    candidates = [("digest/wiki/finish-cscc24-cheat-sheet.md", "cheat sheet")]
    tasks = "- ☐ Make CSCB09 cheat sheet\n- ☑ Review all PCRS ✅ 2026-04-14"
    blocks, linked = weave([tasks], candidates, set())
    assert linked == [] and blocks == [tasks]
    blocks, linked = weave(["The cheat sheet covers pointers."], candidates, set())
    assert linked == ["digest/wiki/finish-cscc24-cheat-sheet.md"]


def test_a_lone_new_step_with_no_list_to_go_on_is_an_item() -> None:
    """"1. Re-check n_dead_tup; it went from 1.1M to about 2k" was added after a prose
    paragraph among bullets, a list of one restarted at 1; two new steps stay a list."""
    body = "Vacuum the table by hand.\n\nPlain VACUUM keeps the space.\n"
    summary = ("- Elif flagged that the documents table is three times larger on disk.\n"
               "4. Re-check n_dead_tup; it went from 1.1M to about 2k.")
    plan = plan_update(body, summary, "daily/2026-06-11.md", "Vacuum", cites_source=False)
    assert plan is not None
    assert "- Re-check n_dead_tup; it went from 1.1M to about 2k." in plan.body
    assert "1. Re-check" not in plan.body
    two = summary + "\n5. Resume the nightly re-embedding cron job afterwards."
    plan = plan_update(body, two, "daily/2026-06-11.md", "Vacuum", cites_source=False)
    assert plan is not None and "1. Re-check n_dead_tup" in plan.body
    assert "2. Resume the nightly" in plan.body


def test_a_name_the_node_links_already_is_no_part_of_a_longer_name() -> None:
    """The staging deploy node links "Hybrid search" in its lead; a refine's "hybrid search
    branch" was linked to "Hybrid search design doc", a node of three tasks, by the part
    of its name: the owner's words would point at the wrong subject."""
    body = ("Features such as [[digest/wiki/hybrid-search.md]] ship behind flags.\n\n"
            "1. Make sure main is green.\n")
    nodes = (("digest/wiki/hybrid-search.md", "Hybrid search"),
             ("digest/wiki/hybrid-search-design-doc.md", "Hybrid search design doc"))
    plan = plan_update(body, "Deployed the hybrid search branch to staging for the first "
                       "time, about 12 minutes end to end.", "daily/2026-06-12.md",
                       "Deploy Sift to staging", cites_source=False,
                       linkable=Linkable(nodes, frozenset(), "Deploy Sift to staging"))
    assert plan is not None and "Deployed the hybrid search branch" in plan.body
    assert "design-doc" not in plan.body


def test_a_lead_in_stays_above_the_list_it_introduces() -> None:
    """"New steps before running VACUUM on the documents table:" was added after its
    steps, run into the next paragraph: "...documents table: New failure mode ..."."""
    body = "Vacuum the documents table by hand.\n\n1. Check dead tuples.\n\nPlain VACUUM.\n"
    summary = ("New steps before running VACUUM on the documents table:\n1. Look for old "
               "idle-in-transaction sessions.\n2. Terminate them after checking with the "
               "owner.\nNew failure mode to recognise: dead row versions that cannot be "
               "removed yet mean something holds back xmin.")
    plan = plan_update(body, summary, "daily/2026-06-17/retro.md", "Vacuum", cites_source=False)
    assert plan is not None
    assert ("New steps before running VACUUM on the documents table:\n\n1. Look for old "
            "idle-in-transaction sessions.\n2. Terminate them") in plan.body
    assert "\n\nNew failure mode to recognise" in plan.body
    # the node already says the lead-in's words: it still opens its new list (left out,
    # the new steps ran on from the list above them with no blank line between)
    said = ("Vacuum the documents table by hand: these steps, before running VACUUM.\n\n"
            "1. Check dead tuples.\n\nPlain VACUUM.\n")
    plan = plan_update(said, summary, "daily/2026-06-17/retro.md", "Vacuum", cites_source=False)
    assert plan is not None
    assert ("\n\nNew steps before running VACUUM on the documents table:\n\n1. Look for "
            "old idle-in-transaction sessions.") in plan.body


def test_a_step_of_a_list_the_node_holds_told_again_is_not_added() -> None:
    """The demo's 2026-06-11 repeats the vacuum node's five steps, step 4 with what it
    showed that day ("it went from 1.1M to about 2k", where the node says "it should drop
    to a few thousand"): it was added as a bullet of its own under the steps. A step of a
    list the node mostly holds, whose opening is said, is the same step; a new step of
    that list is still added."""
    body = ("Vacuum the documents table by hand:\n\n"
            "1. Check dead tuples: `SELECT n_dead_tup FROM pg_stat_user_tables;`\n"
            "2. Pause the nightly re-embedding cron.\n"
            "3. Run `VACUUM (VERBOSE, ANALYZE) documents;`.\n"
            "4. Re-check `n_dead_tup`; it should drop to a few thousand.\n"
            "5. Resume the cron.\n")
    summary = ("1. Check dead tuples: `SELECT n_dead_tup FROM pg_stat_user_tables;`\n"
               "2. Pause the nightly re-embedding cron.\n"
               "3. Run `VACUUM (VERBOSE, ANALYZE) documents;`.\n"
               "4. Re-check `n_dead_tup`; it went from 1.1M to about 2k.\n"
               "5. Resume the cron.\n"
               "6. Post the before and after sizes in the ops channel.")
    plan = plan_update(body, summary, "daily/2026-06-11.md", "Vacuum", cites_source=False)
    assert plan is not None
    assert "1.1M" not in plan.body
    assert "Post the before and after sizes in the ops channel" in plan.body
