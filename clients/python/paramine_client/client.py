"""The client: one method per thing a researcher does with a running `paramine serve`, each request checked
against the contract's models before it leaves and each answer parsed into them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import httpx

from . import models as m

_TERMINAL = {m.JobState.done, m.JobState.failed, m.JobState.cancelled}


class ParamineError(Exception):
    """An answer that is not 2xx: the service's stable `code`, its `message` and the `field` at fault if any."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(f"{status} {code}: {message}" + (f" (field {field})" if field else ""))
        self.status, self.code, self.message, self.field = status, code, message, field


def _body(model: type[m.BaseModel], value: m.BaseModel | Mapping[str, Any] | None, **fields: Any) -> dict:
    """A request body as the contract's model validates it (a model, a dict, or keyword fields), unset fields left
    out so the service's own defaults apply."""
    merged = dict(value.model_dump(exclude_unset=True) if isinstance(value, m.BaseModel) else (value or {}))
    merged.update({k: v for k, v in fields.items() if v is not None})
    return model.model_validate(merged).model_dump(mode="json", exclude_unset=True, by_alias=True)


class Paramine:
    """A connection to `paramine serve`.

    `api_key`: the bearer key for write routes (or every route under `--auth-all`). A 503 `OVERLOADED` answer is
    retried after its `Retry-After`, up to `retries` times; other errors raise ParamineError.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        transport: httpx.BaseTransport | None = None,
    ):
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        self.retries = retries

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Paramine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------------------------

    def _request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        for attempt in range(self.retries + 1):
            r = self._http.request(method, path, **kw)
            if r.status_code == 503 and attempt < self.retries and "retry-after" in r.headers:
                time.sleep(float(r.headers["retry-after"]))
                continue
            _raise_for(r)
            return r
        raise AssertionError("unreachable")

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        return self._request(method, path, **kw).json()

    # -- search and classify ------------------------------------------------------------------------------------

    def search(
        self, text: str | Iterable[str], request: m.SearchRequest | Mapping[str, Any] | None = None, **options: Any
    ) -> m.SearchResponse:
        """Paraphrase candidates of one sentence or of several (`text` a list); options are SearchRequest's fields
        (`k=10, rerank=True, labels={"mode": "best"}, minProbability=0.5, ...`)."""
        texts = {"text": text} if isinstance(text, str) else {"texts": list(text)}
        body = _body(m.SearchRequest, request, **texts, **options)
        return m.SearchResponse.model_validate(self._json("POST", "/v1/search", json=body))

    def classify(
        self,
        pairs: Iterable[tuple[str, str]],
        request: m.ClassifyRequest | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> m.ClassifyResponse:
        """The cross-encoder's label and probabilities of each pair (one score per unordered pair)."""
        body = _body(m.ClassifyRequest, request, pairs=[list(p) for p in pairs], **options)
        return m.ClassifyResponse.model_validate(self._json("POST", "/v1/classify", json=body))

    # -- sentences ----------------------------------------------------------------------------------------------

    def add(self, sentences: Iterable[str | Mapping[str, Any]]) -> m.AddedSentences:
        """Adds sentences to the serving index: strings, or `{"text", "id"?, "meta"?, "replaces"?}` (`id`: your
        id; a retry with it is answered `retried`, not added twice). Searchable and durable on return."""
        items = [{"text": s} if isinstance(s, str) else dict(s) for s in sentences]
        return m.AddedSentences.model_validate(self._json("POST", "/v1/sentences", json={"sentences": items}))

    def delete(
        self, ids: int | Iterable[int] | None = None, where: Mapping[str, Any] | None = None
    ) -> m.DeletedSentences:
        """Deletes sentences by id, or every one whose metadata matches `where` (a takedown of a source)."""
        body: dict[str, Any] = {}
        if ids is not None:
            body["ids"] = [ids] if isinstance(ids, int) else list(ids)
        if where is not None:
            body["where"] = dict(where)
        return m.DeletedSentences.model_validate(self._json("POST", "/v1/sentences/delete", json=body))

    def sentence(self, id: int | str, context: int = 0) -> m.Sentence:
        """One sentence by its index id, or by the id you gave it (a record's `id`, an `add`'s `id`), with
        `context` sentences on each side when it was read from a document."""
        params = {"context": context} if context else {}
        return m.Sentence.model_validate(self._json("GET", f"/v1/sentences/{quote(str(id), safe='')}", params=params))

    def index(self) -> m.IndexInfo:
        return m.IndexInfo.model_validate(self._json("GET", "/v1/index"))

    # -- jobs ---------------------------------------------------------------------------------------------------

    def submit(self, spec: m.JobRequest | Mapping[str, Any] | None = None, **fields: Any) -> m.Job:
        """Starts a mining job (JobRequest's fields: `k`, `minCosine`, `rerank`, `docPairs`, ...)."""
        return m.Job.model_validate(self._json("POST", "/v1/jobs", json=_body(m.JobRequest, spec, **fields)))

    def job(self, id: str) -> m.Job:
        return m.Job.model_validate(self._json("GET", f"/v1/jobs/{id}"))

    def cancel(self, id: str) -> m.Job:
        return m.Job.model_validate(self._json("DELETE", f"/v1/jobs/{id}"))

    def wait(self, id: str, poll: float = 0.5, timeout: float | None = None) -> m.Job:
        """The job once it is done, failed or cancelled."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while (j := self.job(id)).state not in _TERMINAL:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {id} still {j.state.value} after {timeout} s")
            time.sleep(poll)
        return j

    def results(
        self, id: str, offset: int = 0, follow: bool = True, reconnects: int = 5, **params: Any
    ) -> Iterator[m.MinedPair]:
        """The job's pairs from sequence number `offset` on, as they are found (`follow`: until the job ends).

        A dropped stream is picked up again where it stopped (offset = last seq + 1), up to `reconnects` times in
        a row; `params`: the stream's other options (`diff=True`, `context=2`, `limit=...`)."""
        next_seq, failures = offset, 0
        query = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items()}
        while True:
            try:
                with self._http.stream(
                    "GET",
                    f"/v1/jobs/{id}/results",
                    params={**query, "offset": next_seq, "follow": str(follow).lower()},
                    timeout=httpx.Timeout(self._http.timeout.connect, read=None),
                ) as r:
                    if r.status_code >= 400:
                        r.read()
                        _raise_for(r)
                    for line in r.iter_lines():
                        if line.strip():
                            pair = m.MinedPair.model_validate(json.loads(line))
                            next_seq, failures = pair.seq + 1, 0
                            yield pair
                return
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.ConnectError):
                failures += 1
                if failures > reconnects:
                    raise
                time.sleep(min(2.0, 0.2 * 2**failures))

    # -- annotations --------------------------------------------------------------------------------------------

    def annotate(
        self, annotation: m.AnnotationRequest | Mapping[str, Any] | None = None, **fields: Any
    ) -> m.Annotation:
        """Stores one pair label (`s1`, `s2`, `label`, `scheme`, `decision`, ...)."""
        body = _body(m.AnnotationRequest, annotation, **fields)
        return m.Annotation.model_validate(self._json("POST", "/v1/annotations", json=body))

    def annotations(self, **filters: Any) -> list[m.Annotation]:
        """Every stored annotation, oldest first (`annotator`, `scheme`, `decision`, `since` filter them)."""
        r = self._request("GET", "/v1/annotations", params={"format": "jsonl", **filters})
        return [m.Annotation.model_validate(json.loads(line)) for line in r.text.splitlines() if line.strip()]


def _raise_for(r: httpx.Response) -> None:
    if r.status_code < 400:
        return
    try:
        err = r.json()
    except ValueError:
        err = {}
    raise ParamineError(
        r.status_code,
        str(err.get("code", "HTTP_ERROR")),
        str(err.get("message", r.text[:500] or r.reason_phrase)),
        err.get("field"),
    )
