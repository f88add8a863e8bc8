"""Threads: two threads post sends on one queue pair and another posts receives, while one
thread polls each completion queue; every work request completes once, with its bytes."""
import threading
import time

import rig.bnxt
from conftest import connected

CHUNK, COUNT = 4096, 48  # per sending thread


def test_threads_poll_while_others_post():
    a, b = connected(depth=16)
    senders = 2
    total = senders * COUNT
    source = rig.bnxt.Region.host(a.nic, total * CHUNK)
    for i in range(total):
        source.write(i * CHUNK, bytes([i % 251]) * CHUNK)
    destination = rig.bnxt.Region.host(b.nic, total * CHUNK)
    sent, received, failures = [], [], []
    stop = threading.Event()

    def post(post_one, ids):
        for i in ids:
            deadline = time.monotonic() + 10
            while not post_one(i):  # the queue is full: a poller frees it
                if time.monotonic() > deadline or stop.is_set():
                    failures.append(f"post {i} never fitted")
                    return
                time.sleep(0.0005)

    def poll(cq, into, expected):
        deadline = time.monotonic() + 20
        while len(into) < expected and time.monotonic() < deadline:
            into.extend(cq.wait(timeout=0.05, max=8))

    receiver = threading.Thread(target=post, args=(lambda i: b.qp.recv(destination, offset=i * CHUNK, bytes=CHUNK, id=i), range(total)))
    posters = [threading.Thread(target=post, args=(lambda i: a.qp.send(source, offset=i * CHUNK, bytes=CHUNK, id=i), range(k, total, senders)))
               for k in range(senders)]
    pollers = [threading.Thread(target=poll, args=(a.cq, sent, total)), threading.Thread(target=poll, args=(b.cq, received, total))]
    for t in pollers + [receiver] + posters:
        t.start()
    for t in [receiver] + posters + pollers:
        t.join(timeout=30)
    stop.set()
    assert not failures
    assert sorted(c.id for c in sent) == list(range(total))
    assert sorted(c.id for c in received) == list(range(total))
    assert all(c.ok and c.bytes == CHUNK for c in sent + received)
    # Receives complete in posting order, each with the next message the wire carried; the
    # messages' patterns are the sent ones, each once.
    patterns = sorted(destination.read(i * CHUNK, CHUNK) for i in range(total))
    assert patterns == sorted(bytes([i % 251]) * CHUNK for i in range(total))
