"""mgpulab_agent.links: request lines in, framed messages out, and a kernel's stream sent at most
LINK_HIGH_WATER ahead of what the socket has taken, over real sockets and a real selector."""
import selectors

import pytest

from agent_parts import NONCE, kernel, link_pair
from mgpulab_agent.links import LINK_HIGH_WATER, Link, Links


class Events:
    def __init__(self):
        self.lines = []
        self.closed = []

    def on_line(self, link, line):
        self.lines.append(line)

    def on_link_closed(self, link):
        self.closed.append(link)


@pytest.fixture
def setup():
    sel = selectors.DefaultSelector()
    events = Events()
    links = Links(sel, {}, events)
    yield sel, links, events
    sel.close()


def _adopt(links, link):
    links.open.append(link)
    return link


def test_lines_are_split_across_reads_and_blank_lines_skipped(setup):
    sel, links, events = setup
    link, peer = link_pair(sel)
    _adopt(links, link)
    peer.sock.sendall(b"first\n\n  second")
    links.on_event(link, selectors.EVENT_READ)
    assert events.lines == [b"first"]
    peer.sock.sendall(b" half\nthird\n")
    links.on_event(link, selectors.EVENT_READ)
    assert events.lines == [b"first", b"second half", b"third"]


def test_a_peer_that_hangs_up_closes_the_link_once_and_says_so(setup):
    sel, links, events = setup
    link, peer = link_pair(sel)
    _adopt(links, link)
    peer.sock.close()
    links.on_event(link, selectors.EVENT_READ)
    links.close(link)
    assert link.closed and events.closed == [link] and links.open == []


def test_nothing_is_sent_to_a_link_before_it_is_named_and_frames_carry_its_nonce(setup):
    sel, links, _ = setup
    unnamed, unnamed_peer = link_pair(sel, named=False)
    named, peer = link_pair(sel)
    _adopt(links, unnamed)
    _adopt(links, named)
    links.broadcast(lambda link: {"type": "agent_log", "to": "named" if link is named else "unnamed"})
    assert peer.frames() == [{"type": "agent_log", "to": "named"}]
    assert unnamed_peer.frames() == []
    assert named.nonce == NONCE


def test_a_kernel_stream_waits_at_high_water_and_resumes_in_order_as_the_socket_drains(setup):
    sel, links, _ = setup
    link, peer = link_pair(sel)
    _adopt(links, link)
    streaming = kernel("k1")
    links.kernels["k1"] = streaming
    streaming.buffer.limit = 1 << 24  # the whole stream stays buffered: only the link's pace is tested
    for i in range(400):
        streaming.buffer.append({"type": "kernel_console", "kernel": "k1", "text": f"{i}:" + "x" * 20000, "stream": "stdout", "seq": 0})
        streaming.buffer.sent_up_to = streaming.buffer.last_seq  # one message each, not coalesced
    links.resume(link, streaming, 0)
    # The peer has read nothing: the link is held near its high water, the rest stays buffered.
    assert streaming.cursor < streaming.buffer.last_seq
    assert len(link.wbuf) < LINK_HIGH_WATER + 30000
    seen = []
    for _ in range(1000):
        seen += [int(m["text"].split(":")[0]) for m in peer.frames()]
        if len(seen) == 400:
            break
        links.on_event(link, selectors.EVENT_WRITE)
    assert seen == list(range(400))


def test_a_resume_after_what_the_buffer_dropped_gets_a_gap_first(setup):
    sel, links, _ = setup
    link, peer = link_pair(sel)
    _adopt(links, link)
    streaming = kernel("k1")
    streaming.buffer.limit = 1000
    for i in range(5):
        streaming.buffer.append({"type": "kernel_console", "kernel": "k1", "text": str(i) * 600, "stream": "stdout", "seq": 0})
        streaming.buffer.sent_up_to = streaming.buffer.last_seq
    links.resume(link, streaming, 0)
    frames = peer.frames()
    assert frames[0]["type"] == "kernel_gap" and frames[0]["afterSeq"] == 0 and frames[0]["resumedFrom"] == 5, frames[0]
    assert [f["seq"] for f in frames[1:]] == [5]


def test_last_words_send_what_is_buffered_and_close_every_link(setup):
    sel, links, _ = setup
    link, peer = link_pair(sel)
    _adopt(links, link)
    link.wbuf += b"\x1b]mgl;" + NONCE.encode() + b';{"type": "bye"}\x07'
    links.last_words(1.0)
    assert peer.frames() == [{"type": "bye"}]
    assert link.sock.fileno() == -1


def test_a_link_is_a_plain_record():
    import socket
    a, b = socket.socketpair()
    link = Link(a)
    assert (link.nonce, link.closed, bytes(link.rbuf), bytes(link.wbuf)) == (None, False, b"", b"")
    a.close()
    b.close()
