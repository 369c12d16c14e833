"""``http_bounds.EventCount``: the bytes of the event in progress, whatever the line ends and however
the stream is cut into chunks — checked against a reference that reads the whole stream at once."""

from __future__ import annotations

import random

import pytest

STREAMS = [
    b"data: one\n\ndata: two\n\n",
    b"data: one\r\n\r\ndata: two\r\n\r\n",
    b"data: one\r\rdata: two\r\r: comment\r\rdata: three",
    b"event: message\ndata: a\r\ndata: b\r\n\r\nid: 7\ndata: c\n\n\n\ndata: unfinished",
    b"\n\ndata: after blank lines\n\r\n",
    b"data: \r\n\r\r\n\n\r\rdata: x\r",
]


def reference(prefix: bytes) -> int:
    """The bytes since the last blank line of ``prefix``, line ends folded to one byte each."""
    text = prefix.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    last = text.rfind(b"\n\n")
    if last >= 0:
        return len(text) - (last + 2)
    return len(text) - 1 if text.startswith(b"\n") else len(text)


@pytest.mark.parametrize("stream", STREAMS)
def test_event_count_matches_the_whole_stream_reading_for_every_split(stream: bytes) -> None:
    from reyn_tools_mcp.http_bounds import EventCount

    rng = random.Random(stream)
    n = len(stream)
    splits = [[i, n] for i in range(1, n)]  # every two-chunk split
    splits.append(list(range(1, n + 1)))  # byte by byte
    splits += [[*sorted(rng.sample(range(1, n), 4)), n] for _ in range(50)]
    # empty chunks anywhere (a transport may yield one): they end nothing, a pending CR included
    splits += [sorted([*rng.sample(range(1, n), 3), *rng.sample(range(1, n), 3), n]) for _ in range(50)]
    splits += [sorted([i, i, n]) for i in range(1, n)]
    for ends in splits:
        count, start = EventCount(), 0
        for end in ends:
            # a CR ending a chunk may be the first half of a CRLF: counted once, either way
            count.add(stream[start:end])
            assert count.size == reference(stream[:end]), (ends, end)
            start = end


def test_an_event_ended_inside_one_chunk_is_measured_whole() -> None:
    from reyn_tools_mcp.http_bounds import EventCount

    count = EventCount()
    assert count.add(b"data: " + b"x" * 994 + b"\r\n\r\ndata: short\n\n: c\n") == 1001
    assert count.size == len(b": c\n")
    assert count.add(b"data: tail\r\n\r\n") == len(b": c\ndata: tail\n")
    middle = b"data: " + b"x" * 2000 + b"\n"
    assert count.add(b"data: a\n\n" + middle + b"\ndata: b\n\n") == len(middle)


def test_an_empty_chunk_keeps_a_pending_cr() -> None:
    from reyn_tools_mcp.http_bounds import EventCount

    count = EventCount()
    sizes = [count.add(c) for c in [b"aaaa\r", b"", b"\naaaa\r", b"", b"\naaaa"]]
    assert sizes == [5, 5, 10, 10, 14]


def test_many_small_events_never_add_up() -> None:
    from reyn_tools_mcp.http_bounds import EventCount

    count = EventCount()
    sizes = [count.add(b"data: " + b"y" * 100 + b"\r\n\r\n") for _ in range(10_000)]
    assert max(sizes) == len(b"data: " + b"y" * 100 + b"\n") and count.size == 0


def test_one_endless_event_grows_with_every_chunk() -> None:
    from reyn_tools_mcp.http_bounds import EventCount

    count = EventCount()
    count.add(b"data: start")
    for _ in range(100):
        count.add(b"z" * 1000 + b"\r\ndata: ")
    assert count.size == len(b"data: start") + 100 * len(b"z" * 1000 + b"\ndata: ")
