"""The CEL values of a segment (`policy/facts.py`): every record field, tuples as lists and maps.

`segment_value` is built from the record's fields in bulk; these tests hold it to the plain
definition, one field at a time, on the golden corpus and on commands with every kind of field set.
"""

from __future__ import annotations

from pathlib import Path

from rtk_policy.util import record
from rtk_policy.policy import facts
from rtk_policy.policy.facts import VARIABLES, segment_value
from rtk_policy.shell import parse
from rtk_policy.shell.model import Segment

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = {
    "pipeline_index": "index",
    "pipeline_size": "size",
    "pipeline_before": "before",
    "pipeline_after": "after",
    "pipe_stderr": "stderr",
}
RICH = [
    "FOO=1 BAR='two words' sudo -u bob env A=b timeout 5 cat < in.txt > out.txt 2>&1"
    " | grep -v x |& tee y",
    "a | b | c && ! d; e &",
    "bash -c 'rm -rf /tmp/x' && $(echo ls) /",
    "cat <<EOF\nbody\nEOF",
]


def _expected(segment: Segment) -> dict:
    """The map by definition: each field in declaration order, the pipeline fields last."""
    data: dict = {}
    pipeline: dict = {}
    for field in record.fields(Segment):
        value = getattr(segment, field.name)
        if field.name == "env":
            value = dict(value)
        elif field.name == "redirects":
            value = [
                {"op": r.op, "fd": r.fd, "target": r.target, "is_file": r.is_file} for r in value
            ]
        elif type(value) is tuple:
            value = list(value)
        if field.name in PIPELINE:
            pipeline[PIPELINE[field.name]] = value
        else:
            data[field.name] = value
    data["pipeline"] = pipeline
    return data


def _segments() -> list[Segment]:
    path = ROOT / "tests" / "corpus" / "commands.txt"
    texts = [t for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]
    texts = [t for t in texts if not t.startswith("#")] + RICH
    return [segment for text in texts for segment in parse(text).segments]


def test_a_segment_map_holds_every_field_by_its_definition():
    """Corpus and rich segments: the same keys, order, values and value types as the definition,
    from the tables of field names (`_whole_segment`) and from the generated builder."""
    built = facts._built_segment()
    assert built is not None and built is not facts._whole_segment
    for build in (facts._whole_segment, built):
        _holds_every_field(build)


def test_segment_value_takes_the_generated_builder_once_warm(monkeypatch):
    """The first `BUILD_AFTER` whole maps come from the tables (a cold hook compiles nothing), the
    later ones from the generated builder; a limited map never uses it."""
    monkeypatch.setattr(facts, "_until_built", 2)
    monkeypatch.setattr(facts, "_build_whole", facts._whole_segment)
    segment = parse("FOO=1 git -C x status > out").segments[0]
    first = segment_value(segment)
    assert facts._build_whole is facts._whole_segment
    segment_value(segment, frozenset({"program"}))
    assert facts._build_whole is facts._whole_segment
    assert segment_value(segment) == first and facts._build_whole.__name__ == "build"
    assert segment_value(segment) == first == _expected(segment)


def _holds_every_field(build) -> None:
    segments = _segments()
    assert len(segments) > 1000
    seen_redirects = seen_env = 0
    for segment in segments:
        expected, found = _expected(segment), build(segment)
        assert found == expected, segment.text
        assert list(found) == list(expected)  # the same keys in the same order
        assert list(found["pipeline"]) == list(expected["pipeline"])
        for key, value in found.items():
            assert type(value) is type(expected[key]), key
        seen_redirects += bool(found["redirects"])
        seen_env += bool(found["env"])
    assert seen_redirects > 20 and seen_env > 5  # the converted fields were exercised


def test_the_map_matches_the_declared_schema():
    """The map's keys are the schema's `segment` fields, and its sub-map the `pipeline` fields."""
    found = segment_value(parse("a | b").segments[0])
    schema = VARIABLES["segment"][1]
    assert set(found) == set(schema)
    assert set(found["pipeline"]) == set(schema["pipeline"][1])


def test_a_limited_map_holds_only_the_fields_read():
    """With `fields`, the map holds those fields alone, with the full map's values."""
    segment = parse("FOO=1 git -C x status > out").segments[0]
    full = segment_value(segment)
    limited = segment_value(segment, frozenset({"program", "env", "redirects", "pipeline"}))
    assert limited == {key: full[key] for key in ("program", "env", "redirects", "pipeline")}
