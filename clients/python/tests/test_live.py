"""The client against a live `paramine serve` (conftest.py): every method a researcher uses, as the README shows."""

from __future__ import annotations

import pytest

from paramine_client import Paramine, ParamineError, models


@pytest.fixture()
def client(service):
    with Paramine(service["url"], api_key=service["key"]) as c:
        yield c


def test_search_finds_the_other_translation(client, service):
    query = service["texts"][2]  # Proverbs 1:2 (WEB); the KJV line is in the index too
    r = client.search(query, k=5)
    assert isinstance(r, models.SearchResponse)
    texts = [c.text for c in r.results[0].candidates]
    assert service["texts"][3] in texts
    top = r.results[0].candidates[0]
    assert top.label in ("paraphrase", "not_paraphrase") and top.labeledBy
    several = client.search([service["texts"][2], service["texts"][4]], k=3, rerank=False)
    assert len(several.results) == 2 and all(len(q.candidates) == 3 for q in several.results)


def test_classify_one_score_per_unordered_pair(client, service):
    a, b = service["texts"][2], service["texts"][3]
    r = client.classify([(a, b), (b, a)], labels={"mode": "fast"})
    p = [x.probabilities["paraphrase"] for x in r.results]
    assert p[0] == p[1]
    assert r.results[0].label == "paraphrase"


def test_add_get_with_context_and_delete(client):
    added = client.add([{"text": "A brand new sentence about quiet harbours at dawn.", "id": "py-1"}])
    s = added.sentences[0]
    assert s.status.value == "added" and s.clientId == "py-1"
    again = client.add([{"text": "A brand new sentence about quiet harbours at dawn.", "id": "py-1"}])
    assert again.sentences[0].id == s.id and again.sentences[0].status.value == "retried"
    got = client.sentence(s.id)
    assert got.text.startswith("A brand new sentence")
    assert client.sentence("py-1").id == s.id  # by the id you gave
    # the same text: found at once (kept although its dedup key is the query's)
    found = client.search("A brand new sentence about quiet harbours at dawn.", k=3, excludeDuplicates=False)
    assert s.id in [c.id for c in found.results[0].candidates]
    gone = client.delete([s.id])
    assert gone.deleted == 1
    with pytest.raises(ParamineError) as e:
        client.sentence(s.id)
    assert e.value.status == 404 and e.value.code


def test_job_submit_follow_and_resume(client):
    job = client.submit(k=5, minCosine=0.8)
    pairs = list(client.results(str(job.id)))
    done = client.wait(str(job.id), timeout=120)
    assert done.state == models.JobState.done
    assert len(pairs) == done.pairs > 0
    assert [p.seq for p in pairs] == list(range(len(pairs)))
    # a client that lost the stream resumes from the last seq + 1: the same pairs, none twice
    tail = list(client.results(str(job.id), offset=pairs[len(pairs) // 2].seq + 1, follow=False))
    assert [p.seq for p in tail] == [p.seq for p in pairs[len(pairs) // 2 + 1 :]]


def test_annotations_round_trip(client, service):
    a = client.annotate(s1=service["texts"][0], s2=service["texts"][1], scheme="binary", decision="accept")
    assert a.annotator == "tester"
    listed = client.annotations(scheme="binary")
    assert any(x.id == a.id for x in listed)


def test_errors_name_the_field_and_writes_need_the_key(service):
    with Paramine(service["url"]) as anonymous:
        # checks only the service can make come back as its error, with the field at fault
        with pytest.raises(ParamineError) as e:
            anonymous.search([f"sentence {i}" for i in range(64)], candidates=500)
        assert e.value.status == 400 and e.value.field == "candidates"
        # what the contract says is caught before it leaves (pydantic names the field)
        with pytest.raises(ValueError, match="k"):
            anonymous.search("a sentence", k=500)
        with pytest.raises(ParamineError) as e:
            anonymous.submit(k=5)
        assert e.value.status == 401
