"""The fusion of keyword and vector hits: one function, shared by every store and search index."""

from __future__ import annotations

import pytest

from notewell.domain.hybrid import embedding_text, fuse, named_share, query_names


def test_a_note_both_legs_found_beats_one_only_a_single_leg_ranked_first() -> None:
    fused = fuse([("a", 10.0), ("b", 8.0)], [("c", 0.9), ("b", 0.8)], 3)
    assert [f.note_id for f in fused] == ["b", "c", "a"]
    assert fused[0].keyword == pytest.approx(0.8) and fused[0].vector == pytest.approx(0.8)


def test_keyword_scores_are_scaled_by_the_best_and_negative_cosines_count_as_nothing() -> None:
    fused = fuse([("a", 4.0), ("b", 2.0)], [("c", -0.3)], 5, vector_weight=0.5)
    assert {f.note_id: f.score for f in fused} == {"a": 0.5, "b": 0.25, "c": 0.0}


def test_either_leg_alone_still_ranks_and_the_limit_holds() -> None:
    assert [f.note_id for f in fuse([], [("x", 0.2), ("y", 0.7)], 1)] == ["y"]
    assert [f.note_id for f in fuse([("x", 1.0), ("y", 3.0)], [], 5)] == ["y", "x"]
    assert fuse([], [], 5) == []


def test_ties_break_by_note_id_so_results_are_stable() -> None:
    assert [f.note_id for f in fuse([("b", 1.0), ("a", 1.0)], [], 2)] == ["a", "b"]


def test_the_embedded_text_does_not_repeat_a_title_the_body_starts_with() -> None:
    assert embedding_text("Use SQS", "Use SQS for jobs.") == "Use SQS for jobs."
    assert embedding_text("Queues", "Use SQS for jobs.") == "Queues\nUse SQS for jobs."
    assert embedding_text("Queues", "  ") == "Queues"


def test_the_names_a_query_gives_are_its_capitals_mid_sentence_and_inside_words() -> None:
    assert query_names("what did Lisa say about the GraphQL gateway") == {"lisa", "graphql"}
    assert query_names("Deploys on Tuesday") == {"tuesday"}  # the first word opens the sentence: not a name
    assert query_names("deploy frequency") == frozenset()


def test_a_note_naming_what_the_query_names_moves_up_by_the_share_it_names() -> None:
    names = query_names("exam results for Lisa and Bart")
    assert named_share(names, "LISA passed the exam") == 0.5
    assert named_share(names, "Bart and Lisa") == 1.0 and named_share(frozenset(), "Lisa") == 0.0
    legs = ([("a", 4.0), ("b", 4.0)], [("a", 0.5), ("b", 0.5)])
    assert [f.note_id for f in fuse(*legs, 2)] == ["a", "b"]
    assert [f.note_id for f in fuse(*legs, 2, named={"b": 0.5})] == ["b", "a"]
    assert fuse(*legs, 2, named={"b": 1.0}, entity_weight=0.2)[0].score == pytest.approx(0.5 * 0.85 + 0.15 + 0.2)
