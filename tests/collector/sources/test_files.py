"""Replay inputs: every readable record of a truncated or corrupt compressed file is kept (gzip,
bzip2, zstd), alone or among several inputs; a byte-order mark costs nothing; compression is
told by content, so a compressed log on stdin reads as well as a file."""

from __future__ import annotations

import bz2
import gzip
import json
import subprocess
import sys
import zlib

import pytest

from collector.sources.files import InputError, open_inputs, read_batches

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

SEARCHES = 12_000  # > 1 MiB of records: more than one read batch before the break


def _searches(ubi, n: int = SEARCHES, prefix: str = "s") -> list[bytes]:
    return [ubi.query(f"{prefix}{i}", f"query {i % 97}", i * 0.5, client=f"{prefix}{i % 300}")
            for i in range(n)]


def _readable_prefix(kind: str, cut: bytes) -> bytes:
    """What an independent decoder gets out of the cut stream (the reference)."""
    if kind == "gzip":
        return zlib.decompressobj(wbits=31).decompress(cut)
    if kind == "bzip2":
        return bz2.BZ2Decompressor().decompress(cut)
    return zstd.ZstdDecompressor().decompress(cut)


COMPRESS = {"gzip": gzip.compress, "bzip2": bz2.compress, "zstd": zstd.compress}


def _read_all(paths: list[str]) -> tuple[list[bytes], InputError | None]:
    records: list[bytes] = []
    try:
        for batch in read_batches(open_inputs(paths)):
            records += batch
    except InputError as error:
        return records, error
    return records, None


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_a_truncated_compressed_input_gives_every_complete_line_before_the_break(
        kind, ubi, tmp_path):
    lines = _searches(ubi)
    packed = COMPRESS[kind](b"\n".join(lines) + b"\n")
    cut = packed[: len(packed) * 2 // 3]
    path = tmp_path / f"cut.{kind}"  # no telling suffix: the content says what it is
    path.write_bytes(cut)
    readable = _readable_prefix(kind, cut)
    complete = readable.count(b"\n")
    assert 0 < complete < len(lines)
    records, error = _read_all([str(path)])
    assert records == lines[:complete]
    assert error is not None and str(error).startswith(f"input {path}: ")
    assert f"after {complete} complete records" in str(error)


def test_every_member_or_frame_of_a_concatenated_file_is_read(ubi, tmp_path):
    """`cat a.gz b.gz`, `zstd` of appended logs, pzstd: several members or frames, one log."""
    lines = _searches(ubi, 2000)
    half = len(lines) // 2
    for kind, compress in COMPRESS.items():
        path = tmp_path / f"joined.{kind}"
        path.write_bytes(compress(b"\n".join(lines[:half]) + b"\n")
                         + compress(b"\n".join(lines[half:]) + b"\n"))
        assert _read_all([str(path)]) == (lines, None), kind


def test_a_corrupt_gzip_keeps_what_came_before_the_damage(ubi, tmp_path):
    lines = _searches(ubi)
    packed = bytearray(gzip.compress(b"\n".join(lines) + b"\n"))
    packed[len(packed) // 2] ^= 0xFF  # a flipped byte in the deflate stream
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(bytes(packed))
    records, error = _read_all([str(path)])
    assert error is not None and str(path) in str(error)
    intact = next(i for i, (a, b) in enumerate(zip(records, lines, strict=False)) if a != b)
    assert intact > len(lines) // 3  # every line before the damage is there, unchanged


def test_a_truncated_input_among_several_loses_nothing_of_the_others(ubi, tmp_path):
    whole = _searches(ubi, 3000, "w")
    cut_lines = _searches(ubi, SEARCHES, "c")
    packed = gzip.compress(b"\n".join(cut_lines) + b"\n")
    cut = packed[: len(packed) // 2]
    complete = _readable_prefix("gzip", cut).count(b"\n")
    (tmp_path / "whole.jsonl").write_bytes(b"\n".join(whole) + b"\n")
    (tmp_path / "cut.jsonl.gz").write_bytes(cut)
    records, error = _read_all([str(tmp_path / "whole.jsonl"), str(tmp_path / "cut.jsonl.gz")])
    assert sorted(records) == sorted(whole + cut_lines[:complete])
    assert error is not None and "cut.jsonl.gz" in str(error)


def test_the_replay_of_a_truncated_log_counts_every_complete_search(ubi, tmp_path):
    lines = _searches(ubi)
    packed = bz2.compress(b"\n".join(lines) + b"\n")
    cut = packed[: len(packed) * 3 // 4]
    complete = _readable_prefix("bzip2", cut).count(b"\n")
    path = tmp_path / "ubi.jsonl.bz2"
    path.write_bytes(cut)
    done = subprocess.run([sys.executable, "-m", "searchpulse", "replay", str(path), "--json",
                           "--no-progress"], capture_output=True, text=True, check=False)
    assert done.returncode == 3, done.stderr
    assert f"input {path}: " in done.stderr
    summary = json.loads(done.stdout)
    assert summary["searches"] == summary["records"] == complete
    assert summary["input_error"].startswith(f"input {path}: ")


def test_a_byte_order_mark_costs_no_record(ubi, tmp_path):
    lines = [ubi.query("q1", "tent", 0), ubi.click("q1", 2), ubi.query("q2", "lamp", 5)]
    marked = tmp_path / "bom.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines) + b"\r\n")
    records, error = _read_all([str(marked)])
    assert (records, error) == (lines, None)
    bare = tmp_path / "bare.jsonl"  # a BOM and nothing else is an empty input
    bare.write_bytes(b"\xef\xbb\xbf")
    assert _read_all([str(bare)]) == ([], None)


def test_compression_is_told_by_content_on_stdin_too(ubi, tmp_path):
    lines = _searches(ubi, 500)
    text = b"\n".join(lines) + b"\n"
    answers = []
    for data in (text, gzip.compress(text), bz2.compress(text), zstd.compress(text)):
        done = subprocess.run([sys.executable, "-m", "searchpulse", "replay", "-", "--json"],
                              input=data, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
        answers.append(json.loads(done.stdout))
    assert all(answer == answers[0] for answer in answers)
    assert answers[0]["searches"] == 500


def test_records_are_lines_without_their_surrounding_whitespace(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b'  {"a": 1}  \r\n\n\t\n{"b": 2}\r{"c": 3}\n{"d": 4}')
    assert _read_all([str(path)]) == ([b'{"a": 1}', b'{"b": 2}', b'{"c": 3}', b'{"d": 4}'],
                                      None)
