#!/usr/bin/env python3
"""How many thread-document writes per second the disk under a directory
allows: each thread overwrites its own 4 KiB file and flushes it
(fdatasync), then renames it and flushes the directory (fsync), as the
state store does for every write. Also the same without the directory
flush, and a bare fdatasync. Prints one table; needs nothing but Python.

usage: disk-writes.py [DIR] [SECONDS PER CELL]   (DIR defaults to $TMPDIR or /tmp)
"""
import os
import sys
import tempfile
import threading
import time

THREADS = [1, 2, 4, 8, 16]
BLOCK = 4096


def writer(directory, dir_fd, index, mode, seconds, counts):
    names = [os.path.join(directory, f"{mode}-{index}-{side}") for side in "ab"]
    fd = os.open(names[0], os.O_CREAT | os.O_WRONLY, 0o600)
    os.pwrite(fd, b" " * BLOCK, 0)
    os.fsync(fd)
    side, done = 0, 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        os.pwrite(fd, b"x" * BLOCK, 0)
        os.fdatasync(fd)
        if mode != "fdatasync":
            os.rename(names[side], names[1 - side])
            side = 1 - side
        if mode == "write+rename+dir":
            os.fsync(dir_fd)
        done += 1
    os.close(fd)
    counts[index] = done


def rate(directory, mode, threads, seconds):
    dir_fd = os.open(directory, os.O_RDONLY)
    counts = {}
    workers = [
        threading.Thread(target=writer, args=(directory, dir_fd, i, mode, seconds, counts))
        for i in range(threads)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    os.close(dir_fd)
    return sum(counts.values()) / seconds


def main():
    parent = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TMPDIR", "/tmp")
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    with tempfile.TemporaryDirectory(prefix="disk-writes-", dir=parent) as directory:
        print(f"| writes/s (ms each), {parent} | " + " | ".join(f"{n} thread{'s' * (n > 1)}" for n in THREADS) + " |")
        print("|---" * (len(THREADS) + 1) + "|")
        for mode in ["write+rename+dir", "write+rename", "fdatasync"]:
            cells = []
            for n in THREADS:
                per_second = rate(directory, mode, n, seconds)
                each = f"{n / per_second * 1e3:.2f}" if per_second else "-"
                cells.append(f"{per_second:,.0f} ({each})")
            print(f"| {mode} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
