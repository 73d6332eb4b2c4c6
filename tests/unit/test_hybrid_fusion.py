"""The fusion of keyword and vector hits: one function, shared by every store and search index."""

from __future__ import annotations

import pytest

from notewell.domain.calibration import CALIBRATIONS, LOCAL_MODEL, HybridWeights
from notewell.domain.hybrid import RANK_OFFSET, embedding_text, fuse, named_shares, query_names

LOCAL = CALIBRATIONS[LOCAL_MODEL].hybrid


EVEN = HybridWeights(vector=0.5, entity=0.2)


def test_a_note_both_legs_found_beats_one_only_a_single_leg_ranked_first() -> None:
    fused = fuse([("a", 10.0), ("b", 8.0)], [("c", 0.9), ("b", 0.8)], 3, weights=EVEN)
    assert [f.note_id for f in fused] == ["b", "a", "c"]
    assert fused[0].keyword == pytest.approx(0.8) and fused[0].vector == pytest.approx(0.8)


def test_without_a_ceiling_keyword_scores_are_scaled_by_the_best_and_negative_cosines_count_as_nothing() -> None:
    fused = fuse([("a", 4.0), ("b", 2.0)], [("c", -0.3)], 5, weights=HybridWeights(vector=0.5, entity=0.2))
    assert {f.note_id: f.score for f in fused} == {"a": 0.5, "b": 0.25, "c": 0.0}


def test_with_the_query_s_ceiling_a_keyword_hit_matching_a_small_share_of_the_query_adds_little() -> None:
    """A long question whose best keyword hit holds a tenth of its words: scaled by that hit, it would count as a
    perfect match and bury the note closest in meaning; as a share of the query it counts as the tenth it is."""
    keyword, vector = [("chatter", 3.0)], [("answer", 0.6), ("chatter", 0.2)]
    assert [f.note_id for f in fuse(keyword, vector, 2, weights=EVEN)] == ["chatter", "answer"]
    fused = fuse(keyword, vector, 2, weights=EVEN, keyword_ceiling=30.0)
    assert [f.note_id for f in fused] == ["answer", "chatter"]
    assert fused[1].keyword == pytest.approx(0.1)
    # a note holding most of what the query asks for still leads on its words
    assert fuse([("match", 27.0)], vector, 1, weights=EVEN, keyword_ceiling=30.0)[0].note_id == "match"
    assert fuse([("title", 45.0)], [], 1, weights=EVEN, keyword_ceiling=30.0)[0].keyword == 1.0  # never above 1


def test_a_note_a_leg_left_out_scores_its_floor_when_the_leg_stopped_early_and_nothing_when_it_listed_all() -> None:
    keyword, vector = [("a", 4.0), ("b", 2.0)], [("c", 0.5), ("a", 0.4)]
    stopped = {f.note_id: f for f in fuse(keyword, vector, 3, weights=EVEN, pool=2)}
    assert stopped["c"].keyword == pytest.approx(0.5)  # below b on the keyword leg, which stopped at 2
    assert stopped["b"].vector == pytest.approx(0.4)  # below a on the vector leg, which stopped at 2
    listed = {f.note_id: f for f in fuse(keyword, vector, 3, weights=EVEN, pool=3)}
    assert listed["c"].keyword == 0.0 and listed["b"].vector == 0.0


def test_either_leg_alone_still_ranks_and_the_limit_holds() -> None:
    for weights in (LOCAL, None):
        assert [f.note_id for f in fuse([], [("y", 0.7), ("x", 0.2)], 1, weights=weights)] == ["y"]
        assert [f.note_id for f in fuse([("y", 3.0), ("x", 1.0)], [], 5, weights=weights)] == ["y", "x"]
        assert fuse([], [], 5, weights=weights) == []


def test_ties_break_by_note_id_so_results_are_stable() -> None:
    for weights in (LOCAL, None):
        assert [f.note_id for f in fuse([("b", 1.0), ("a", 1.0)], [], 2, weights=weights)] == ["a", "b"]


def test_the_embedded_text_does_not_repeat_a_title_the_body_starts_with() -> None:
    assert embedding_text("Use SQS", "Use SQS for jobs.") == "Use SQS for jobs."
    assert embedding_text("Queues", "Use SQS for jobs.") == "Queues\nUse SQS for jobs."
    assert embedding_text("Queues", "  ") == "Queues"


def test_the_names_a_query_gives_are_its_capitals_mid_sentence_and_inside_words() -> None:
    assert query_names("what did Lisa say about the GraphQL gateway") == {"lisa", "graphql"}
    assert query_names("Deploys on Tuesday") == {"tuesday"}  # the first word opens the sentence: not a name
    assert query_names("deploy frequency") == frozenset()


def test_a_name_every_proposed_note_mentions_lifts_less_than_a_rare_one() -> None:
    # "Kafka" in a Kafka shop: 15 notes say it; the incident note says "MSK" and must not be passed over for that
    names = query_names("One of the Kafka brokers' EBS volumes is close to full")
    texts = {f"n{i}": f"Kafka topic {i} settings" for i in range(15)} | {"msk": "MSK broker disk at 91%"}
    texts |= {f"o{i}": f"Depot {i} opening hours" for i in range(85)}
    common = named_shares(names, texts)["n0"]
    rare = named_shares(names, {"n0": "Kafka topic settings", **{f"o{i}": "Depot hours" for i in range(99)}})["n0"]
    assert 0 < common < rare <= 1.0


def test_a_note_naming_what_the_query_names_moves_up_by_the_share_it_names() -> None:
    names = query_names("exam results for Lisa and Bart")
    shares = named_shares(names, {"a": "LISA passed the exam", "b": "Bart and Lisa", "c": "The exam was hard"})
    assert shares["b"] > shares["a"] > shares["c"] == 0.0
    assert named_shares(frozenset(), {"a": "Lisa"}) == {"a": 0.0}
    legs = ([("a", 4.0), ("b", 4.0)], [("a", 0.5), ("b", 0.5)])
    assert [f.note_id for f in fuse(*legs, 2, weights=LOCAL)] == ["a", "b"]
    assert [f.note_id for f in fuse(*legs, 2, weights=LOCAL, named={"b": 0.5})] == ["b", "a"]
    weights = HybridWeights(vector=0.85, entity=0.2)
    assert fuse(*legs, 2, weights=weights, named={"b": 1.0})[0].score == pytest.approx(0.5 * 0.85 + 0.15 + 0.2)


def test_a_model_without_tuned_weights_is_fused_by_rank_whatever_the_scale_of_its_cosines() -> None:
    """The same neighbours, as one model and as another whose cosines crowd near 0.3: tuned weights mix the second
    at the wrong strength (the keyword leg drowns its meaning), ranks read both alike."""
    keyword = [("k", 10.0), ("both", 6.0), ("m", 1.0)]
    local_cosines = [("m", 0.9), ("both", 0.7), ("k", 0.1)]
    crowded = [(note_id, 0.25 + cosine / 10) for note_id, cosine in local_cosines]

    def order(vector: list[tuple[str, float]], weights: HybridWeights | None) -> list[str]:
        return [f.note_id for f in fuse(keyword, vector, 3, weights=weights)]

    assert order(local_cosines, EVEN) == ["both", "k", "m"]
    assert order(crowded, EVEN) != order(local_cosines, EVEN)  # why an untuned model gets no borrowed weights
    assert order(crowded, None) == order(local_cosines, None) == ["k", "m", "both"]


def test_rank_fusion_sums_one_over_the_offset_plus_the_rank_and_ties_share_a_rank() -> None:
    fused = {f.note_id: f.score for f in fuse([("a", 5.0), ("b", 5.0), ("c", 1.0)], [("c", 0.4)], 3, weights=None)}
    assert fused["a"] == fused["b"] == pytest.approx(1 / (RANK_OFFSET + 1))
    assert fused["c"] == pytest.approx(1 / (RANK_OFFSET + 3) + 1 / (RANK_OFFSET + 1))


def test_by_rank_the_query_names_are_a_list_of_their_own_that_lifts_the_notes_naming_them() -> None:
    legs = ([("a", 4.0), ("b", 3.0)], [("a", 0.6), ("b", 0.5)])
    assert [f.note_id for f in fuse(*legs, 2, weights=None)] == ["a", "b"]
    assert [f.note_id for f in fuse(*legs, 2, weights=None, named={"b": 0.5, "a": 0.0})] == ["b", "a"]
    # naming more of the names ranks higher in that list
    three = ([("a", 4.0), ("b", 3.0), ("c", 2.0)], [])
    assert [f.note_id for f in fuse(*three, 3, weights=None, named={"b": 0.5, "c": 1.0})] == ["c", "b", "a"]
