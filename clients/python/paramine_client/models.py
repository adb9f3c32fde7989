"""The contract's models: generated from openapi.yaml by clients/python/generate.py - do not edit."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal
from uuid import UUID

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    confloat,
    conint,
    constr,
)


class SearchRequestLabelsMode(StrEnum):
    fast = "fast"
    balanced = "balanced"
    best = "best"


class SearchRequestLabels(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    mode: SearchRequestLabelsMode | None = Field(
        None,
        description="`fast` - the student cross-encoder alone; `balanced` (default) - the student, and the teacher for the pairs whose P(paraphrase) falls in the band around the cut written in the student’s config (where it names a teacher); `best` - the teacher for every pair. Each pair says which model labeled it.",
    )
    keep: list[constr(min_length=1)] | None = Field(
        None,
        description="Keep only candidates whose served label is one of these.",
        min_length=1,
    )


class LexicalFilter(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    minTokens: conint(ge=0, le=9007199254740991) | None = None
    minChars: conint(ge=0, le=9007199254740991) | None = None
    bleuMin: confloat(ge=0.0, le=100.0) | None = None
    bleuMax: confloat(ge=0.0, le=100.0) | None = None
    plrMax: confloat(ge=0.0) | None = None
    lengthRatioMax: confloat(ge=1.0) | None = None
    charNgramMin: confloat(ge=0.0, le=1.0) | None = None
    charNgramMax: confloat(ge=0.0, le=1.0) | None = None
    probabilityMin: dict[constr(min_length=1), confloat(ge=0.0, le=1.0)] | None = None
    probabilityMax: dict[constr(min_length=1), confloat(ge=0.0, le=1.0)] | None = None
    anyOf: list[LexicalFilter] | None = Field(None, max_length=16, min_length=1)
    bertScoreMin: confloat(ge=-1.0, le=1.0) | None = Field(
        None,
        description="BERTScore F1 (greedy matching of the encoder’s contextual token vectors) must exceed this; computed last, only for candidates every other filter kept. The `parasci` preset uses 0.7 recalibrated for the encoder (docs/bertscore.md).",
    )
    bertScoreIdf: bool | None = Field(
        None,
        description="Weight BERTScore’s tokens by idf over a sample of the index’s own sentences.",
    )


class DomainRequestMode(StrEnum):
    subsample = "subsample"
    weighted = "weighted"
    combined = "combined"


class DomainRequestApply(StrEnum):
    queries = "queries"
    candidates = "candidates"
    both = "both"


class DomainRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: constr(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    mode: DomainRequestMode | None = "subsample"
    threshold: float | None = Field(
        None, description="Keep sentences with σ below this (not with topFraction)."
    )
    topFraction: confloat(le=1.0, gt=0.0) | None = Field(
        None,
        description="Keep the most in-domain fraction of the index (not with threshold).",
    )
    apply: DomainRequestApply | None = "both"


class ClassifyRequestLabelsMode(StrEnum):
    fast = "fast"
    balanced = "balanced"
    best = "best"


class ClassifyRequestLabels(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    mode: ClassifyRequestLabelsMode | None = Field(
        None,
        description="`fast` - the student cross-encoder alone; `balanced` (default) - the student, and the teacher for the pairs whose P(paraphrase) falls in the band around the cut written in the student’s config (where it names a teacher); `best` - the teacher for every pair. Each pair says which model labeled it.",
    )


class PairPair(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    s1: constr(max_length=2000) = Field(
        ...,
        description="A sentence; at most 2000 characters (UTF-16 code units) and not only whitespace.",
    )
    s2: constr(max_length=2000) = Field(
        ...,
        description="A sentence; at most 2000 characters (UTF-16 code units) and not only whitespace.",
    )


class JobRequestScope(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: Literal["all"]


class JobRequestScope1(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: Literal["range"]
    start: conint(ge=0, le=9007199254740991)
    end: conint(ge=1, le=9007199254740991)


class JobRequestScope2(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: Literal["sentences"]
    sentences: list[constr(min_length=1, max_length=2000)] = Field(
        ..., max_length=10000, min_length=1
    )


class JobRequestScope3(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: Literal["file"]
    path: constr(min_length=1)


class JobRequestMargin(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    k: conint(ge=1, le=100) | None = 4
    min: confloat(ge=0.0) | None = None


class JobRequestRerankMode(StrEnum):
    fast = "fast"
    balanced = "balanced"
    best = "best"


class JobRequestRerank(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    labels: list[constr(min_length=1)] | None = Field(None, min_length=1)
    minProbability: confloat(ge=0.0, le=1.0) | None = None
    mode: JobRequestRerankMode | None = Field(
        None,
        description="`fast` - the student cross-encoder alone; `balanced` (default) - the student, and the teacher for the pairs whose P(paraphrase) falls in the band around the cut written in the student’s config (where it names a teacher); `best` - the teacher for every pair. Each pair says which model labeled it.",
    )


class JobRequestPreset(StrEnum):
    multipit = "multipit"
    paratag = "paratag"
    parasci = "parasci"
    parasci_intra = "parasci-intra"
    parasci_definitions = "parasci-definitions"
    parasci_citations = "parasci-citations"
    turku_negatives = "turku-negatives"


class JobRequestWindow(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    key: constr(min_length=1, max_length=200)
    days: confloat(le=36500.0, gt=0.0) | None = None
    width: PositiveFloat | None = None


class JobRequestDocPairsAlignMethod(StrEnum):
    tfidf = "tfidf"
    mean = "mean"
    hybrid = "hybrid"


class JobRequestDocPairsAlign(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    method: JobRequestDocPairsAlignMethod | None = "tfidf"
    min: confloat(ge=-1.0, le=1.0) | None = None
    max: confloat(ge=-1.0, le=1.01) | None = None
    autoBand: bool | None = True
    partners: conint(ge=1, le=100) | None = 3
    windowKey: constr(min_length=1) | None = None
    days: PositiveFloat | None = None
    same: list[constr(min_length=1)] | None = []
    differ: list[constr(min_length=1)] | None = []
    dim: conint(ge=32, le=4096) | None = 512


class JobRequestDocPairs(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    path: constr(min_length=1) | None = None
    align: JobRequestDocPairsAlign | None = Field(
        None,
        description="Align the documents first, as `paramine docs align` does with these options (method tfidf|mean|hybrid,\nmin, max, partners, same, differ, windowKey, days, dim), then mine within the pairs found.",
    )
    docKey: constr(min_length=1, max_length=200) | None = "doc"


class JobRequestSubSentence(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    method: Literal["best-clause"]
    minCosine: confloat(ge=-1.0, le=1.0) | None = 0.7


class JobRequestSubSentence1(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    method: Literal["span"]
    model: constr(min_length=1, max_length=500) | None = "paramine-span-minilm-q"
    minCosine: confloat(ge=-1.0, le=1.0) | None = 0.7


class JobRequestSince(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    seq: conint(ge=0, le=9007199254740991) = Field(
        ..., description="A write sequence number (`seq` of POST /v1/sentences)."
    )


class JobRequestSince1(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    time: AwareDatetime = Field(
        ..., description="Sentences written at or after this time."
    )


class JobRequestSince2(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991) = Field(
        ...,
        description="Sentences with this id and later (a previous job’s `untilId`).",
    )


class JobRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    index: constr(min_length=1) | None = Field(
        None,
        description="Name of the index to mine (the served index’s directory name); default the served one. Another name is a 404.",
    )
    scope: (
        JobRequestScope | JobRequestScope1 | JobRequestScope2 | JobRequestScope3 | None
    ) = Field(
        {"kind": "all"},
        description='The query sentences; default `{"kind": "all"}`.',
        validate_default=True,
    )
    k: conint(ge=1, le=100) | None = Field(
        10,
        description="Nearest neighbours examined per query sentence (paraphrase_mining’s top_k).",
    )
    nprobe: conint(ge=1, le=65536) | None = None
    recall: confloat(le=1.0, gt=0.0) | None = Field(
        None,
        description="Wanted recall@10 of the ANN search: the index’s cheapest operating point reaching it (see\n`GET /v1/index`); `nprobe` given beside it wins. 400 (field `recall`) when the index has no\nmeasured operating points (`paramine tune`); exact (Flat) indexes ignore it.",
    )
    minCosine: confloat(ge=-1.0, le=1.0) | None = None
    margin: JobRequestMargin | None = Field(
        None,
        description="Ratio margin (Artetxe & Schwenk 2019) - cos(x, y) over the mean of x’s and y’s mean cosine to their `k` nearest neighbours. Each pair gets `margin`; `min` drops pairs below it.",
    )
    rerank: JobRequestRerank | None = Field(
        None,
        description="Present - label pairs with the cross-encoder (a 400 when none is loaded).",
    )
    preset: JobRequestPreset | None = Field(
        None,
        description="The papers’ recipes; explicit fields override them. `multipit` - withinGroup [trend, url], at\nleast 5 tokens a side, BLEU <= 14. `paratag` - 5 < BLEU < 20, >= 10 characters, length ratio\n< 2.5. `parasci` - PLR < 1.0. `parasci-intra` - withinGroup paper, excludeSame [section], the\ncosine standing for ParaSCI’s 0.931 on BERT (docs/scopes.md), PLR < 1.0. `parasci-definitions` -\nwithinGroup term (the definition tagger fills it on a plain corpus), PLR < 2.\n`parasci-citations` - withinGroup cites, the calibrated cosine, PLR < 1.0. `turku-negatives` -\nwithinGroup source, negatives (use with k 5 and rerank, as Kanerva et al.).",
    )
    filter: LexicalFilter | None = Field({}, validate_default=True)
    withinGroup: (
        constr(min_length=1, max_length=200)
        | list[constr(min_length=1, max_length=200)]
        | None
    ) = Field(
        None,
        description="Pairs only between sentences sharing a value under this metadata key (or any of these keys):\npaper, trend, url, cited paper, defined term, source. Needs the index’s group table for the key\n(`paramine index --group-keys` or `paramine groups build`; a 400 names the missing key). Each\nquery’s top `k` are taken among its group’s members: groups up to `exactMax` members are\nsearched exactly over the kept embeddings, larger ones through the index with an id selector.",
    )
    window: JobRequestWindow | None = Field(
        None,
        description="Pairs only between sentences whose values of an ordered key differ by at most `days` (a key\nbuilt as KEY:date - ISO-8601 dates) or `width` (KEY:number). Exactly one of `days` and `width`;\na 400 otherwise, and for a key whose table is not ordered.",
    )
    excludeSame: list[constr(min_length=1, max_length=200)] | None = Field(
        None,
        description="Never pair sentences sharing a value under any of these metadata keys (ParaSCI - same section).",
        max_length=8,
        min_length=1,
    )
    excludeSameGroup: constr(min_length=1, max_length=200) | None = Field(
        None, description="The older one-key form of `excludeSame` (an alias)."
    )
    docPairs: JobRequestDocPairs | None = Field(
        None,
        description="Mine within document pairs: each sentence looks for candidates only in its document's partner\ndocuments. `path`: a pairs file (`paramine docs align` output: JSON lines with `a` and `b`, the\ndocuments' ids) relative to the service's `--data-dir`; or `align`: the job aligns the documents\nitself as its first stage; `docKey`: the group key of the documents (default doc).",
    )
    domain: DomainRequest | None = None
    subSentence: JobRequestSubSentence | JobRequestSubSentence1 | None = Field(
        None,
        description="Sub-sentence pairs (ParaSCI): a candidate the whole-sentence filters reject is tried again with a\nspan of the longer sentence: the clause run closest to the shorter one by the encoder’s cosine\n(`best-clause`), or the span a span model points at (`span`: paramine-train span’s model, by\nname under models/ or directory; default `paramine-span-minilm-q`). Either way the (shorter, span)\npair must pass the filters and reach `minCosine`; kept pairs carry `span`.",
    )
    negatives: bool | None = Field(
        None,
        description="Emit the top-`k` candidates the filters or the cross-encoder reject (hard negatives) instead of the accepted ones. Needs a filter or rerank.",
    )
    exactMax: conint(ge=0, le=9007199254740991) | None = Field(
        None,
        description="Groups and windows up to this many members are searched exactly over the kept embeddings; larger ones through the index with an id selector (default 50000; BENCHMARKS.md).",
    )
    cluster: bool | None = Field(
        False,
        description="Group accepted pairs into multi-reference sets (union-find, as MultiPIT’s NMR set).",
    )
    batchSize: conint(ge=1, le=4096) | None = Field(
        128,
        description="Query sentences per checkpoint (smaller batches interleave better with queries). A run starts at 32 and doubles up to it, so progress shows within seconds.",
    )
    since: JobRequestSince | JobRequestSince1 | JobRequestSince2 | None = Field(
        None,
        description="Mine only what is new: the pairs with at least one sentence added since this point (each new\nsentence against all; the sentences whose top k now holds a new one, against the new ones), with\nthe same k, filters, domain, withinGroup and window: the pairs a full re-mine finds that involve a\nnew sentence. Only with scope `all`, without margin or docPairs (new sentences change the\nneighbourhood means and the document alignment of old pairs too).",
    )
    reverseDepth: conint(ge=1, le=1024) | None = Field(
        None,
        description="With `since`: how many neighbours of each new sentence are checked for holding it in their own\ntop k (default max(10 k, 100)); a sentence farther from every new one than this is not re-queried.",
    )
    untilId: conint(ge=0, le=9007199254740991) | None = Field(
        None,
        description="Sentences with this id or later are not part of the job (set when it is created: the sentences\nadded after it started; give it as `since: {id}` to the next job so nothing is mined twice or lost).",
    )


class AnnotationRequestScheme(StrEnum):
    binary = "binary"
    turku = "turku"


class AnnotationRequestDecision(StrEnum):
    accept = "accept"
    reject = "reject"
    label = "label"


class AnnotationRequestMode(StrEnum):
    fast = "fast"
    balanced = "balanced"
    best = "best"


class AnnotationSourceKind(StrEnum):
    search = "search"
    job = "job"


class AnnotationSource(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    kind: AnnotationSourceKind
    job: UUID | None = None
    seq: conint(ge=0, le=9007199254740991) | None = None


class AnnotationContextS1(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    before: list[constr(min_length=1, max_length=4000)] = Field(..., max_length=50)
    after: list[constr(min_length=1, max_length=4000)] = Field(..., max_length=50)


class AnnotationContextS2(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    before: list[constr(min_length=1, max_length=4000)] = Field(..., max_length=50)
    after: list[constr(min_length=1, max_length=4000)] = Field(..., max_length=50)


class AnnotationContext(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    s1: AnnotationContextS1 | None = None
    s2: AnnotationContextS2 | None = None


class BadInputErrorCode(StrEnum):
    BAD_INPUT = "BAD_INPUT"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"


class BadInputError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: BadInputErrorCode
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class UnauthorizedError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: Literal["UNAUTHORIZED"]
    message: str = Field(..., description="What went wrong, for people.")
    field: Literal["authorization"]


class ErrorCode(StrEnum):
    BAD_INPUT = "BAD_INPUT"
    UNAUTHORIZED = "UNAUTHORIZED"
    NOT_FOUND = "NOT_FOUND"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    CONFLICT = "CONFLICT"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    RATE_LIMITED = "RATE_LIMITED"
    OVERLOADED = "OVERLOADED"
    UNAVAILABLE = "UNAVAILABLE"
    INDEX_CLOSED = "INDEX_CLOSED"
    FAISS_ERROR = "FAISS_ERROR"
    MODEL_MISSING_FILE = "MODEL_MISSING_FILE"
    INTERNAL = "INTERNAL"


class Error(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: ErrorCode = Field(..., description="Stable machine-readable error code.")
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class NotFoundError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: Literal["NOT_FOUND"]
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class PayloadTooLargeError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: Literal["PAYLOAD_TOO_LARGE"]
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class UnsupportedMediaTypeError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: Literal["UNSUPPORTED_MEDIA_TYPE"]
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class UnavailableErrorCode(StrEnum):
    UNAVAILABLE = "UNAVAILABLE"
    INDEX_CLOSED = "INDEX_CLOSED"
    OVERLOADED = "OVERLOADED"


class UnavailableError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: UnavailableErrorCode
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class InternalErrorCode(StrEnum):
    INTERNAL = "INTERNAL"
    FAISS_ERROR = "FAISS_ERROR"
    MODEL_MISSING_FILE = "MODEL_MISSING_FILE"


class InternalError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: InternalErrorCode
    message: str = Field(..., description="What went wrong, for people.")
    field: str | None = Field(
        None,
        description="The offending field (`k`, `texts[3]`, `filter.bleuMin`, `id`, `authorization`).",
    )


class SearchResponseOrder(StrEnum):
    probability = "probability"
    cosine = "cosine"


class QueryResultDomain(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    sigma: float
    weight: float
    kept: bool


class LexicalMeasures(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    charNgramCosine: confloat(ge=0.0) = Field(
        ..., description="Character 2-4-gram TF-IDF cosine (0 to 1)."
    )
    bleu: confloat(ge=0.0) = Field(
        ..., description="Mean of sentence BLEU both ways (0 to 100)."
    )
    plr: confloat(ge=0.0) | None = Field(
        ...,
        description="|len(a) - len(b)| / min(len(a), len(b)) in tokens; null when one side is empty.",
    )
    lengthRatio: confloat(ge=1.0) | None = Field(
        ..., description="max / min length in tokens; null when one side is empty."
    )


class CandidateDomain(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    sigma: float
    weight: float
    querySigma: float
    queryWeight: float
    score: float | None = None


class DiffSpanOp(StrEnum):
    equal = "equal"
    delete = "delete"
    insert = "insert"
    move = "move"


class DiffSpan(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    op: DiffSpanOp
    start: conint(ge=0, le=9007199254740991)
    end: conint(ge=0, le=9007199254740991)
    text: str
    move: conint(ge=0, le=9007199254740991) | None = Field(
        None, description="For `move`; the span with the same number on the other side."
    )


class DocumentContextBeforeItem(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991)
    text: str
    meta: dict[str, Any] | None = Field(
        None, description="The corpus record's extra fields, as indexed."
    )


class DocumentContextAfterItem(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991)
    text: str
    meta: dict[str, Any] | None = Field(
        None, description="The corpus record's extra fields, as indexed."
    )


class DocumentContext(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    doc: str = Field(..., description="The document’s id, as the input gave it.")
    before: list[DocumentContextBeforeItem] = Field(
        ..., description="Up to `context` sentences before it, in document order."
    )
    after: list[DocumentContextAfterItem] = Field(
        ..., description="Up to `context` sentences after it, in document order."
    )


class SearchTimings(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    encodeMs: confloat(ge=0.0)
    searchMs: confloat(ge=0.0)
    rerankMs: confloat(ge=0.0)
    totalMs: confloat(ge=0.0)


class ClassifyResponseTimings(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    rerankMs: confloat(ge=0.0)


class PairResult(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    s1: str = Field(..., description="The pair's first text as sent.")
    s2: str = Field(..., description="The pair's second text as sent.")
    label: str = Field(
        ...,
        description="The served label: the positive label when the labeling model's calibrated P(paraphrase) is at least its cut (config.json `paramine.threshold`), else the negative one; the arg-max for a model without a cut. It can differ from the label with the highest probability.",
    )
    probabilities: dict[str, confloat(ge=0.0, le=1.0)] = Field(
        ...,
        description="Every label's probability; they sum to 1. A binary model with a label calibration (config.json's\n`paramine.label_calibration`) reports P(paraphrase) calibrated on validation pairs: among pairs given\nabout p there, about p were paraphrases (its model card has the reliability diagram). The label cut\n(`paramine.threshold`) is on this scale.\n",
    )
    model: str | None = Field(
        None,
        description="The model that labeled the pair: the student cross-encoder, or the teacher where the cascade sent it there (`labels.mode`). In `balanced`, an unsure pair the overloaded teacher could not take keeps the student's label.",
    )


class JobIndex(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: str
    identity: str


class JobState(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"
    cancelled = "cancelled"


class JobStage(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: str = Field(
        ...,
        description="e.g. `align: search` (aligning the documents of a document-pairs scope).",
    )
    done: conint(ge=0, le=9007199254740991)
    total: conint(ge=0, le=9007199254740991)


class JobError(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    code: str
    message: str


class Job(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: UUID
    spec: dict[str, Any] = Field(
        ..., description="The request with its defaults filled in."
    )
    index: JobIndex
    state: JobState
    createdAt: AwareDatetime
    startedAt: AwareDatetime | None = None
    finishedAt: AwareDatetime | None = None
    total: conint(ge=0, le=9007199254740991) = Field(
        ..., description="Query sentences in scope."
    )
    processed: conint(ge=0, le=9007199254740991)
    pairs: conint(ge=0, le=9007199254740991)
    clusters: conint(ge=0, le=9007199254740991) | None = None
    runMs: confloat(ge=0.0) = Field(
        ..., description="Running time summed over restarts."
    )
    rate: float | None = Field(
        ..., description="Query sentences per second of running time."
    )
    etaSeconds: float | None
    stage: JobStage | None = Field(
        None,
        description="A stage that runs before mining, while it runs (`processed` counts mining only): its name and progress.",
    )
    error: JobError | None = None


class MinedPairSpanSide(StrEnum):
    a = "a"
    b = "b"


class MinedPairSpanMethod(StrEnum):
    best_clause = "best-clause"
    span = "span"


class MinedPairSpan(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    side: MinedPairSpanSide
    start: conint(ge=0, le=9007199254740991)
    end: conint(ge=0, le=9007199254740991)
    cosine: float
    method: MinedPairSpanMethod
    score: float | None = Field(
        None,
        description="Span method only - the model's span score (start + end logit) over its no-span score.",
    )


class PairSide(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=-9007199254740991, le=9007199254740991) | None = Field(
        ...,
        description="Sentence id in the index; null for a query sentence that is not in it.",
    )
    text: str
    meta: dict[str, Any] | None = Field(
        None, description="The corpus record's extra fields, as indexed."
    )
    context: DocumentContext | None = None


class DomainSide(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    sigma: float
    weight: float


class ReviewResponsePairSpanSide(StrEnum):
    a = "a"
    b = "b"


class ReviewResponsePairSpanMethod(StrEnum):
    best_clause = "best-clause"
    span = "span"


class ReviewResponsePairSpan(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    side: ReviewResponsePairSpanSide
    start: conint(ge=0, le=9007199254740991)
    end: conint(ge=0, le=9007199254740991)
    cosine: float
    method: ReviewResponsePairSpanMethod
    score: float | None = Field(
        None,
        description="Span method only - the model's span score (start + end logit) over its no-span score.",
    )


class ReviewResponsePairDomain(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    a: DomainSide
    b: DomainSide
    score: float | None = None


class Cluster(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    seq: conint(ge=0, le=9007199254740991)
    ids: list[conint(ge=0, le=9007199254740991)] = Field(..., min_length=2)


class Sentence(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991)
    text: str
    meta: dict[str, Any] | None = Field(
        None, description="The corpus record's extra fields, as indexed."
    )
    context: DocumentContext | None = None


class DeletedSentence(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991)
    deleted: bool = Field(..., description="false: it was deleted before.")


class AddedSentencesSentenceStatus(StrEnum):
    added = "added"
    duplicate = "duplicate"
    retried = "retried"


class AddedSentencesSentence(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991) = Field(
        ...,
        description="The sentence's id (for a duplicate: the sentence already there).",
    )
    status: AddedSentencesSentenceStatus = Field(
        ...,
        description="added: new and searchable now; duplicate: the same text (after normalization) is in the index; retried: this client id was added before.",
    )
    clientId: str | None = None


class AddedSentences(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    sentences: list[AddedSentencesSentence]
    seq: conint(ge=0, le=9007199254740991) = Field(
        ..., description="The write's sequence number (`mine --since` takes one)."
    )


class DeletedSentences(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    deleted: conint(ge=0, le=9007199254740991) = Field(
        ...,
        description="Sentences deleted by this write (those deleted before not counted).",
    )
    ids: list[conint(ge=0, le=9007199254740991)] = Field(
        ..., description="Their ids (at most the first 10,000)."
    )
    missing: list[conint(ge=0, le=9007199254740991)] | None = Field(
        None, description="Ids asked for that name no sentence."
    )
    seq: conint(ge=0, le=9007199254740991) = Field(
        ..., description="The next write's sequence number."
    )


class IndexInfoUpdatesSealed(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    segments: conint(ge=0, le=9007199254740991)
    sentences: conint(ge=0, le=9007199254740991)


class ManifestMetric(StrEnum):
    ip = "ip"
    l2 = "l2"


class ManifestModel(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: constr(min_length=1)
    sha256: constr(pattern=r"^[0-9a-f]{64}$")


class ManifestSearch(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    nprobe: conint(ge=1, le=9007199254740991)
    kFactor: confloat(ge=1.0)
    efSearch: conint(ge=1, le=9007199254740991) | None = None
    refine: Literal["vectors"] | None = None


class OperatingPoint(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    nprobe: conint(ge=1, le=9007199254740991)
    efSearch: conint(ge=1, le=9007199254740991) | None = Field(
        None,
        description="Candidate list of the HNSW coarse quantizer (IVF..._HNSW indexes).",
    )
    kFactor: confloat(ge=1.0) = Field(
        ..., description="Candidates re-scored exactly per result."
    )
    recall: confloat(ge=0.0, le=1.0) = Field(
        ...,
        description="recall@10 against exact search on held-out queries of the collection.",
    )
    recallStderr: confloat(ge=0.0) | None = Field(
        None,
        description="Standard error of `recall`; a point serves a wanted recall r when recall - 1.645 stderr >= r.",
    )
    p50Ms: confloat(ge=0.0) = Field(
        ...,
        description="Median single-query search time (ms), index only (no encoding).",
    )
    p99Ms: confloat(ge=0.0)


class QuantizationFit(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    n: conint(ge=0, le=9007199254740991) = Field(..., description="Vectors measured.")
    error: confloat(ge=0.0) = Field(
        ..., description="Mean |exact self-score - the quantized index's self-score|."
    )
    selfRecall: confloat(ge=0.0, le=1.0) = Field(
        ..., description="Share found as their own nearest neighbour."
    )


class DomainListDomainMethod(StrEnum):
    ml = "ml"
    embedding = "embedding"


class DomainListDomainUnit(StrEnum):
    bits_token = "bits/token"
    nats = "nats"


class DomainListDomainChangePoint(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    sigma: float
    shareBelow: confloat(ge=0.0, le=1.0)


class DomainListDomainCombined(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    features: list[str]
    weights: list[float]


class DomainListDomain(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: str
    method: DomainListDomainMethod
    unit: DomainListDomainUnit
    count: conint(ge=0, le=9007199254740991)
    current: bool
    changePoint: DomainListDomainChangePoint
    quantiles: dict[str, float] = Field(
        ..., description="min, p01 … p99, max and mean of σ over the index."
    )
    combined: DomainListDomainCombined | None = Field(
        ...,
        description="The combined model's features and weights (per standard deviation), or null before a fit.",
    )
    createdAt: AwareDatetime


class DomainList(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    domains: list[DomainListDomain]


class Health(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    status: Literal["ok"]


class Ready(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    ready: bool
    checks: dict[str, bool] = Field(
        ..., description="Named readiness checks; all true means ready."
    )


class AnnotationScheme(StrEnum):
    binary = "binary"
    turku = "turku"


class AnnotationDecision(StrEnum):
    accept = "accept"
    reject = "reject"
    label = "label"


class AnnotationMode(StrEnum):
    fast = "fast"
    balanced = "balanced"
    best = "best"


class Annotation(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: constr(pattern=r"^[0-9a-f]{32}$") = Field(
        ..., description="The same for the same (annotator, s1, s2)."
    )
    s1: str
    s2: str
    label: str
    s1_id: conint(ge=0, le=9007199254740991) | None = None
    s2_id: conint(ge=0, le=9007199254740991) | None = None
    annotator: str | None = None
    at: AwareDatetime
    scheme: AnnotationScheme
    decision: AnnotationDecision
    predicted: str | None = None
    probabilities: dict[str, confloat(ge=0.0, le=1.0)] | None = Field(
        None,
        description="Every label's probability; they sum to 1. A binary model with a label calibration (config.json's\n`paramine.label_calibration`) reports P(paraphrase) calibrated on validation pairs: among pairs given\nabout p there, about p were paraphrases (its model card has the reliability diagram). The label cut\n(`paramine.threshold`) is on this scale.\n",
    )
    model: str | None = Field(
        None, description="The model whose probabilities the annotator saw."
    )
    mode: AnnotationMode | None = None
    cosine: float | None = None
    annRank: conint(ge=1, le=9007199254740991) | None = None
    rerankRank: conint(ge=1, le=9007199254740991) | None = None
    source: AnnotationSource | None = None
    context: AnnotationContext | None = None


class AnnotationSummary(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    total: conint(ge=0, le=9007199254740991)
    byScheme: dict[str, conint(ge=-9007199254740991, le=9007199254740991)]
    byLabel: dict[str, conint(ge=-9007199254740991, le=9007199254740991)] = Field(
        ..., description="Counts by `scheme:label`."
    )
    byAnnotator: dict[str, conint(ge=-9007199254740991, le=9007199254740991)] = Field(
        ..., description="Counts by annotator ('' for records without one)."
    )
    recent: list[Annotation] = Field(..., description="The newest records first.")


class AnnotationReportAgreementKappaItem(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    __annotations__ = {
        "__pydantic_extra__": dict[str, Any],
    }
    a: str
    b: str
    pairs: conint(ge=-9007199254740991, le=9007199254740991)
    binary: float | None
    labels: float | None


class AnnotationReportAgreementAlpha(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    __annotations__ = {
        "__pydantic_extra__": dict[str, Any],
    }
    binary: float | None
    labels: float | None


class AnnotationReportAgreement(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    __annotations__ = {
        "__pydantic_extra__": dict[str, Any],
    }
    shared: conint(ge=-9007199254740991, le=9007199254740991) = Field(
        ..., description="Pairs labeled by two or more annotators."
    )
    kappa: list[AnnotationReportAgreementKappaItem]
    alpha: AnnotationReportAgreementAlpha


class CutStats(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    __annotations__ = {
        "__pydantic_extra__": dict[str, Any],
    }
    threshold: float
    precision: float
    recall: float
    f1: float
    selected: conint(ge=-9007199254740991, le=9007199254740991) = Field(
        ..., description="Pairs at or above the cut."
    )


class ClientConfigAuth(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    keys: bool = Field(..., description="The service has API keys (writes need one).")
    protectAll: bool = Field(..., description="Reads need a key too.")


class ClientConfigReranker(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    labels: list[str]


class ClientConfigAnnotationDefault(StrEnum):
    binary = "binary"
    turku = "turku"


class ClientConfigSearchDefaults(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    k: conint(ge=-9007199254740991, le=9007199254740991)
    rerank: bool
    nprobe: conint(ge=-9007199254740991, le=9007199254740991) | None


class ClientConfigSearch(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    defaults: ClientConfigSearchDefaults
    ivf: bool = Field(
        ...,
        description="The index has inverted lists (nprobe and recall apply); false for Flat.",
    )
    limits: dict[str, conint(ge=-9007199254740991, le=9007199254740991)]


class ClientConfigJobs(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    presets: dict[str, LexicalFilter] = Field(
        ..., description="The named filter presets and their filters."
    )


class AnnotationSchemeName(StrEnum):
    binary = "binary"
    turku = "turku"


class AnnotationSchemeModel(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    name: AnnotationSchemeName
    accept: str = Field(..., description="The label `accept` stores.")
    reject: str = Field(..., description="The label `reject` stores.")
    labels: list[str]
    positive: list[str] = Field(..., description="Labels counted as paraphrases.")


class SearchRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    k: conint(ge=1, le=100) | None = Field(
        10, description="Candidates returned per query."
    )
    candidates: conint(ge=1, le=500) | None = Field(
        None,
        description="ANN neighbours fetched per query (and reranked when reranking); raised to `k` when smaller.\nDefault `k`, or `max(20, k)` when reranking. When reranking, texts × candidates may not exceed\n2000 (400, field `candidates`): each pair is one cross-encoder pass.",
    )
    nprobe: conint(ge=1, le=65536) | None = Field(
        None,
        description="IVF lists visited per shard (default from the index manifest); wins over `recall`.",
    )
    recall: confloat(le=1.0, gt=0.0) | None = Field(
        None,
        description="Wanted recall@10 of the ANN search: the index’s cheapest operating point reaching it (its nprobe, efSearch and kFactor; see `GET /v1/index`). 400 (field `recall`) when the index has no measured operating points (`paramine tune`); exact (Flat) indexes ignore it.",
    )
    rerank: bool | None = Field(
        True, description="Rerank with the cross-encoder when one is loaded."
    )
    labels: list[constr(min_length=1)] | SearchRequestLabels | None = Field(
        None,
        description="Who labels and which labels to keep (needs a reranker): `{mode, keep}`, or the labels to keep alone (an array, as before).",
    )
    minProbability: confloat(ge=0.0, le=1.0) | None = Field(
        None,
        description="Keep only candidates whose predicted label has at least this probability.",
    )
    minCosine: confloat(ge=-1.0, le=1.0) | None = Field(
        None, description="Drop ANN candidates below this cosine similarity."
    )
    filter: LexicalFilter | None = Field({}, validate_default=True)
    excludeDuplicates: bool | None = Field(
        True,
        description="Drop candidates whose dedup key equals the query’s (the query itself, re-cased or re-punctuated).",
    )
    diff: bool | None = Field(
        None,
        description="Give each candidate `diff`, the word-level diff of the query and the candidate.",
    )
    domain: DomainRequest | None = None
    context: conint(ge=0, le=50) | None = Field(
        None,
        description="Give each candidate read from a document the sentences of that document around it (N on each side).",
    )
    text: constr(max_length=2000) | None = Field(
        None,
        description="A sentence; at most 2000 characters (UTF-16 code units) and not only whitespace.",
    )
    texts: list[constr(max_length=2000)] | None = Field(
        None, max_length=64, min_length=1
    )


class ClassifyRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    pairs: list[tuple[constr(max_length=2000), constr(max_length=2000)] | PairPair] = (
        Field(..., max_length=256, min_length=1)
    )
    labels: ClassifyRequestLabels | None = Field(
        None,
        description="Who labels the pairs (default: the service’s `--labels-mode`, `balanced`).",
    )


class AnnotationRequest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    s1: constr(min_length=1, max_length=4000)
    s2: constr(min_length=1, max_length=4000)
    s1_id: conint(ge=0, le=9007199254740991) | None = None
    s2_id: conint(ge=0, le=9007199254740991) | None = None
    scheme: AnnotationRequestScheme
    decision: AnnotationRequestDecision
    label: constr(min_length=1, max_length=16) | None = Field(
        None, description="Required with `decision: label`: a label of the scheme."
    )
    annotator: (
        constr(pattern=r"^[\p{L}\p{N} ._@-]+$", min_length=1, max_length=64) | None
    ) = Field(
        None,
        description="Who labels, when the service has no API keys (ignored when it has).",
    )
    predicted: constr(min_length=1, max_length=64) | None = Field(
        None, description="The cross-encoder’s label when the pair was judged."
    )
    probabilities: dict[constr(max_length=64), confloat(ge=0.0, le=1.0)] | None = None
    model: constr(min_length=1, max_length=200) | None = Field(
        None,
        description="The model that labeled the pair when it was judged (a result’s `labeledBy`): `probabilities` are on its scale.",
    )
    mode: AnnotationRequestMode | None = Field(
        None, description="The labels mode the pair was shown under."
    )
    cosine: confloat(ge=-1.001, le=1.001) | None = None
    annRank: conint(ge=1, le=9007199254740991) | None = None
    rerankRank: conint(ge=1, le=9007199254740991) | None = None
    source: AnnotationSource | None = None
    context: AnnotationContext | None = None


class PairDiff(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    a: list[DiffSpan]
    b: list[DiffSpan]


class ClassifyResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    labels: list[str] = Field(
        ..., description="The cross-encoder's labels in class-id order."
    )
    results: list[PairResult]
    timings: ClassifyResponseTimings


class MinedPairDomain(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    a: DomainSide
    b: DomainSide
    score: float | None = None


class MinedPair(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    seq: conint(ge=0, le=9007199254740991)
    a: PairSide
    b: PairSide
    cosine: float
    margin: float | None = None
    label: str | None = Field(
        None,
        description="The served label: the positive label when the labeling model's calibrated P(paraphrase) is at least its cut (config.json `paramine.threshold`), else the negative one; the arg-max for a model without a cut. It can differ from the label with the highest probability.",
    )
    probabilities: dict[str, confloat(ge=0.0, le=1.0)] | None = Field(
        None,
        description="Every label's probability; they sum to 1. A binary model with a label calibration (config.json's\n`paramine.label_calibration`) reports P(paraphrase) calibrated on validation pairs: among pairs given\nabout p there, about p were paraphrases (its model card has the reliability diagram). The label cut\n(`paramine.threshold`) is on this scale.\n",
    )
    labeledBy: str | None = Field(
        None, description="The model that labeled the pair (`rerank.mode`)."
    )
    lexical: LexicalMeasures
    diff: PairDiff | None = None
    span: MinedPairSpan | None = Field(
        None,
        description="A sub-sentence pair - the part of side `side` (character offsets [start, end) into its text) that paraphrases the other side, and its cosine to it.",
    )
    bertScore: float | None = None
    domain: MinedPairDomain | None = Field(
        None,
        description="With a domain - both sides' σ and weight (a = the query side) and the pair's score.",
    )


class ReviewResponsePair(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    seq: conint(ge=0, le=9007199254740991)
    a: PairSide
    b: PairSide
    cosine: float
    margin: confloat(ge=0.0) = Field(
        ..., description="|P(paraphrase) - the labeling model's cut|: 0 is a coin toss."
    )
    label: str | None = Field(
        None,
        description="The served label: the positive label when the labeling model's calibrated P(paraphrase) is at least its cut (config.json `paramine.threshold`), else the negative one; the arg-max for a model without a cut. It can differ from the label with the highest probability.",
    )
    probabilities: dict[str, confloat(ge=0.0, le=1.0)] | None = Field(
        None,
        description="Every label's probability; they sum to 1. A binary model with a label calibration (config.json's\n`paramine.label_calibration`) reports P(paraphrase) calibrated on validation pairs: among pairs given\nabout p there, about p were paraphrases (its model card has the reliability diagram). The label cut\n(`paramine.threshold`) is on this scale.\n",
    )
    labeledBy: str | None = Field(
        None, description="The model that labeled the pair (`rerank.mode`)."
    )
    lexical: LexicalMeasures
    diff: PairDiff | None = None
    span: ReviewResponsePairSpan | None = Field(
        None,
        description="A sub-sentence pair - the part of side `side` (character offsets [start, end) into its text) that paraphrases the other side, and its cosine to it.",
    )
    bertScore: float | None = None
    domain: ReviewResponsePairDomain | None = Field(
        None,
        description="With a domain - both sides' σ and weight (a = the query side) and the pair's score.",
    )
    cut: float


class ReviewResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    cuts: dict[str, float] = Field(
        ..., description="The label cut of each model that labels pairs here."
    )
    student: str | None = Field(
        None,
        description="The model that labels every pair in `fast` (the cascade’s student).",
    )
    pairs: list[ReviewResponsePair]


class IndexInfoUpdatesDrift(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    base: QuantizationFit
    added: QuantizationFit
    retrain: bool = Field(
        ...,
        description="True when the added sentences fit the build's quantizers clearly worse than its own.",
    )
    reason: str


class IndexInfoUpdates(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    added: conint(ge=0, le=9007199254740991) = Field(
        ...,
        description="Sentences added since the build (POST /v1/sentences), deleted ones included.",
    )
    deleted: conint(ge=0, le=9007199254740991) = Field(
        ...,
        description="Sentences deleted since the build (tombstones until compaction).",
    )
    seq: conint(ge=0, le=9007199254740991) = Field(
        ..., description="The next write's sequence number."
    )
    growing: conint(ge=0, le=9007199254740991) = Field(
        ...,
        description="Added sentences in the growing exact segment (not sealed yet).",
    )
    sealed: IndexInfoUpdatesSealed = Field(
        ...,
        description="Sealed segments of the build's kind (its trained quantizers, no retraining) and the sentences in them.",
    )
    drift: IndexInfoUpdatesDrift | None = Field(
        ...,
        description="How well the build's trained quantizers fit the sealed sentences against a sample of its own (null until a segment is sealed, or without vectors.f16).",
    )


class ManifestShard(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    file: constr(pattern=r"^shard-\d{3,}\.faiss$")
    count: conint(ge=0, le=9007199254740991)
    sha256: constr(pattern=r"^[0-9a-f]{64}$") | None = Field(
        None,
        description="A file's checksum in the manifest (sha256, or sampleSha256 over 64 evenly spaced 64 KiB blocks), checked when the index opens.",
    )
    bytes: conint(ge=0, le=9007199254740991) | None = None
    sampleSha256: constr(pattern=r"^[0-9a-f]{64}$") | None = Field(
        None,
        description="A file's checksum in the manifest (sha256, or sampleSha256 over 64 evenly spaced 64 KiB blocks), checked when the index opens.",
    )


class ManifestVectors(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    file: Literal["vectors.f16"]
    dtype: Literal["float16"]
    count: conint(ge=0, le=9007199254740991)
    dim: conint(ge=1, le=9007199254740991)
    sha256: constr(pattern=r"^[0-9a-f]{64}$") | None = Field(
        None,
        description="A file's checksum in the manifest (sha256, or sampleSha256 over 64 evenly spaced 64 KiB blocks), checked when the index opens.",
    )
    bytes: conint(ge=0, le=9007199254740991) | None = None
    sampleSha256: constr(pattern=r"^[0-9a-f]{64}$") | None = Field(
        None,
        description="A file's checksum in the manifest (sha256, or sampleSha256 over 64 evenly spaced 64 KiB blocks), checked when the index opens.",
    )


class Manifest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    format: Literal["paramine-index"]
    version: Literal[1]
    dim: conint(ge=1, le=9007199254740991)
    metric: ManifestMetric
    factory: constr(min_length=1) = Field(
        ..., description="FAISS index factory string."
    )
    model: ManifestModel
    ntotal: conint(ge=0, le=9007199254740991)
    shards: list[ManifestShard] = Field(..., min_length=1)
    search: ManifestSearch
    operatingPoints: list[OperatingPoint] | None = Field(
        None,
        description="Measured search settings (paramine tune), cheapest first; the Pareto front of recall and latency.",
    )
    tuning: dict[str, Any] | None = Field(
        None,
        description="How the operating points were measured (queries, k, target recall, threads, time).",
    )
    vectors: ManifestVectors | None = Field(
        None,
        description="The embeddings kept beside the index (mining jobs query with them instead of re-encoding).",
    )
    build: dict[str, Any] = Field(
        ...,
        description="How it was built (factory plan, training sample, corpus counters).",
    )
    faissVersion: str
    createdAt: AwareDatetime


class AnnotationReportBest(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    __annotations__ = {
        "__pydantic_extra__": dict[str, Any],
    }
    model: CutStats | None = None
    cosine: CutStats | None = None


class AnnotationReport(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    __annotations__ = {
        "__pydantic_extra__": dict[str, Any],
    }
    pairs: conint(ge=-9007199254740991, le=9007199254740991) = Field(
        ..., description="Distinct pairs with a majority judgement."
    )
    positives: conint(ge=-9007199254740991, le=9007199254740991)
    ties: conint(ge=-9007199254740991, le=9007199254740991)
    withProbability: conint(ge=-9007199254740991, le=9007199254740991) = Field(
        ...,
        description="Judged pairs whose annotation carries the model's probabilities.",
    )
    withCosine: conint(ge=-9007199254740991, le=9007199254740991)
    model: list[CutStats] = Field(
        ..., description="Cuts on P(paraphrase), 0.05 to 0.95."
    )
    cosine: list[CutStats] = Field(..., description="Cuts on the cosine, 0.30 to 0.98.")
    best: AnnotationReportBest
    agreement: AnnotationReportAgreement


class ClientConfigAnnotationSchemes(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    binary: AnnotationSchemeModel
    turku: AnnotationSchemeModel


class ClientConfigAnnotation(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    schemes: ClientConfigAnnotationSchemes
    default: ClientConfigAnnotationDefault


class ClientConfig(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    auth: ClientConfigAuth
    reranker: ClientConfigReranker | None
    annotation: ClientConfigAnnotation
    search: ClientConfigSearch
    jobs: ClientConfigJobs


class Candidate(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    id: conint(ge=0, le=9007199254740991)
    text: str
    cosine: float = Field(
        ...,
        description="Cosine similarity to the query (about -1 to 1; for an L2 index, 1 - d/2).",
    )
    annRank: conint(ge=1, le=9007199254740991) = Field(
        ...,
        description="1-based rank among the ANN candidates that passed the filters.",
    )
    rerankRank: conint(ge=1, le=9007199254740991) | None = Field(
        None,
        description="1-based rank after reranking; present when the cross-encoder ran.",
    )
    label: str | None = Field(
        None,
        description="The served label: the positive label when the labeling model's calibrated P(paraphrase) is at least its cut (config.json `paramine.threshold`), else the negative one; the arg-max for a model without a cut. It can differ from the label with the highest probability. Present when the cross-encoder ran.",
    )
    probabilities: dict[str, confloat(ge=0.0, le=1.0)] | None = Field(
        None,
        description="Every label's probability; they sum to 1. A binary model with a label calibration (config.json's\n`paramine.label_calibration`) reports P(paraphrase) calibrated on validation pairs: among pairs given\nabout p there, about p were paraphrases (its model card has the reliability diagram). The label cut\n(`paramine.threshold`) is on this scale.\n",
    )
    labeledBy: str | None = Field(
        None,
        description="The model that labeled the pair: the student cross-encoder, or the teacher where the cascade sent it there (`labels.mode`). In `balanced`, an unsure pair the overloaded teacher could not take keeps the student's label.",
    )
    lexical: LexicalMeasures
    bertScore: float | None = Field(
        None,
        description="BERTScore F1 with the query, when filter.bertScoreMin asked for it.",
    )
    domain: CandidateDomain | None = None
    meta: dict[str, Any] | None = Field(
        None, description="The corpus record's extra fields, as indexed."
    )
    diff: PairDiff | None = None
    context: DocumentContext | None = None


class IndexInfo(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    dir: str = Field(
        ..., description="The index directory as given to `paramine serve --index`."
    )
    manifest: Manifest
    sentences: conint(ge=0, le=9007199254740991) = Field(
        ..., description="Sentences in the store as built."
    )
    updates: IndexInfoUpdates = Field(..., description="Writes made while serving.")
    operatingPoints: list[OperatingPoint] | None = Field(
        None,
        description="The index's measured operating points, cheapest first (empty before `paramine tune`): what a\nsearch's or job's `recall` chooses from.\n",
    )


class QueryResult(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    query: str = Field(..., description="The query after normalization.")
    candidates: list[Candidate] = Field(
        ...,
        description="At most `k`, best first (by paraphrase probability when reranked, else by cosine).",
    )
    domain: QueryResultDomain | None = Field(
        None,
        description="With a domain - the query's σ and weight, and whether subsampling kept it.",
    )


class SearchResponse(BaseModel):
    model_config = ConfigDict(
        extra="allow",
    )
    results: list[QueryResult]
    order: SearchResponseOrder | None = Field(
        None,
        description="With rerank: how candidates are ordered. `probability` (by the cross-encoder's, or the calibrated,\nparaphrase probability); `cosine` when the model's config says reordering by it lowered top-1 on a\nvalidation set (`paramine.rerank_order`): the candidates keep the bi-encoder's order and still\ncarry the model's labels and probabilities.\n",
    )
    timings: SearchTimings


LexicalFilter.model_rebuild()
