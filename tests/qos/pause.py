#!/usr/bin/env python3
"""Pauses an nbdkit pause filter (its control socket: 'p' pauses, 'r' resumes; each is
acknowledged in upper case) for SECONDS, and writes how long requests were held, in ns,
to OUT: from the pause's acknowledgement to the resume's (tests/qos.rs, the stall)."""
import socket
import sys
import time

sock_path, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
s.sendall(b"p")
assert s.recv(1) == b"P"
paused = time.monotonic_ns()
time.sleep(seconds)
s.sendall(b"r")
assert s.recv(1) == b"R"
resumed = time.monotonic_ns()
with open(out, "w") as f:
    f.write(f"{resumed - paused}\n")
